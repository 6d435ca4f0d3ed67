/**
 * A game's table brought forward by its events: `fold(view, event)` is the view one event
 * later, as the service's own view would show it (docs/rules.md, the events of domain/model.py).
 * The events carry every change (the card drawn, the gains, the payments, the cards moved),
 * so the page moves the table step by step from the events it is sent and never reads the
 * game again to learn what a move did. Only what no event says (the seat's legal actions,
 * its seat actions, the clock) comes from the service's own views (`tableKey` compares the
 * two at the end of a playback).
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

/** `view` one event later (a new object; `view` is left as it was). */
export function fold<V extends View>(view: V, event: GameEvent): V {
  const next = structuredClone(view);
  next.version = event.version;
  switch (event.type) {
    case "game_started":
      next.players = event.players.map((s) => ({
        seat: s.seat,
        name: s.name,
        bot: s.bot ?? null,
        currency: event.starting_currency,
        bust: 0,
        cards: [],
        stand_in: null,
        taken_over: false,
        resigned: false,
      }));
      next.rules = event.rules;
      next.status = "active";
      next.phase = "draw";
      next.starting_seat = event.starting_seat;
      next.active_seat = event.starting_seat;
      next.to_act = event.starting_seat;
      next.drawn = false;
      next.draw_pile_size = event.draw_pile_size;
      next.last_turn = event.draw_pile_size === 0;
      next.tableau = [];
      next.market = [];
      next.discard = [];
      next.supply = { currency: event.supply_currency, bust: event.supply_bust };
      next.auction = null;
      next.final_queue = [];
      next.results = null;
      break;
    case "turn_started":
      next.phase = "draw";
      next.active_seat = event.seat;
      next.to_act = event.seat;
      next.drawn = false;
      break;
    case "card_drawn":
      next.draw_pile_size = event.draw_pile_size;
      next.last_turn = event.draw_pile_size === 0;
      next.drawn = true;
      if (!parseCard(event.card).wild) next.tableau.push(event.card); // a wild card is auctioned instead
      break;
    case "auction_started":
      next.phase = "auction";
      next.auction = { card: event.card, bidders: [...event.bidders], high_bid: 0, high_bidder: null, to_act: event.bidders[0] ?? 0 };
      next.to_act = event.bidders[0] ?? null;
      break;
    case "bid_placed":
      if (next.auction) {
        next.auction.high_bid = event.amount;
        next.auction.high_bidder = event.seat;
      }
      nextBidder(next, event.seat);
      break;
    case "bid_passed":
      nextBidder(next, event.seat);
      break;
    case "auction_won":
      pay(next, event.seat, event.payment);
      player(next, event.seat).cards = [...(player(next, event.seat).cards ?? []), event.card];
      endAuction(next);
      break;
    case "wild_discarded":
      next.discard.push(event.card);
      endAuction(next);
      break;
    case "busted": {
      if (event.bust_token) {
        const p = player(next, event.seat);
        p.bust = (p.bust ?? 0) + 1;
        next.supply.bust -= 1;
      }
      next.tableau = [];
      next.market.push(...event.to_market);
      next.discard.push(...event.to_discard);
      gain(next, event.gains);
      break;
    }
    case "stopped":
      next.tableau = [];
      next.discard.push(...event.to_discard);
      if (event.take === "numbers") {
        const p = player(next, event.seat);
        p.cards = [...(p.cards ?? []), ...event.cards];
        next.phase = "buy";
        next.to_act = event.seat;
      } else {
        next.market.push(...event.cards);
      }
      gain(next, event.gains);
      break;
    case "card_bought": {
      pay(next, event.seat, event.payment);
      const p = player(next, event.seat);
      const cards = [...(p.cards ?? [])];
      for (const spent of event.payment.cards ?? []) removeOne(cards, spent);
      cards.push(event.card);
      p.cards = cards;
      removeOne(next.market, event.card);
      next.discard.push(...(event.payment.cards ?? []));
      endBuy(next);
      break;
    }
    case "buy_declined":
      endBuy(next);
      break;
    case "final_buy_started":
      next.phase = "final_buy";
      next.final_queue = [...event.order];
      next.to_act = event.order[0] ?? null;
      next.drawn = false;
      break;
    case "timed_out":
      break; // the bot's move for the seat follows as its own events
    case "seat_taken_over": {
      const p = player(next, event.seat);
      p.stand_in = event.bot;
      if (event.reason === "resigned") p.resigned = true;
      else p.taken_over = true;
      break;
    }
    case "seat_reclaimed":
      player(next, event.seat).stand_in = null;
      break;
    case "game_finished":
      next.status = "finished";
      next.phase = "finished";
      next.results = event.results;
      next.to_act = null;
      next.final_queue = [];
      break;
  }
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
