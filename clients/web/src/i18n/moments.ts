/**
 * A moment (an ISO 8601 timestamp) as a language writes it ("December 2, 2026 at 10:01 AM",
 * "2 de diciembre de 2026, 10:01"), in the local time zone; `time`: with the time of day. A
 * browser whose `Intl` has no data for the language (Chromium has none for Armenian: it would
 * write English) gets the day as digits, day.month.year and a 24-hour time, as Armenian writes
 * it short. Needs nothing but `Intl`: the page and the service worker both write dates with it.
 */
export function moment(language: string, iso: string, time = true): string {
  const at = new Date(iso);
  if (!Intl.DateTimeFormat.supportedLocalesOf(language).length) {
    const two = (n: number) => String(n).padStart(2, "0");
    const day = `${two(at.getDate())}.${two(at.getMonth() + 1)}.${at.getFullYear()}`;
    return time ? `${day}, ${two(at.getHours())}:${two(at.getMinutes())}` : day;
  }
  const options: Intl.DateTimeFormatOptions = time ? { dateStyle: "long", timeStyle: "short" } : { dateStyle: "long" };
  return new Intl.DateTimeFormat(language, options).format(at);
}
