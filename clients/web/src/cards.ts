/**
 * Cards as the page shows them. Each colour has its own shape as well as its hue (red circle,
 * blue square, orange triangle, green diamond), so no card is told apart by colour alone; wild
 * cards carry a star, currency cards a coin sign. Codes are the API's: `R5`, `R#`, `W5`, `W#`, `$3`.
 */
import { h } from "./dom";
import { t } from "./i18n";

export const COLORS = ["R", "B", "O", "G"] as const;
export type Color = (typeof COLORS)[number];
const SHAPES: Record<Color, string> = { R: "●", B: "■", O: "▲", G: "◆" };

export interface CardInfo {
  code: string;
  color: Color | null; // null: any colour (W1-W9, W#) or a currency card
  number: number | null; // null: any number (R#..., W#) or a currency card
  currency: number | null;
  wild: boolean;
}

export function parseCard(code: string): CardInfo {
  const head = code.charAt(0);
  const tail = code.slice(1);
  if (head === "$") {
    return { code, color: null, number: null, currency: Number(tail), wild: false };
  }
  const color = (COLORS as readonly string[]).includes(head) ? (head as Color) : null;
  const number = tail === "#" ? null : Number(tail);
  return { code, color, number, currency: null, wild: head === "W" || tail === "#" };
}

export function cardName(code: string): string {
  const c = parseCard(code);
  if (c.currency !== null) return t("card.currency", { n: c.currency });
  if (c.color && c.number !== null) return t("card.number", { color: t(`color.${c.color}`), n: c.number });
  if (c.color) return t("card.colorWild", { color: t(`color.${c.color}`) });
  if (c.number !== null) return t("card.numberWild", { n: c.number });
  return t("card.fullWild");
}

/** One card: its value, its colour's shape and a readable name for screen readers. */
export function cardEl(code: string, extra: { class?: string; label?: string; mark?: string } = {}): HTMLElement {
  const c = parseCard(code);
  const kind = c.currency !== null ? "cur" : c.color ?? "W";
  const value = c.currency !== null ? `$${c.currency}` : c.number === null ? "#" : String(c.number);
  const mark = c.currency !== null ? "¤" : c.color ? SHAPES[c.color] : "★";
  return h(
    "span",
    {
      class: `card k-${kind}${c.wild ? " wild" : ""}${extra.class ? " " + extra.class : ""}`,
      "data-card": code,
      role: "img",
      "aria-label": extra.label ?? cardName(code),
      title: extra.label ?? cardName(code),
    },
    h("b", null, value),
    h("i", { "aria-hidden": "true" }, extra.mark ?? (c.wild && c.color ? `${SHAPES[c.color]}★` : mark)),
  );
}

export function cardRow(codes: readonly string[], empty: string): HTMLElement {
  return h("span", { class: "cards" }, codes.length ? codes.map((c) => cardEl(c)) : h("span", { class: "muted" }, empty));
}

/**
 * The tableau's two running totals (rules 3.1): `numbers` (the number cards' sum minus the
 * currency) and `currency`; with the number cards' own sum and how many they are.
 */
export function tableauTotals(codes: readonly string[]): { numbers: number; currency: number; numberSum: number; numberCards: number } {
  let numberSum = 0;
  let numberCards = 0;
  let currency = 0;
  for (const code of codes) {
    const c = parseCard(code);
    if (c.currency !== null) currency += c.currency;
    else if (c.number !== null) {
      numberSum += c.number;
      numberCards += 1;
    }
  }
  return { numbers: numberSum - currency, currency, numberSum, numberCards };
}

/**
 * A scored run with the number each card stands for: the run is consecutive, so the first
 * card with a definite number fixes where it starts.
 */
export function runNumbers(run: readonly string[]): number[] {
  const index = run.findIndex((code) => parseCard(code).number !== null);
  const first = index < 0 ? 1 : (parseCard(run[index] ?? "").number ?? 1) - index;
  return run.map((_, i) => first + i);
}
