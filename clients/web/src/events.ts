/** One event of the log as a sentence in the page's language. */
import type { components } from "@ten/client";
import { cardName } from "./cards";
import { t, tn } from "./i18n";

export type GameEvent = components["schemas"]["EventsOut"]["events"][number];

export function describeEvent(event: GameEvent, nameOf: (seat: number) => string): string {
  switch (event.type) {
    case "game_started":
      return t("event.game_started", { players: tn("n.player", event.players.length) });
    case "turn_started":
      return t("event.turn_started", { name: nameOf(event.seat) });
    case "card_drawn":
      return t("event.card_drawn", { name: nameOf(event.seat), card: cardName(event.card) });
    case "auction_started":
      return t("event.auction_started", { card: cardName(event.card) });
    case "bid_placed":
      return t("event.bid_placed", { name: nameOf(event.seat), amount: event.amount });
    case "bid_passed":
      return t("event.bid_passed", { name: nameOf(event.seat) });
    case "auction_won":
      return t("event.auction_won", { name: nameOf(event.seat), card: cardName(event.card), amount: event.amount });
    case "wild_discarded":
      return t("event.wild_discarded", { card: cardName(event.card) });
    case "stopped":
      return t(event.take === "numbers" ? "event.stopped.numbers" : "event.stopped.currency", {
        name: nameOf(event.seat),
      });
    case "busted":
      return t(event.kind === "numbers" ? "event.busted.numbers" : "event.busted.currency", {
        name: nameOf(event.seat),
      });
    case "card_bought":
      return t("event.card_bought", { name: nameOf(event.seat), card: cardName(event.card) });
    case "buy_declined":
      return t("event.buy_declined", { name: nameOf(event.seat) });
    case "final_buy_started":
      return t("event.final_buy_started");
    case "timed_out":
      return t("event.timed_out", { name: nameOf(event.seat) });
    case "seat_taken_over":
      return t("event.seat_taken_over", { name: nameOf(event.seat) });
    case "seat_reclaimed":
      return t("event.seat_reclaimed", { name: nameOf(event.seat) });
    case "game_finished":
      return t("event.game_finished");
    default:
      return t("event.other", { type: (event as { type: string }).type });
  }
}
