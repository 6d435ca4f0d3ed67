/** A player's figures and the leaderboard. */
import { api, describeError } from "../api";
import { h, show, shown } from "../dom";
import { num, t, when } from "../i18n";
import { playerId } from "../store";

const RANKED = "ten.rankedOnly";

function rankedOnly(): boolean {
  return localStorage.getItem(RANKED) !== "0";
}

function rankedToggle(redraw: () => void): HTMLElement {
  const box = h("input", {
    type: "checkbox",
    id: "ranked-only",
    checked: rankedOnly(),
    onchange: () => {
      localStorage.setItem(RANKED, box.checked ? "1" : "0");
      redraw();
    },
  });
  return h("div", { class: "field check" }, box, h("label", { for: "ranked-only" }, t("stats.rankedOnly")));
}

export async function statsScreen(root: HTMLElement, _params: URLSearchParams, _route: string, who = ""): Promise<void> {
  const id = who || playerId();
  const input = h("input", { id: "stats-player", value: id, maxlength: 100, pattern: "[A-Za-z0-9._:@-]+", required: true });
  const form = h(
    "form",
    { class: "row", onsubmit: (e: Event) => { e.preventDefault(); location.hash = `#/players/${encodeURIComponent(input.value.trim())}`; } },
    h("label", { for: "stats-player" }, t("stats.player")),
    input,
    h("button", { type: "submit" }, t("stats.lookup")),
  );
  let body: HTMLElement;
  try {
    const s = await api.playerStats(id, { ranked: rankedOnly() ? "true" : "all" });
    const row = (label: string, value: string) => h("tr", null, h("th", { scope: "row" }, label), h("td", null, value));
    const dash = (v: number | null | undefined, digits = 0) => (v === null || v === undefined ? "—" : num(v, digits));
    const rating = s.rating;
    body = s.games
      ? h(
          "table",
          { class: "figures", "data-testid": "stats" },
          h("tbody", null,
            rating && rating.games
              ? row(t("stats.rating"), t("stats.ratingValue", { ordinal: num(rating.ordinal, 1), mu: num(rating.mu, 1), sigma: num(rating.sigma, 1) }))
              : null,
            row(t("stats.games"), num(s.games)),
            row(t("stats.wins"), num(s.wins)),
            row(t("stats.mean"), dash(s.mean_score, 1)),
            row(t("stats.best"), dash(s.best_score)),
            row(t("stats.busts"), num(s.busts)),
            row(t("stats.bustRate"), dash(s.bust_rate, 2)),
            row(t("stats.perfect"), num(s.perfect_colors)),
          ),
        )
      : h("p", { class: "muted", "data-testid": "stats" }, t("stats.none"));
  } catch (error) {
    body = h("p", { role: "alert", class: "error" }, describeError(error));
  }
  show(
    root,
    h("h1", null, t("stats.heading")),
    form,
    rankedToggle(() => void statsScreen(root, _params, _route, id)),
    body,
    await historyEl(id),
  );
  shown(root, "stats");
}

/** The player's last rated games and what each did to the rating. */
async function historyEl(id: string): Promise<HTMLElement | null> {
  try {
    const history = await api.ratingHistory(id, { limit: 20 });
    if (!history.items.length) return null;
    return h(
      "section",
      { class: "panel", "data-testid": "rating-history" },
      h("h2", null, t("stats.history")),
      h("p", { class: "small muted" }, t("stats.ratingHelp")),
      h(
        "ul",
        { class: "plain" },
        history.items.map((c) => {
          const delta = c.mu - c.mu_before;
          return h(
            "li",
            null,
            h("a", { href: `#/replay/${encodeURIComponent(c.game_id)}` }, t("stats.historyRow", {
              date: when(c.finished_at, false),
              rank: num(c.rank),
              seats: num(c.rated_seats),
              ordinal: num(c.ordinal, 1),
              delta: `${delta >= 0 ? "+" : ""}${num(delta, 2)}`,
            })),
          );
        }),
      ),
    );
  } catch {
    return null; // the figures above stand without it
  }
}

export async function leaderboardScreen(root: HTMLElement, params: URLSearchParams): Promise<void> {
  const wanted = params.get("by");
  const by = wanted === "mean_score" || wanted === "rating" ? wanted : "wins";
  let body: HTMLElement;
  try {
    const board = await api.leaderboard({ by, ranked: rankedOnly() ? "true" : "all", limit: 50 });
    body = board.rows.length
      ? h(
          "table",
          { class: "figures", "data-testid": "leaderboard" },
          h("thead", null, h("tr", null,
            h("th", { scope: "col" }, t("leaderboard.position")),
            h("th", { scope: "col" }, t("stats.player")),
            h("th", { scope: "col" }, t("stats.games")),
            h("th", { scope: "col" }, t("stats.wins")),
            h("th", { scope: "col" }, t("stats.mean")),
            h("th", { scope: "col" }, t("leaderboard.rating")),
          )),
          h("tbody", null, board.rows.map((r) => h("tr", null,
            h("td", null, num(r.position)),
            h("td", null, h("a", { href: `#/players/${encodeURIComponent(r.player_id)}` }, r.player_id)),
            h("td", null, num(r.games)),
            h("td", null, num(r.wins)),
            h("td", null, num(r.mean_score, 1)),
            h("td", null, r.rating ? num(r.rating.ordinal, 1) : "—"),
          ))),
        )
      : h("p", { class: "muted", "data-testid": "leaderboard" }, t("leaderboard.none"));
  } catch (error) {
    body = h("p", { role: "alert", class: "error" }, describeError(error));
  }
  const order = h(
    "nav",
    { class: "row", "aria-label": t("leaderboard.by") },
    t("leaderboard.by"), ": ",
    (["wins", "mean_score", "rating"] as const).map((key) =>
      h("a", { href: `#/leaderboard?by=${key}`, "aria-current": key === by ? "page" : undefined }, t(`leaderboard.by.${key}`)),
    ),
  );
  show(root, h("h1", null, t("leaderboard.heading")), order, rankedToggle(() => void leaderboardScreen(root, params)), body);
  shown(root, "leaderboard");
}
