/** The rules in short, in the page's language, with the deck as the service deals it. */
import { api, describeError } from "../api";
import { cardEl } from "../cards";
import { h, show, shown } from "../dom";
import { t, tn } from "../i18n";

// docs/rules.md as a page of its own, served beside the client (clients/web/docs/render.py)
const FULL_RULES = "/static/docs/rules.html";
const POINTS = ["rules.goal", "rules.turn", "rules.bust", "rules.stop", "rules.auction", "rules.buy", "rules.end", "rules.tie"] as const;

export async function rulesScreen(root: HTMLElement): Promise<void> {
  let deck: HTMLElement;
  try {
    const rules = await api.getRules();
    const sizes = Object.entries(rules.deck_sizes).map(([players, size]) => h("li", null, t("rules.deckSizes", { players: tn("n.player", Number(players)), cards: tn("n.card", size) })));
    const kinds = rules.manifest.map((m) => m.code).filter((c, i, all) => all.indexOf(c) === i);
    deck = h("section", { class: "panel" }, h("h2", null, t("rules.deck")), h("ul", { class: "plain" }, sizes), h("div", { class: "cards wrap" }, kinds.map((c) => cardEl(c))));
  } catch (error) {
    deck = h("p", { role: "alert", class: "error" }, describeError(error));
  }
  show(
    root,
    h("h1", null, t("rules.heading")),
    h("ol", { class: "rules" }, POINTS.map((key) => h("li", null, t(key)))),
    deck,
    h("p", { class: "small" }, h("a", { href: FULL_RULES, hreflang: "en", "data-testid": "full-rules" }, t("rules.full"))),
  );
  shown(root, "rules");
}
