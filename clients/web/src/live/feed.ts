/**
 * The live table's events from the service: the game's log read after the last event taken
 * (all of it at first, and again when a gap shows), then its stream (`EventStream`, which
 * reconnects by itself with `Last-Event-ID`; a refused stream is opened again later). Every
 * event, from here or from a reply, is taken once, in seq order (`ordered`).
 */
import { bearer } from "@ten/client";
import { answered, api } from "../api";
import type { GameEvent } from "../events";
import { EventStream } from "../stream";

/** The events the stream sends (its `event:` names). */
const EVENT_TYPES = [
  "game_started", "turn_started", "card_drawn", "auction_started", "bid_placed", "bid_passed",
  "auction_won", "wild_discarded", "busted", "stopped", "card_bought", "buy_declined",
  "final_buy_started", "timed_out", "seat_taken_over", "seat_reclaimed", "game_finished",
];

/** What the feed tells the table. */
export interface FeedHooks {
  /** Events received (the log's, the stream's), in any order, perhaps again. */
  events(events: readonly GameEvent[]): void;
  /** The connection was lost (`offline` is now true). */
  offline(): void;
  /** The stream opened again after a loss: what was missed comes through `Last-Event-ID`. */
  back(): void;
  /** The log could not be read. */
  failed(error: unknown): void;
  /** Whether the game is still active (an ended game has no stream to follow). */
  active(): boolean;
}

/** Events taken once each, in seq order, whatever order they come in. */
export class EventOrder {
  private last = 0; // the seq of the last event taken
  private readonly early = new Map<number, GameEvent>(); // events that came before one in front of them

  get received(): number {
    return this.last;
  }

  /** Some events wait for one in front of them. */
  get gap(): boolean {
    return this.early.size > 0;
  }

  /** The events now in order after the last taken (each once), taken. */
  take(events: readonly GameEvent[]): GameEvent[] {
    for (const e of events) if (e.seq > this.last) this.early.set(e.seq, e);
    const ready: GameEvent[] = [];
    for (let e = this.early.get(this.last + 1); e; e = this.early.get(this.last + 1)) {
      this.early.delete(e.seq);
      this.last = e.seq;
      ready.push(e);
    }
    return ready;
  }
}

export class Feed {
  /** The connection is lost (or the server asked to reconnect): the page says so. */
  offline = false;
  private readonly order = new EventOrder();
  private loaded = false; // the log was read once
  private loading: Promise<void> | null = null;
  private stream: EventStream | null = null;
  private ended = false; // the stream said game_finished: it closes, and that is no lost connection
  private failures = 0; // reconnections refused in a row
  private retryTimer = 0;

  constructor(
    private readonly gameId: string,
    private readonly token: () => string | undefined,
    private readonly hooks: FeedHooks,
  ) {}

  /** The events in seq order after the last taken; a gap sends for the log (it has what is missing). */
  ordered(events: readonly GameEvent[]): GameEvent[] {
    const ready = this.order.take(events);
    if (this.order.gap && this.loaded) void this.load();
    return ready;
  }

  /** The game's log after the last event received (all of it at first). */
  load(): Promise<void> {
    return (this.loading ??= this.readLog().finally(() => {
      this.loading = null;
    }));
  }

  private async readLog(): Promise<void> {
    try {
      let more = true;
      while (more) {
        const page = answered(
          await api.raw.GET("/v1/games/{game_id}/events", {
            params: { path: { game_id: this.gameId }, query: { after: this.order.received } },
            headers: seatHeaders(this.token()),
          }),
        );
        this.hooks.events(page.events as GameEvent[]);
        more = page.more && page.events.length > 0;
      }
      this.loaded = true;
    } catch (error) {
      this.hooks.failed(error);
    }
  }

  /** Follows the game's stream from the last event received (an ended game's: none). */
  follow(): void {
    if (!this.hooks.active()) return;
    this.stream?.close();
    const stream = new EventStream(api.eventStreamUrl(this.gameId, this.order.received), this.token());
    this.stream = stream;
    const onEvent = (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as GameEvent;
      if (event.type === "game_finished") this.ended = true;
      this.offline = false;
      this.hooks.events([event]);
    };
    for (const type of EVENT_TYPES) stream.addEventListener(type, onEvent as EventListener);
    // the server ends a stream it cannot serve on (its store failed, this page fell too far
    // behind) with a `reconnect` event: the stream reconnects by itself after the `retry`
    // the server set, resuming with Last-Event-ID
    stream.addEventListener("reconnect", () => {
      this.offline = true;
      this.hooks.offline();
    });
    stream.onerror = () => this.dropped();
    stream.onopen = () => {
      this.failures = 0;
      if (!this.offline) return;
      this.offline = false;
      this.hooks.back(); // anything missed while away comes through Last-Event-ID; the controls from a read
    };
  }

  /** The stream failed: the game ended, it reconnects by itself, or (refused) it is opened again later. */
  private dropped(): void {
    if (this.ended || !this.hooks.active()) return this.close();
    this.offline = true;
    this.hooks.offline();
    // a refused reconnection (503/429: the server holds all the streams it may) makes
    // the stream give up for good: open a new one later, resuming after the last event
    if (this.stream?.readyState === EventStream.CLOSED) {
      this.failures += 1;
      window.clearTimeout(this.retryTimer);
      this.retryTimer = window.setTimeout(() => this.follow(), Math.min(30_000, 1000 * 2 ** this.failures));
    }
  }

  /** The game ended: no more stream. */
  close(): void {
    this.stream?.close();
  }

  stop(): void {
    window.clearTimeout(this.retryTimer);
    this.close();
  }
}

/** The live reads a seated player makes as one (a duplicate round's game is theirs alone while
 * its deal is still played elsewhere); the SDK's listEvents and getOdds take no token. */
export function seatHeaders(token: string | undefined): Record<string, string> {
  return token ? { Authorization: bearer(token) } : {};
}
