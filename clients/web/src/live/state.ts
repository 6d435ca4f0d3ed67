/**
 * The live table's state: the view shown (the service's last one, brought forward by the
 * events shown since: `fold`), and how it stands against the service's views: whether its
 * controls are the service's for the version shown, a view read that is ahead of the events,
 * an event that did not fit. No timers, no page: the table (`live/table.ts`) decides when to
 * read the service, `live/screen.ts` draws.
 */
import type { Game } from "@ten/client";
import type { Fairness } from "../fair";
import { fold, tableKey } from "../fold";
import type { Move } from "../pacing";
import { mySeat, type View } from "../table";

type SeatActions = NonNullable<Game["seat_actions"]>;

/** The events about a seat's player that change its seat actions (resign, reclaim). */
const SEAT_CHANGES: readonly string[] = ["timed_out", "seat_taken_over", "seat_reclaimed"];

export class TableState {
  private current: View;
  /** The version of the last view taken from the service as it is: the events up to it are in it. */
  base: number;
  /** Server time minus local time, seconds. */
  clockOffset = 0;
  /** The controls shown are the service's, for the version shown. */
  settled = true;
  /** A view of the service the events have not brought the table to yet. */
  ahead: View | null = null;
  /** An event did not fit the table: the next view read is taken as it is. */
  broken = false;
  /** An event about this seat's player since its controls were read. */
  private mineMoved = false;
  private seatActions: SeatActions;
  private mismatches = 0;

  constructor(first: Game) {
    this.current = first;
    this.base = first.version;
    this.seatActions = first.seat_actions ?? [];
    this.setView(first);
  }

  get view(): View {
    return this.current;
  }

  get active(): boolean {
    return this.current.status === "active";
  }

  private setView(next: View): void {
    this.current = next;
    if ("clock" in next && next.clock) this.clockOffset = next.clock.server_time - Date.now() / 1000;
  }

  /** The table is about to move on: the controls shown are for a version gone. */
  hideControls(): void {
    this.settled = false;
    if ("legal_actions" in this.current) this.current = { ...this.current, legal_actions: [], seat_actions: [] };
  }

  /** One move brought onto the table (its events the view read holds already are skipped). */
  apply(move: Move): void {
    for (const e of move.events) {
      if (e.version <= this.base || this.broken) continue; // the view read holds it already
      try {
        this.current = fold(this.current, e);
      } catch (error) {
        this.broken = true;
        console.warn("ten: an event that does not fit the table", e, error);
      }
      const mine = mySeat(this.current);
      if (mine !== null && "seat" in e && e.seat === mine && SEAT_CHANGES.includes(e.type)) this.mineMoved = true;
    }
    if (move.version > this.base) this.hideControls();
  }

  /** The moves the view read did not hold: those the table moves on by. */
  newer(moves: readonly Move[]): Move[] {
    return moves.filter((m) => m.version > this.base);
  }

  /** The service's view of the version shown: its controls and clock; the table must be the one folded. */
  merge(state: View): void {
    if (tableKey(state) !== tableKey(this.current)) {
      this.mismatches += 1;
      document.body.dataset.foldMismatches = String(this.mismatches);
      console.warn("ten: the table folded from the events is not the service's view", { folded: this.current, service: state });
    }
    this.take(state);
  }

  /** A view of the service shown as it is. */
  take(state: View): void {
    this.setView(state);
    this.base = Math.max(this.base, state.version);
    this.seatActions = ("seat_actions" in state ? state.seat_actions : null) ?? [];
    this.settled = true;
    this.mineMoved = false;
    this.broken = false;
    this.ahead = null;
  }

  /** An ended game's fair deal as the service reveals it (its seed: no event carries it). */
  reveal(fairness: Fairness): void {
    if ("fairness" in this.current) this.current = { ...this.current, fairness };
  }

  /** Whether the controls of the version shown must be read from the service: the seat's
   * turn, an event about its player, a clock to show, or a table that did not fit. */
  get readNeeded(): boolean {
    const view = this.current;
    const seat = mySeat(view);
    const clocked = "clock" in view && !!view.clock;
    return this.broken || (view.status === "active" && (clocked || (seat !== null && (view.to_act === seat || this.mineMoved))));
  }

  /** Off turn, nothing about this seat: no decision to offer, its seat actions as they were. */
  keepSeatActions(): void {
    if ("legal_actions" in this.current) this.current = { ...this.current, legal_actions: [], seat_actions: this.seatActions };
    this.settled = true;
  }
}
