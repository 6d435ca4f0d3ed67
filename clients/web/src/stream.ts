/**
 * A server-sent event stream read with `fetch`, so that it can send `Authorization` (an
 * `EventSource` sends no header of its own): a seat following its own game of a duplicate
 * tournament round is recognised by its token while the deal is still played elsewhere.
 *
 * It behaves as an `EventSource` does (the HTML standard's "server-sent events"): each
 * message is dispatched as a `MessageEvent` named by its `event:` field; `id:` is sent back
 * as `Last-Event-ID` on reconnection; a connection that drops or ends is opened again after
 * the `retry:` the server set; an answer that is not a 200 `text/event-stream` fails it for
 * good (`readyState` CLOSED). `onopen` and `onerror` are called as an EventSource's are.
 */

import { bearer } from "@ten/client";

/** The reconnection delay until the server sets one (`retry:`), as browsers have it. */
const RETRY_MS = 3000;

export class EventStream extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;

  readyState: number = EventStream.CONNECTING;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;

  private lastEventId = "";
  private retryMs = RETRY_MS;
  private aborter: AbortController | null = null;
  private timer = 0;

  /** `token`: sent as `Authorization: Bearer <token>` on every connection. */
  constructor(
    readonly url: string,
    private readonly token?: string,
  ) {
    super();
    void this.connect();
  }

  close(): void {
    this.readyState = EventStream.CLOSED;
    window.clearTimeout(this.timer);
    this.aborter?.abort();
    this.aborter = null;
  }

  private async connect(): Promise<void> {
    const aborter = new AbortController();
    this.aborter = aborter;
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    if (this.token) headers.Authorization = bearer(this.token);
    if (this.lastEventId) headers["Last-Event-ID"] = this.lastEventId;
    let response: Response;
    try {
      response = await fetch(this.url, { headers, cache: "no-store", signal: aborter.signal });
    } catch {
      return this.dropped(aborter); // a network error: try again
    }
    if (aborter.signal.aborted) return;
    const type = response.headers.get("Content-Type") ?? "";
    if (response.status !== 200 || !/^text\/event-stream\s*(;|$)/i.test(type) || !response.body) {
      void response.body?.cancel().catch(() => undefined);
      return this.fail();
    }
    this.readyState = EventStream.OPEN;
    this.onopen?.();
    try {
      await this.read(response.body, aborter);
    } catch {
      /* the connection dropped */
    }
    this.dropped(aborter);
  }

  /** The connection ended or dropped: reconnect after the delay (unless it was closed). */
  private dropped(aborter: AbortController): void {
    if (aborter.signal.aborted || this.readyState === EventStream.CLOSED) return;
    this.readyState = EventStream.CONNECTING;
    this.onerror?.();
    if (this.readyState !== EventStream.CONNECTING) return; // onerror closed it
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => void this.connect(), this.retryMs);
  }

  /** The server refused the stream: it is not opened again. */
  private fail(): void {
    if (this.readyState === EventStream.CLOSED) return;
    this.readyState = EventStream.CLOSED;
    this.aborter = null;
    this.onerror?.();
  }

  /** The stream's lines, parsed as the standard says, until it ends or is closed. */
  private async read(body: ReadableStream<Uint8Array>, aborter: AbortController): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder(); // UTF-8, a leading BOM dropped
    let buffer = "";
    let data: string[] = [];
    let event = "";
    let eventId = this.lastEventId;
    let cr = false; // the last chunk ended with CR: an LF opening the next one ends no line
    const line = (text: string) => {
      if (text === "") {
        // dispatch
        this.lastEventId = eventId;
        if (data.length) {
          const message = new MessageEvent(event || "message", { data: data.join("\n"), lastEventId: eventId });
          if (!aborter.signal.aborted) this.dispatchEvent(message);
        }
        data = [];
        event = "";
        return;
      }
      if (text.startsWith(":")) return; // a comment (a keep-alive)
      const colon = text.indexOf(":");
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? "" : text.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id") {
        if (!value.includes("\0")) eventId = value;
      } else if (field === "retry" && /^[0-9]+$/.test(value)) this.retryMs = Number(value);
    };
    for (;;) {
      const { done, value } = await reader.read();
      if (done || aborter.signal.aborted) return; // an event not ended by a blank line is dropped
      buffer += decoder.decode(value, { stream: true });
      if (cr && buffer.startsWith("\n")) buffer = buffer.slice(1);
      cr = false;
      let start = 0;
      for (let i = 0; i < buffer.length; i += 1) {
        const c = buffer[i];
        if (c !== "\r" && c !== "\n") continue;
        line(buffer.slice(start, i));
        if (c === "\r") {
          if (i + 1 === buffer.length) cr = true;
          else if (buffer[i + 1] === "\n") i += 1;
        }
        start = i + 1;
      }
      buffer = buffer.slice(start);
    }
  }
}
