/**
 * The odds of the next card on the live table, when it is this seat's turn to draw: the
 * service's (`GET /v1/games/{id}/odds`, read as the seat), asked once per version, shown only
 * while the table still shows that version.
 */
import type { Odds } from "@ten/client";
import { answered, api } from "../api";
import { h } from "../dom";
import { oddsEl } from "../odds";
import { mySeat } from "../table";
import { seatHeaders } from "./feed";
import type { TableState } from "./state";

export class OddsBox {
  readonly el = h("div", { "aria-live": "polite" });
  private version = -1; // the version the odds were asked for

  constructor(
    private readonly gameId: string,
    private readonly token: () => string | undefined,
  ) {}

  /** The odds of the version `state` shows, if this seat is to draw (its controls shown). */
  async show(state: TableState): Promise<void> {
    const view = state.view;
    const mine = state.settled && view.status === "active" && view.phase === "draw" && view.to_act !== null && view.to_act === mySeat(view);
    if (!mine) {
      this.el.replaceChildren();
      return;
    }
    if (this.version === view.version) return;
    this.version = view.version;
    try {
      const odds: Odds = answered(
        await api.raw.GET("/v1/games/{game_id}/odds", { params: { path: { game_id: this.gameId } }, headers: seatHeaders(this.token()) }),
      );
      if (odds.version === state.view.version) this.el.replaceChildren(oddsEl(odds.odds) ?? "");
    } catch {
      this.el.replaceChildren(); // the odds are a help: the game goes on without them
    }
  }
}
