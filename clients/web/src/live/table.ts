/**
 * The live table: draw it, follow the game, send this seat's moves. The table moves on from
 * the events (`TableState`, which folds them), one move at a time (`Pacer`): those of this
 * seat's own reply (its move and every bot move after it) and those of the log and the stream
 * (`Feed`), taken once each in seq order. The service's views (the reply, a read) give what no
 * event says: the seat's controls and the clock; at the end of a playback the table folded is
 * checked against them. This module decides when a view is taken and when one is read; the
 * page is `LiveScreen`'s.
 */
import type { Action, Game } from "@ten/client";
import { api, describeError, TenApiError } from "../api";
import { closeConfirm } from "../controls";
import { describeEvent, type GameEvent } from "../events";
import { moveDelay, Pacer, type Move } from "../pacing";
import { heldSeat } from "../store";
import { mySeat, nameOf, type View } from "../table";
import { againBody, createTable } from "../screens/lobby";
import { notifyPanel } from "../screens/notify";
import { Feed } from "./feed";
import { OddsBox } from "./odds";
import { PaceControl } from "./pace";
import { LiveScreen } from "./screen";
import { Sender, showOutcome } from "./send";
import { TableState } from "./state";

/** How long a view of the service may stay ahead of the events before the log is read again (and, still ahead, the view taken). */
const CATCH_UP_MS = 3000;
/** How soon a read that answered an older version than the table shown is sent again. */
const REREAD_MS = 100;
/** How often the running clock is redrawn. */
const TICK_MS = 500;

/** The live table of `first` drawn into `root`; returns how to stop it. */
export function liveTable(root: HTMLElement, first: Game): () => void {
  const table = new LiveTable(root, first);
  return () => table.stop();
}

class LiveTable {
  private readonly gameId: string;
  private readonly state: TableState;
  private readonly pacer: Pacer;
  private readonly feed: Feed;
  private readonly sender: Sender;
  private readonly odds: OddsBox;
  private readonly screen: LiveScreen;
  private message = ""; // the last failure, said under the status line
  private refreshing: Promise<void> | null = null;
  private seedAsked = false; // an ended game's view was read for its seed
  private catchUpTimer = 0;
  private rereadTimer = 0;
  private readonly tick: number;

  constructor(
    private readonly root: HTMLElement,
    first: Game,
  ) {
    this.gameId = first.id;
    const token = () => this.token();
    this.state = new TableState(first);
    this.pacer = new Pacer(moveDelay, (move) => this.showMove(move), (moves) => this.movesShown(moves), () => this.settle());
    this.feed = new Feed(this.gameId, token, {
      events: (events) => this.receive(events),
      offline: () => this.draw(),
      back: () => void this.refresh(),
      failed: (error) => this.fail(error),
      active: () => this.state.active,
    });
    this.sender = new Sender(this.gameId);
    this.odds = new OddsBox(this.gameId, token);
    this.screen = new LiveScreen(root, first, {
      gameId: this.gameId,
      send: (action) => void this.send(action),
      playAgain: () => void this.playAgain(),
      pace: new PaceControl(this.pacer),
      odds: this.odds.el,
      // a game of days per move goes on while the page is closed: its seat may be called back
      notify: first.clock?.control.type === "deadline" && heldSeat(first.id) ? notifyPanel() : null,
    });
    this.tick = window.setInterval(() => this.screen.tickClocks(this.state.view, this.state.clockOffset), TICK_MS);
    this.draw();
    void this.feed.load().then(() => this.feed.follow());
  }

  stop(): void {
    window.clearInterval(this.tick);
    window.clearTimeout(this.catchUpTimer);
    window.clearTimeout(this.rereadTimer);
    this.feed.stop();
    this.pacer.stop();
    this.screen.stop();
    closeConfirm();
  }

  /** The held seat's token: this browser plays the seat (else it watches). */
  private token(): string | undefined {
    return heldSeat(this.gameId)?.token;
  }

  private draw(): void {
    const { view, clockOffset } = this.state;
    this.screen.draw({ view, clockOffset, offline: this.feed.offline, message: this.message, busy: this.sender.busy });
    void this.odds.show(this.state);
    if (!this.seedAsked && !this.state.active && "fairness" in view && view.fairness && !view.fairness.seed) void this.revealSeed();
  }

  /** The game has ended on the table folded from the events, which holds its commitment but
   * not its seed (no event carries it): the service's view is read once for it. A seed still
   * kept back (a tournament deal played at other tables) stays unshown until a later visit. */
  private async revealSeed(): Promise<void> {
    this.seedAsked = true;
    try {
      const token = this.token();
      const { game } = await api.getGame(this.gameId, token ? { token } : {});
      if (!("players" in game) || !game.fairness?.seed) return;
      this.state.reveal(game.fairness);
      this.draw();
    } catch {
      /* the commitment stays shown; the page shows the seed when it is opened again */
    }
  }

  private fail(error: unknown): void {
    this.message = describeError(error);
    this.draw();
  }

  /** Events from anywhere (the log, the stream, a reply), taken once each in seq order. */
  private receive(events: readonly GameEvent[]): void {
    const ready = this.feed.ordered(events);
    // what the table already shows (the view read holds it) goes to the log at once
    let old = 0;
    if (!this.pacer.waiting) while (old < ready.length && (ready[old]?.version ?? 0) <= this.state.base) old += 1;
    if (old) {
      this.screen.record(ready.slice(0, old));
      this.screen.drawLog(this.state.view);
    }
    const moves = ready.slice(old);
    if (!moves.length) return;
    this.pacer.add(moves);
    if (this.state.settled) {
      // the table is about to move on: the controls shown are for a version gone
      this.state.hideControls();
      this.draw();
    }
  }

  /** The pacer shows one move: its events to the log, and onto the table. */
  private showMove(move: Move): void {
    this.screen.record(move.events);
    this.state.apply(move);
  }

  /** A batch of moves was shown: they are said, and the page drawn. */
  private movesShown(moves: Move[]): void {
    const view = this.state.view;
    this.screen.say(this.state.newer(moves).flatMap((m) => m.events.map((e) => describeEvent(e, (s) => nameOf(view, s)))));
    this.draw();
    if (!this.state.active) this.feed.close();
  }

  /** The service's view of the version shown (the table must be the one folded). */
  private merge(state: View): void {
    this.state.merge(state);
    window.clearTimeout(this.catchUpTimer);
  }

  /** A view of the service shown as it is. */
  private take(state: View): void {
    this.state.take(state);
    window.clearTimeout(this.catchUpTimer);
  }

  /** A view of the service (the reply to this seat's action, or a read). */
  private consider(state: View): void {
    if (this.state.broken || (state.status !== "active" && state.status !== "finished")) return this.take(state); // aborted or abandoned: no event says so
    const shown = this.state.view.version;
    if (state.version < shown) return; // the events went on since
    if (state.version === shown) {
      if (!this.pacer.waiting) this.merge(state);
      return; // else moves wait after it: it is already old
    }
    this.state.ahead = state;
    if (!this.pacer.waiting) this.catchUp();
  }

  /** A view ahead of every event received: the log is read for the missing ones, and if none came, the view is taken. */
  private catchUp(): void {
    window.clearTimeout(this.catchUpTimer);
    this.catchUpTimer = window.setTimeout(async () => {
      if (!this.state.ahead || this.pacer.waiting) return;
      await this.feed.load();
      const ahead = this.state.ahead;
      if (ahead && !this.pacer.waiting && ahead.version > this.state.view.version) {
        this.take(ahead);
        this.draw();
      }
    }, CATCH_UP_MS);
  }

  /** Nothing waits to be shown: the controls of the version shown. */
  private settle(): void {
    const ahead = this.state.ahead;
    if (ahead) {
      const shown = this.state.view.version;
      if (ahead.version === shown) this.merge(ahead);
      else if (ahead.version < shown) this.state.ahead = null;
      else return this.catchUp();
      this.draw();
    }
    if (this.state.settled || this.sender.busy) return;
    if (this.state.readNeeded) return void this.refresh();
    this.state.keepSeatActions();
    this.draw();
  }

  /** The service's view read (for the controls and the clock, or after a failure). */
  private refresh(): Promise<void> {
    return (this.refreshing ??= this.read());
  }

  private async read(): Promise<void> {
    let stale = false;
    try {
      const token = this.token();
      const { game } = await api.getGame(this.gameId, token ? { token } : {});
      if ("players" in game) {
        stale = game.version < this.state.view.version;
        this.consider(game as Game);
      }
    } catch (error) {
      this.message = describeError(error);
    } finally {
      this.refreshing = null;
    }
    this.draw();
    if (!this.state.active) this.feed.close();
    // a read may answer a version older than the events already shown (they travel
    // apart): while the controls are still wanted, read again
    else if (stale && !this.state.settled && !this.sender.busy && !this.state.ahead && !this.pacer.waiting) {
      this.rereadTimer = window.setTimeout(() => void this.refresh(), REREAD_MS);
    }
  }

  /** This seat's move sent; the reply's events and view taken as any others. */
  private async send(action: Action): Promise<void> {
    const token = this.token();
    if (!token || this.sender.busy || !this.state.settled) return;
    const reply = this.sender.act(action, token, this.state.view.version);
    this.message = "";
    this.pacer.fresh(); // the seat's own move shows at once
    this.draw();
    try {
      const { events, state } = await reply;
      this.receive(events);
      this.consider(state);
    } catch (error) {
      this.message = describeError(error);
      if (error instanceof TenApiError && error.status !== 503) await this.refresh();
    } finally {
      if (!this.state.settled && !this.pacer.waiting) this.settle();
      this.draw();
      if (!this.state.active) this.feed.close();
      else showOutcome(this.root);
    }
  }

  private async playAgain(): Promise<void> {
    const seat = mySeat(this.state.view);
    if (seat === null) return;
    try {
      await createTable(againBody(this.state.view.players, seat));
    } catch (error) {
      this.fail(error);
    }
  }
}
