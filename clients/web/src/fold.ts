/**
 * The live table between two views of the service: `fold(view, event)` is the view one event
 * later, as the service's own view would show it (docs/rules.md, the events of
 * domain/game/model.py).
 *
 * Why the page folds at all: the live table shows the moves that arrive together (a reply
 * with the bots' moves after the seat's own, a burst of the stream) one at a time
 * (`Pacer`), and the service has no view of a live game at a version gone by: a read
 * answers the latest version only, so reading the game per move would show none of the
 * moves in between, and cost a round trip each (the browser tests hold the page to no read
 * of the game during a playback). The events carry every change (the card drawn, the
 * gains, the payments, the cards moved, the bidders, the final buy's order), and each
 * step below only puts them where the view has them; what no event says (the seat's legal
 * actions, its seat actions, the clock) comes from the service's own views, and at the end
 * of a playback the table folded is checked against the service's (`tableKey`; a mismatch
 * is counted in `data-fold-mismatches` and the service's view shown). An event that does
 * not fit (a step throws) has the page take the service's next view as it is.
 *
 * A game's start is never folded: the live table opens on a view of the started game,
 * which holds its `game_started` (its step throws, so the page would read the game).
 */
import type { components } from "@ten/client";
import { parseCard } from "./cards";
import type { GameEvent } from "./events";
import type { View } from "./table";

type Player = components["schemas"]["Player"];

function player(view: View, seat: number): Player {
  const found = view.players[seat];
  if (!found) throw new Error(`no seat ${seat} at this table`);
  return found;
}

function gain(view: View, gains: readonly { seat: number; amount: number }[]): void {
  for (const g of gains) {
    const p = player(view, g.seat);
    p.currency = (p.currency ?? 0) + g.amount;
    view.supply.currency -= g.amount;
  }
}

function pay(view: View, seat: number, payment: { currency?: number; bust?: number }): void {
  const p = player(view, seat);
  const currency = payment.currency ?? 0;
  const bust = payment.bust ?? 0;
  p.currency = (p.currency ?? 0) - currency;
  p.bust = (p.bust ?? 0) - bust;
  view.supply.currency += currency;
  view.supply.bust += bust;
}

function removeOne(codes: string[], code: string): void {
  const at = codes.indexOf(code);
  if (at < 0) throw new Error(`${code} is not there to take`);
  codes.splice(at, 1);
}

/** After a buy phase (3.4): in the final buy round the next seat's, else the turn ends (the next event says how). */
function endBuy(view: View): void {
  if (view.phase !== "final_buy") return;
  view.final_queue = view.final_queue.slice(1);
  view.to_act = view.final_queue[0] ?? null;
}

/** The auction is over (3.5): the drawing seat goes on with its draw phase. */
function endAuction(view: View): void {
  view.auction = null;
  view.phase = "draw";
  view.to_act = view.active_seat;
}

/** The bidder after `seat` has their chance (the last one's is followed by the auction's end). */
function nextBidder(view: View, seat: number): void {
  const auction = view.auction;
  if (!auction) throw new Error("a bid outside an auction");
  const next = auction.bidders[auction.bidders.indexOf(seat) + 1];
  if (next === undefined) return;
  auction.to_act = next;
  view.to_act = next;
}

type Step<T extends GameEvent["type"]> = (view: View, event: Extract<GameEvent, { type: T }>) => void;

/** What each event does to the view (`view` is a copy of the one before, changed in place). */
const STEPS: { [T in GameEvent["type"]]: Step<T> } = {
  game_started: () => {
    throw new Error("a game's start is in the first view of the live table, never folded");
  },
  turn_started: (view, event) => {
    view.phase = "draw";
    view.active_seat = event.seat;
    view.to_act = event.seat;
    view.drawn = false;
  },
  card_drawn: (view, event) => {
    view.draw_pile_size = event.draw_pile_size;
    view.last_turn = event.draw_pile_size === 0;
    view.drawn = true;
    if (!parseCard(event.card).wild) view.tableau.push(event.card); // a wild card is auctioned instead
  },
  auction_started: (view, event) => {
    view.phase = "auction";
    view.auction = { card: event.card, bidders: [...event.bidders], high_bid: 0, high_bidder: null, to_act: event.bidders[0] ?? 0 };
    view.to_act = event.bidders[0] ?? null;
  },
  bid_placed: (view, event) => {
    if (view.auction) {
      view.auction.high_bid = event.amount;
      view.auction.high_bidder = event.seat;
    }
    nextBidder(view, event.seat);
  },
  bid_passed: (view, event) => nextBidder(view, event.seat),
  auction_won: (view, event) => {
    pay(view, event.seat, event.payment);
    player(view, event.seat).cards = [...(player(view, event.seat).cards ?? []), event.card];
    endAuction(view);
  },
  wild_discarded: (view, event) => {
    view.discard.push(event.card);
    endAuction(view);
  },
  busted: (view, event) => {
    if (event.bust_token) {
      const p = player(view, event.seat);
      p.bust = (p.bust ?? 0) + 1;
      view.supply.bust -= 1;
    }
    view.tableau = [];
    view.market.push(...event.to_market);
    view.discard.push(...event.to_discard);
    gain(view, event.gains);
  },
  stopped: (view, event) => {
    view.tableau = [];
    view.discard.push(...event.to_discard);
    if (event.take === "numbers") {
      const p = player(view, event.seat);
      p.cards = [...(p.cards ?? []), ...event.cards];
      view.phase = "buy";
      view.to_act = event.seat;
    } else {
      view.market.push(...event.cards);
    }
    gain(view, event.gains);
  },
  card_bought: (view, event) => {
    pay(view, event.seat, event.payment);
    const p = player(view, event.seat);
    const cards = [...(p.cards ?? [])];
    for (const spent of event.payment.cards ?? []) removeOne(cards, spent);
    cards.push(event.card);
    p.cards = cards;
    removeOne(view.market, event.card);
    view.discard.push(...(event.payment.cards ?? []));
    endBuy(view);
  },
  buy_declined: (view) => endBuy(view),
  final_buy_started: (view, event) => {
    view.phase = "final_buy";
    view.final_queue = [...event.order];
    view.to_act = event.order[0] ?? null;
    view.drawn = false;
  },
  timed_out: () => undefined, // the bot's move for the seat follows as its own events
  seat_taken_over: (view, event) => {
    const p = player(view, event.seat);
    p.stand_in = event.bot;
    if (event.reason === "resigned") p.resigned = true;
    else p.taken_over = true;
  },
  seat_reclaimed: (view, event) => {
    player(view, event.seat).stand_in = null;
  },
  game_finished: (view, event) => {
    view.status = "finished";
    view.phase = "finished";
    view.results = event.results;
    view.to_act = null;
    view.final_queue = [];
  },
};

/** `view` one event later (a new object; `view` is left as it was). */
export function fold<V extends View>(view: V, event: GameEvent): V {
  const next = structuredClone(view);
  next.version = event.version;
  const step = STEPS[event.type] as ((view: View, event: GameEvent) => void) | undefined;
  step?.(next, event); // an event of a later contract: its version only
  return next;
}

/**
 * What the table shows of a view, in one spelling (the fields every view has, a seat's
 * defaults filled in): two views with the same key show the same table.
 */
export function tableKey(view: View): string {
  const table = {
    version: view.version,
    status: view.status,
    phase: view.phase,
    rules: view.rules,
    starting_seat: view.starting_seat,
    active_seat: view.active_seat,
    to_act: view.to_act,
    drawn: view.drawn,
    draw_pile_size: view.draw_pile_size,
    last_turn: view.last_turn,
    tableau: view.tableau,
    market: view.market,
    discard: view.discard,
    supply: view.supply,
    players: view.players.map((p) => ({
      seat: p.seat,
      name: p.name,
      bot: p.bot ?? null,
      currency: p.currency ?? 0,
      bust: p.bust ?? 0,
      cards: p.cards ?? [],
      stand_in: p.stand_in ?? null,
      taken_over: p.taken_over ?? false,
      resigned: p.resigned ?? false,
    })),
    auction: view.auction,
    final_queue: view.final_queue,
    results: view.results?.map((r) => ({ ...r, resigned: r.resigned ?? false })) ?? null,
  };
  return canonical(table);
}

/** JSON with every object's keys sorted. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
