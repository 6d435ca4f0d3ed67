/** The client's languages: English built in, the rulebook's four loaded when chosen. */
import { en, type MessageKey, type Messages } from "./en";
import { moment } from "./moments";

export const LANGUAGES = [
  { code: "en", name: "English" },
  { code: "id", name: "Bahasa Indonesia" },
  { code: "hy", name: "Հայերեն" },
  { code: "es", name: "Español" },
  { code: "gu", name: "ગુજરાતી" },
] as const;
export type Language = (typeof LANGUAGES)[number]["code"];

const loaders: Record<Exclude<Language, "en">, () => Promise<Messages>> = {
  id: async () => (await import("./id")).id,
  hy: async () => (await import("./hy")).hy,
  es: async () => (await import("./es")).es,
  gu: async () => (await import("./gu")).gu,
};

let current: Language = "en";
let messages: Messages = en;

export function isLanguage(code: string | null | undefined): code is Language {
  return LANGUAGES.some((l) => l.code === code);
}

/** The language to start in: the saved choice, else the browser's first supported one. */
export function initialLanguage(saved: string | null): Language {
  if (isLanguage(saved)) return saved;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split("-")[0];
    if (isLanguage(base)) return base;
  }
  return "en";
}

export async function setLanguage(code: Language): Promise<void> {
  messages = code === "en" ? en : await loaders[code]();
  current = code;
  document.documentElement.lang = code;
}

export function language(): Language {
  return current;
}

/** The text of `key` in the current language, `{name}` filled from `params`. */
export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
  const template = messages[key] ?? en[key];
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/**
 * What CLDR says of a language the browser's `Intl` may have no data for (Chromium has none
 * for Armenian, and would write English's "17.1", "1,234", "a, b"): its decimal sign, its
 * group separator (from five digits on) and what comes before a list's last item.
 */
const OWN: Partial<Record<Language, { decimal: string; group: string; last: string }>> = {
  hy: { decimal: ",", group: "\u00a0", last: " և " },
};

/** `OWN`'s entry for the current language when the browser's `Intl` service lacks it. */
function own(supported: (locale: string) => string[]): (typeof OWN)[Language] {
  return supported(current).length ? undefined : OWN[current];
}

/** `n` in the current language's digits and grouping, as `options` say. */
function formatted(n: number, options: Intl.NumberFormatOptions): string {
  const signs = own((l) => Intl.NumberFormat.supportedLocalesOf(l));
  if (signs) {
    const english = { ...options, useGrouping: "min2" } as unknown as Intl.NumberFormatOptions;
    return n.toLocaleString("en", english).replace(/[.,]/g, (sign) => (sign === "." ? signs.decimal : signs.group));
  }
  return n.toLocaleString(current, options);
}

/** A number in the current language's digits and grouping. */
export function num(n: number, digits = 0): string {
  return formatted(n, { maximumFractionDigits: digits });
}

/** A difference with its sign and exactly `digits` decimals, in the current language's
 * digits: "+3.5", "−1.0" (a minus sign, not a hyphen), "0.0" (no sign once rounded to 0). */
export function signed(n: number, digits = 1): string {
  const text = formatted(n, { minimumFractionDigits: digits, maximumFractionDigits: digits, signDisplay: "exceptZero" });
  return text.replace("-", "\u2212");
}

/** The keys that come in plural forms: `{key}.one`, `{key}.other` (and any other category a language needs). */
export type PluralKey = { [K in MessageKey]: K extends `${infer Base}.other` ? Base : never }[MessageKey];

/**
 * The form of `key` for `count` in the current language (its `Intl.PluralRules` category,
 * `other` when the language has no text for that category), `{n}` the count in the language's
 * digits; `digits`: the count's shown fraction digits, which decide the form too ("1.5 points").
 */
export function tn(key: PluralKey, count: number, params: Record<string, string | number> = {}, digits = 0): string {
  const category = new Intl.PluralRules(current, { maximumFractionDigits: digits }).select(count);
  const form = `${key}.${category}`;
  const chosen = (form in messages ? form : `${key}.other`) as MessageKey;
  return t(chosen, { n: num(count, digits), ...params });
}

/** A moment (an ISO 8601 timestamp) as the current language writes it (`moments.ts`): the
 * page's language, never the browser's locale (a Spanish page on an English browser writes
 * Spanish dates); `time`: with the time of day. */
export function when(iso: string, time = true): string {
  return moment(current, iso, time);
}

/** Items joined as the current language lists them ("2 currency tokens, 1 bust token"). */
export function list(items: readonly string[]): string {
  const words = own((l) => Intl.ListFormat.supportedLocalesOf(l));
  if (words && items.length > 1) return `${items.slice(0, -1).join(", ")}${words.last}${items[items.length - 1]}`;
  return new Intl.ListFormat(current, { type: "unit", style: "short" }).format(items);
}
