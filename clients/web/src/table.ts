/**
 * A game view drawn as a table: draw pile, tableau with its two totals, auction, market, every
 * player, clocks, results. Pure rendering of what the service sends (the seat's own view or the
 * public one); the controls live in `controls.ts`.
 */
import type { components } from "@ten/client";
import { cardEl, cardName, cardRow, COLORS, parseCard, runNumbers, tableauTotals, type Color } from "./cards";
import { h } from "./dom";
import { list, num, t, tn } from "./i18n";

type Schemas = components["schemas"];
export type View = Schemas["GameOut"] | Schemas["PublicView"];
type Player = Schemas["Player"];
type Result = Schemas["Result"];
type Clock = Schemas["ClockOut"];

export const BOT_LEVELS = ["basic", "random", "expert", "master"] as const;
export type BotLevel = (typeof BOT_LEVELS)[number];
const DEFAULT_BOT_NAME = /^Bot (\d+)$/; // the lobby's and the service's name for a bot seat

/**
 * A seat's name as shown: a bot's default name ("Bot 3") in the page's language; a player's
 * name bidi-isolated (FSI ... PDI, the plain-text form of `<bdi>`), so that a name written
 * right to left, or one that starts with digits, never reorders the text around it (the event
 * log's line, a list of names). Every place that shows a name takes it from here.
 */
export function seatName(seat: { name?: string | null; bot?: string | null }): string {
  const name = seat.name ?? "";
  const number = seat.bot ? DEFAULT_BOT_NAME.exec(name)?.[1] : undefined;
  return number ? t("common.botName", { n: num(Number(number)) }) : isolated(name);
}

/** Text of someone else's making, isolated from what surrounds it (Unicode bidi, UAX #9). */
export function isolated(text: string): string {
  return text ? `\u2068${text}\u2069` : text;
}

/** A bot's badge: "bot (expert)", its level in the page's language. */
export function botBadge(level: string): string {
  const known = BOT_LEVELS.find((l) => l === level);
  return t("common.bot", { level: known ? t(`bot.level.${known}`) : level });
}

export function nameOf(view: View, seat: number): string {
  const player = view.players[seat];
  return player ? seatName(player) : t("common.seat", { n: seat + 1 });
}

export function mySeat(view: View): number | null {
  return "seat" in view && typeof view.seat === "number" ? view.seat : null;
}

export function statusLine(view: View): string {
  if (view.status === "finished") return t("table.status.finished");
  if (view.status === "aborted") return t("table.status.aborted");
  if (view.status === "abandoned") return t("table.status.abandoned");
  const phase = t(`table.phase.${view.phase}` as Parameters<typeof t>[0]);
  if (view.to_act === null) return phase;
  if (view.to_act === mySeat(view)) return `${t("table.status.yourTurn")} · ${phase}`;
  return `${t("table.status.waiting", { name: nameOf(view, view.to_act) })} · ${phase}`;
}

/** A seat's or the supply's tokens: "2 currency tokens, 1 bust token". */
export function tokensText(currency: number, bust: number): string {
  return list([tn("n.currencyToken", currency), tn("n.bustToken", bust)]);
}

function meter(label: string, value: number): HTMLElement {
  const shown = Math.max(0, value);
  return h(
    "div",
    { class: "total" },
    h("span", null, label),
    h("meter", { min: 0, max: 11, low: 7, high: 9, optimum: 0, value: Math.min(shown, 11), "aria-label": label }),
  );
}

export function boardEl(view: View): HTMLElement {
  const totals = tableauTotals(view.tableau);
  return h(
    "section",
    { class: "board", "data-testid": "board", "data-version": view.version, "aria-label": t("table.heading") },
    h(
      "div",
      { class: "pile", "data-testid": "draw-pile" },
      h("span", { class: "pile-back", "aria-hidden": "true" }, "TEN"),
      h("span", null, t("table.drawPile"), ": ", h("strong", null, tn("n.card", view.draw_pile_size))),
    ),
    h(
      "div",
      { class: "tableau", "data-testid": "tableau" },
      h("h3", null, t("table.tableau")),
      cardRow(view.tableau, t("table.tableau.empty")),
      h(
        "div",
        { class: "totals" },
        meter(t("table.numbers", { sum: totals.numbers }), totals.numbers),
        meter(t("table.currency", { sum: totals.currency }), totals.currency),
      ),
      h("p", { class: "small muted", "data-testid": "meters-help" }, t("table.meters.help", { numbers: totals.numberSum, currency: totals.currency })),
    ),
    view.auction ? auctionEl(view, view.auction) : null,
    h("div", { class: "market", "data-testid": "market" }, h("h3", null, t("table.market")), cardRow(view.market, t("table.market.empty"))),
    h(
      "p",
      {
        class: "muted small",
        "data-testid": "discard-supply",
        "data-discard": view.discard.length,
        "data-supply-currency": view.supply.currency,
        "data-supply-bust": view.supply.bust,
      },
      t("table.discard", { cards: tn("n.card", view.discard.length) }),
      " · ",
      t("table.supply", { tokens: tokensText(view.supply.currency, view.supply.bust) }),
    ),
    view.last_turn && view.status === "active" ? h("p", { class: "notice" }, t("table.lastTurn")) : null,
  );
}

function auctionEl(view: View, auction: Schemas["AuctionView"]): HTMLElement {
  return h(
    "div",
    { class: "auction", "data-testid": "auction" },
    h("h3", null, t("table.auction")),
    // the card named in words, its face beside (for the eye only: the words say it)
    h("p", { "data-testid": "auction-card" }, t("table.auction.card", { card: cardName(auction.card) }), " ", h("span", { "aria-hidden": "true" }, cardEl(auction.card))),
    h(
      "p",
      null,
      auction.high_bidder === null
        ? t("table.auction.noBid")
        : t("table.auction.high", { amount: auction.high_bid, name: nameOf(view, auction.high_bidder) }),
    ),
    h(
      "p",
      { class: "small" },
      t("table.auction.bidders"),
      ": ",
      auction.bidders.map((seat, i) => [
        i ? " → " : "",
        h("span", { class: seat === auction.to_act ? "acting" : "" }, nameOf(view, seat)),
      ]),
    ),
  );
}

/** A collection grouped by colour (each sorted by number), wild cards of any colour last. */
function collectionEl(cards: readonly string[]): HTMLElement {
  if (!cards.length) return h("p", { class: "muted small" }, t("table.collection.empty"));
  const groups = new Map<string, string[]>();
  for (const code of cards) {
    const c = parseCard(code);
    const key = c.color ?? "W";
    groups.set(key, [...(groups.get(key) ?? []), code]);
  }
  const order = [...COLORS, "W"];
  return h(
    "div",
    { class: "collection" },
    order
      .filter((key) => groups.has(key))
      .map((key) => {
        const codes = [...(groups.get(key) ?? [])].sort(
          (a, b) => (parseCard(a).number ?? 99) - (parseCard(b).number ?? 99),
        );
        return h("div", { class: "suit" }, codes.map((code) => cardEl(code)));
      }),
  );
}

export function clockText(view: View & { clock?: Clock | null }, seat: number, now: number): string | null {
  const clock = view.clock;
  if (!clock) return null;
  let seconds: number | null = null;
  if (clock.seat === seat && clock.deadline !== null) {
    seconds = clock.deadline - now;
  } else if (clock.remaining) {
    seconds = clock.remaining[seat] ?? null;
  }
  if (seconds === null) return null;
  return hms(seconds);
}

/** Seconds as a clock shows them: m:ss, or h:mm:ss from an hour on (never below 0:00). */
export function hms(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const hours = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(hours ? 2 : 1, "0");
  const ss = String(s % 60).padStart(2, "0");
  return hours ? `${hours}:${mm}:${ss}` : `${mm}:${ss}`;
}

function playerEl(view: View, player: Player, now: number): HTMLElement {
  const me = mySeat(view) === player.seat;
  const acting = view.to_act === player.seat && view.status === "active";
  // bots never wait, and an ended game's clocks are stopped: none is shown
  const clock = (player.bot && !player.stand_in) || view.status !== "active" ? null : clockText(view, player.seat, now);
  return h(
    "article",
    {
      class: `player${acting ? " acting" : ""}${me ? " me" : ""}`,
      "data-testid": "player",
      "data-seat": player.seat,
      "data-currency": player.currency ?? 0,
      "data-bust": player.bust ?? 0,
      "aria-label": seatName(player),
    },
    h(
      "h3",
      null,
      seatName(player),
      me ? h("span", { class: "badge" }, t("common.you")) : null,
      player.bot && !player.stand_in ? h("span", { class: "badge" }, botBadge(player.bot)) : null,
      player.taken_over ? h("span", { class: "badge" }, t("table.takenOver")) : null,
      player.resigned ? h("span", { class: "badge" }, t("table.resigned")) : null,
      acting ? h("span", { class: "badge acting-badge" }, "▶ ", t("table.toAct")) : null,
    ),
    h(
      "p",
      { class: "tokens" },
      h("span", { class: "token cur", "aria-hidden": "true" }, "¤"),
      " ",
      tokensText(player.currency ?? 0, player.bust ?? 0),
    ),
    clock === null
      ? null
      : h("p", { class: `clock${acting ? " running" : ""}`, "data-testid": "clock", "data-seat": player.seat }, "◷ ", clock),
    collectionEl(player.cards ?? []),
  );
}

export function playersEl(view: View, now: number): HTMLElement {
  return h(
    "section",
    { class: "players", "aria-label": t("table.players") },
    view.players.map((p) => playerEl(view, p, now)),
  );
}

function runEl(color: Color, run: readonly string[], points: number): HTMLElement {
  const numbers = runNumbers(run);
  return h(
    "div",
    { class: "run" },
    h("span", { class: `run-color k-${color}` }, t(`color.${color}`), ": ", tn("n.point", points)),
    h(
      "span",
      { class: "cards" },
      run.map((code, i) => {
        const c = parseCard(code);
        const at = numbers[i] ?? 0;
        return c.wild
          ? cardEl(code, { class: "wild-placed", label: `${cardName(code)}: ${t("results.wildAt", { n: at })}`, mark: `=${at}` })
          : cardEl(code);
      }),
    ),
  );
}

export function resultsEl(view: View, results: readonly Result[]): HTMLElement {
  const rankCount = new Map<number, number>();
  for (const r of results) rankCount.set(r.rank, (rankCount.get(r.rank) ?? 0) + 1);
  const sorted = [...results].sort((a, b) => a.rank - b.rank || a.seat - b.seat);
  return h(
    "section",
    { class: "results", id: "results", "data-testid": "results", "aria-label": t("results.heading"), tabindex: "-1" },
    h("h2", null, t("results.heading")),
    sorted.map((r) =>
      h(
        "article",
        { class: `result${r.winner ? " winner" : ""}`, "data-testid": "result", "data-seat": r.seat, "data-rank": r.rank },
        h(
          "h3",
          null,
          h("span", { class: "rank" }, num(r.rank), ". "),
          nameOf(view, r.seat),
          " — ",
          h("strong", null, num(r.score)),
          r.winner ? h("span", { class: "badge win" }, "★ ", t("results.winner")) : null,
          (rankCount.get(r.rank) ?? 0) > 1 ? h("span", { class: "badge" }, t("results.tie")) : null,
          r.resigned ? h("span", { class: "badge" }, t("table.resigned")) : null,
        ),
        h("p", { class: "small muted" }, list([tn("n.currency", r.currency), tn("n.card", r.cards)])),
        h(
          "div",
          { class: "runs", "aria-label": t("results.runs") },
          COLORS.map((color) => {
            const score = r.colors[color];
            return score && score.run.length ? runEl(color, score.run, score.points) : null;
          }),
        ),
      ),
    ),
  );
}
