/**
 * Sending this seat's moves: one at a time (`busy` while one is on its way: the controls are
 * disabled), as the seat (its token), for the version shown (`If-Match`), each with its own
 * idempotency key. The reply holds the move's events and every bot move after it, and the
 * seat's view after them all.
 */
import type { Action, ActedOut } from "@ten/client";
import { api } from "../api";
import type { GameEvent } from "../events";
import type { View } from "../table";

/** The table's layout has one column below this width (app.css: `.layout`). */
const ONE_COLUMN = window.matchMedia("(max-width: 899px)");

/** What an action sent brought: its events (and the bots' after it), and the view after them. */
export interface Acted {
  events: GameEvent[];
  state: View;
}

export class Sender {
  /** An action is on its way. */
  busy = false;

  constructor(private readonly gameId: string) {}

  /** Sends `action` as the seat of `token`, for the table's `version` (busy from now until it is answered). */
  async act(action: Action, token: string, version: number): Promise<Acted> {
    this.busy = true;
    try {
      const { result } = await api.act(this.gameId, action, { token, ifMatch: version, idempotencyKey: crypto.randomUUID() });
      const { events, ...state } = result as ActedOut;
      return { events: events as GameEvent[], state: state as unknown as View };
    } finally {
      this.busy = false;
    }
  }
}

/** On a one-column (phone) layout a move's outcome shows in the tableau, above the controls. */
export function showOutcome(root: HTMLElement): void {
  if (ONE_COLUMN.matches) root.querySelector<HTMLElement>("[data-testid=tableau]")?.scrollIntoView({ block: "nearest" });
}
