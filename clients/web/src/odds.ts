/** The odds panel: the service's exact odds of the next card, for the seat whose turn it is. */
import type { Odds } from "@ten/client";
import { h } from "./dom";
import { num, t, tn } from "./i18n";

function percent(p: number): string {
  return `${num(p * 100, 1)}%`;
}

function points(v: number): string {
  return `${v >= 0 ? "+" : ""}${num(v, 2)}`;
}

export function oddsEl(odds: Odds["odds"]): HTMLElement | null {
  if (!odds) return null;
  const { stop, draw, advantage } = odds.value;
  return h(
    "section",
    { class: "panel odds", "data-testid": "odds", "aria-label": t("odds.heading") },
    h("h2", null, t("odds.heading")),
    h(
      "p",
      null,
      h("strong", null, t("odds.bust", { p: percent(odds.bust.total) })),
      " (",
      t("odds.split", { numbers: percent(odds.bust.numbers), currency: percent(odds.bust.currency) }),
      ")",
    ),
    h("p", null, t("odds.wild", { p: percent(odds.wild) })),
    stop === null ? null : h("p", null, tn("odds.stop", stop, { v: points(stop) }, 2)),
    draw === null ? null : h("p", null, tn("odds.draw", draw, { v: points(draw) }, 2)),
    advantage === null ? null : h("p", null, h("strong", null, t(advantage > 0 ? "odds.better.draw" : "odds.better.stop"))),
    h("p", { class: "small muted" }, t("odds.help")),
  );
}
