/**
 * Paced play: the moves that arrive together (a reply with the bots' moves after the seat's
 * own, a burst of the event stream) are shown one move at a time, a move being the events
 * of one accepted action (one game version). The first waiting move shows at once, each
 * next one `delay()` after the one before; with no delay (`prefers-reduced-motion: reduce`,
 * or the player asked for "all at once") every waiting move shows in the same task, and
 * `skip()` shows them all now.
 */
import type { GameEvent } from "./events";
import { savedPace, savePace } from "./store";

export const PACES = { normal: 500, fast: 150, instant: 0 } as const;
export type Pace = keyof typeof PACES;

const REDUCED = window.matchMedia("(prefers-reduced-motion: reduce)");

export function reducedMotion(): boolean {
  return REDUCED.matches;
}

export function isPace(value: string | null): value is Pace {
  return value !== null && value in PACES;
}

/** The pace the player chose (remembered), "normal" until they choose. */
export function pace(): Pace {
  const saved = savedPace();
  return isPace(saved) ? saved : "normal";
}

export function choosePace(chosen: Pace): void {
  savePace(chosen);
}

/** Milliseconds between two moves shown: none with reduced motion. */
export function moveDelay(): number {
  return reducedMotion() ? 0 : PACES[pace()];
}

/** One move: the events of one version. */
export interface Move {
  version: number;
  events: GameEvent[];
}

export class Pacer {
  private readonly moves: Move[] = [];
  private timer = 0;
  private scheduled = false;
  private last = -Infinity; // performance.now() of the last move shown

  /**
   * `show(move)` brings one move onto the table; `shown(moves)` runs once after every batch
   * shown in one task (draw the page then); `idle()` when nothing waits any more.
   */
  constructor(
    private readonly delay: () => number,
    private readonly show: (move: Move) => void,
    private readonly shown: (moves: Move[]) => void,
    private readonly idle: () => void,
  ) {}

  get waiting(): number {
    return this.moves.length;
  }

  /** Queue events (in seq order); the moves are shown from the next task on. */
  add(events: readonly GameEvent[]): void {
    for (const event of events) {
      const tail = this.moves[this.moves.length - 1];
      if (tail && tail.version === event.version) tail.events.push(event);
      else this.moves.push({ version: event.version, events: [event] });
    }
    if (this.moves.length && !this.timer && !this.scheduled) {
      // a macrotask: every event that came in the same chunk of the stream is queued first
      this.scheduled = true;
      window.setTimeout(() => {
        this.scheduled = false;
        this.pump();
      }, 0);
    }
  }

  /** The next move shows at once (this seat's own, just sent): the pace is for the moves after it. */
  fresh(): void {
    this.last = -Infinity;
  }

  /** Show every waiting move now. */
  skip(): void {
    window.clearTimeout(this.timer);
    this.timer = 0;
    this.flush(this.moves.length);
  }

  /** The delay changed (a faster pace chosen): the next move comes by the new one. */
  repace(): void {
    if (!this.timer) return;
    window.clearTimeout(this.timer);
    this.timer = 0;
    this.pump();
  }

  stop(): void {
    window.clearTimeout(this.timer);
    this.timer = 0;
    this.moves.length = 0;
  }

  private pump(): void {
    if (this.timer || !this.moves.length) return;
    const delay = this.delay();
    if (delay <= 0) return this.flush(this.moves.length);
    const wait = this.last + delay - performance.now();
    if (wait > 0) {
      this.timer = window.setTimeout(() => {
        this.timer = 0;
        this.pump();
      }, wait);
      return;
    }
    this.flush(1);
    if (this.moves.length) {
      this.timer = window.setTimeout(() => {
        this.timer = 0;
        this.pump();
      }, delay);
    }
  }

  private flush(count: number): void {
    const batch = this.moves.splice(0, count);
    if (!batch.length) return;
    for (const move of batch) this.show(move);
    this.last = performance.now();
    this.shown(batch);
    if (!this.moves.length && !this.timer) this.idle();
  }
}
