/** Past games: the archive's list, and a replay that steps through every public state, with
 * the game's fair deal (its seed revealed, and how to check it). */
import type { components } from "@ten/client";
import { api, failedScreen, TenApiError } from "../api";
import { h, show, shown } from "../dom";
import { fairnessEl, type Fairness } from "../fair";
import { list, num, t, when } from "../i18n";
import { reviewSection } from "../review";
import { boardEl, nameOf, playersEl, resultsEl, seatName, statusLine, type View } from "../table";

type ArchivedGame = components["schemas"]["GameSummary"];

export async function archiveScreen(root: HTMLElement, params: URLSearchParams): Promise<void> {
  let page;
  try {
    page = await api.listArchivedGames({ limit: 50, ...(params.get("cursor") ? { cursor: params.get("cursor") ?? "" } : {}) });
  } catch (error) {
    return failedScreen(root, error, "archive");
  }
  const row = (g: ArchivedGame) =>
    h(
      "li",
      { "data-testid": "archived-game", "data-game-id": g.id },
      h("a", { href: `#/replay/${encodeURIComponent(g.id)}` }, t("archive.replay")),
      " · ",
      list(g.seats.map(seatName)),
      " · ",
      t(`archive.status.${g.status}` as Parameters<typeof t>[0]),
      g.ranked ? ` · ${t("archive.ranked")}` : "",
      " · ",
      h("time", { datetime: g.finished_at }, t("archive.finished", { date: when(g.finished_at) })),
    );
  show(
    root,
    h("h1", null, t("archive.heading")),
    page.items.length ? h("ul", { class: "plain list", "data-testid": "archive" }, page.items.map(row)) : h("p", { class: "muted" }, t("archive.none")),
    page.next_cursor ? h("a", { href: `#/archive?cursor=${encodeURIComponent(page.next_cursor)}`, class: "button" }, t("common.more")) : null,
  );
  shown(root, "archive");
}

/** Every public state of the game, page by page from the archive; `wait`: a game just
 * finished (the results' link to its review) may take a moment to reach the archive, so a
 * 404 is asked again a few times first. */
async function archivedStates(gameId: string, wait: boolean): Promise<View[]> {
  for (let tries = 1; ; tries++) {
    try {
      return await allStates(gameId);
    } catch (error) {
      const notYet = error instanceof TenApiError && error.problem?.code === "archived_game_not_found";
      if (!wait || !notYet || tries >= 10) throw error;
      await new Promise((resolve) => window.setTimeout(resolve, 500));
    }
  }
}

/** Every public state of the game, page by page from the archive. */
async function allStates(gameId: string): Promise<View[]> {
  const states: View[] = [];
  let from: number | null = 0;
  while (from !== null) {
    const page: components["schemas"]["ReplayOut"] = await api.replay(gameId, { from_version: from, limit: 500 });
    states.push(...(page.states as View[]));
    from = page.next_version;
  }
  return states;
}

/** The game's fair deal as its view shows it (null: not verifiable); undefined when it could
 * not be read (the replay goes on without it). */
async function dealOf(gameId: string): Promise<Fairness | null | undefined> {
  try {
    const { game } = await api.getGame(gameId);
    return "players" in game ? (game.fairness ?? null) : undefined;
  } catch {
    return undefined;
  }
}

/** A replay, and below it a finished game's review (`?review`: scrolled to it); returns how
 * to stop asking for it. */
export async function replayScreen(root: HTMLElement, params: URLSearchParams, _route: string, gameId = ""): Promise<(() => void) | void> {
  let states: View[];
  const toReview = params.has("review");
  const deal = dealOf(gameId);
  try {
    states = await archivedStates(gameId, toReview);
  } catch (error) {
    return failedScreen(root, error, "replay");
  }
  const fair = await deal;
  let step = 0; // a replay tells the game from its start
  const stage = h("div", { class: "replay-stage" });
  const label = h("p", { "data-testid": "replay-step", "aria-live": "polite" });
  const slider = h("input", { type: "range", id: "replay-slider", min: 0, max: Math.max(0, states.length - 1), value: String(step), "aria-label": t("replay.slider") });
  const go = (n: number) => {
    step = Math.max(0, Math.min(states.length - 1, n));
    slider.value = String(step);
    const view = states[step];
    label.textContent = t("replay.step", { n: num(step + 1), total: num(states.length) });
    // nothing before the first step, nothing after the last
    for (const b of [first, prev]) b.disabled = step === 0;
    for (const b of [next, last]) b.disabled = step >= states.length - 1;
    if (!view) return;
    show(stage, h("h2", null, statusLine(view)), view.results ? resultsEl(view, view.results) : null, boardEl(view), playersEl(view, 0));
  };
  slider.addEventListener("input", () => go(Number(slider.value)));
  const button = (id: string, text: string, to: () => number) => h("button", { type: "button", id, onclick: () => go(to()) }, text);
  const first = button("replay-first", t("replay.first"), () => 0);
  const prev = button("replay-prev", t("replay.prev"), () => step - 1);
  const next = button("replay-next", t("replay.next"), () => step + 1);
  const last = button("replay-last", t("replay.last"), () => states.length - 1);
  const end = states[states.length - 1];
  const review =
    end?.status === "finished"
      ? reviewSection(gameId, {
          nameOf: (seat) => nameOf(end, seat),
          stepOf: (version) => Math.max(0, states.findIndex((s) => s.version === version)),
          goto: (n) => {
            go(n);
            label.scrollIntoView({ block: "nearest" });
          },
        })
      : null;
  show(
    root,
    h("h1", null, t("replay.heading")),
    h(
      "div",
      { class: "row replay-controls" },
      first,
      prev,
      next,
      last,
      slider,
    ),
    label,
    stage,
    fair === undefined ? null : fairnessEl(gameId, fair, true),
    review?.el,
  );
  go(step);
  if (toReview) review?.el.scrollIntoView({ block: "start" });
  shown(root, "replay");
  return review?.stop;
}
