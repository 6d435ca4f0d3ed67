/**
 * The live table on the page: its head (status, last move, offline, error), the results and
 * where to go next once it ends, the board, the seat's controls, the odds, the players with
 * their clocks, the fair deal (`../fair.ts`), the pace and the event log. The moves shown are said by a live region that
 * stays in the document while the table is redrawn. Keyboard users keep their place across
 * redraws; when the game ends the results come into view, focused.
 */
import type { Action } from "@ten/client";
import { controlsEl } from "../controls";
import { h, show, shown } from "../dom";
import { describeEvent, type GameEvent } from "../events";
import { fairnessEl } from "../fair";
import { t } from "../i18n";
import { heldSeat } from "../store";
import { boardEl, clockText, mySeat, nameOf, playersEl, resultsEl, statusLine, type View } from "../table";
import type { PaceControl } from "./pace";

/** The sentences the live region says after one batch of moves at most (the log has them all). */
const ANNOUNCED = 8;
/** The log shows the last entries only. */
const LOG_SHOWN = 60;

/** What stays the same for the whole table. */
export interface ScreenParts {
  gameId: string;
  send: (action: Action) => void;
  playAgain: () => void;
  pace: PaceControl;
  odds: HTMLElement;
  /** "Notify me when it's my turn", for a seat of a game played by the day (else null). */
  notify: HTMLElement | null;
}

/** What one drawing shows. */
export interface Drawing {
  view: View;
  clockOffset: number;
  offline: boolean;
  message: string;
  busy: boolean;
}

export class LiveScreen {
  private readonly log: GameEvent[] = [];
  // focusable: a keyboard can scroll it (axe: scrollable-region-focusable); the moves are
  // announced by the live region below, so the log itself is not one
  private readonly logEl = h("ol", { class: "log", "data-testid": "event-log", tabindex: "0", "aria-label": t("table.log") });
  // the moves as they are shown, said by screen readers: a live region that stays in the
  // document while the table is redrawn (one put in again with each redraw may go unsaid);
  // the same words stand under the status line
  private readonly announcer = h("div", { class: "sr-only", "data-testid": "announcer", "aria-live": "polite", "aria-atomic": "true" });
  private focusKey: string | undefined; // the control a keyboard user was on
  private firstDraw = true;
  private shownEnd: boolean; // the end of the game was brought into view
  private readonly onFocus = (event: FocusEvent) => {
    const el = event.target as HTMLElement;
    this.focusKey = el.id || el.dataset.action || this.focusKey;
  };

  constructor(
    private readonly root: HTMLElement,
    first: View,
    private readonly parts: ScreenParts,
  ) {
    this.shownEnd = first.status !== "active";
    document.body.appendChild(this.announcer);
    root.addEventListener("focusin", this.onFocus);
  }

  /** Events into the log (drawn with the table). */
  record(events: readonly GameEvent[]): void {
    this.log.push(...events);
  }

  /** The moves just shown, said (the last few sentences). */
  say(sentences: readonly string[]): void {
    if (sentences.length) this.announcer.textContent = sentences.slice(-ANNOUNCED).join(" ");
  }

  drawLog(view: View): void {
    const entries = this.log.slice(-LOG_SHOWN);
    this.logEl.replaceChildren(...entries.map((e) => h("li", { "data-seq": e.seq }, describeEvent(e, (s) => nameOf(view, s)))));
    this.logEl.scrollTop = this.logEl.scrollHeight;
  }

  draw(drawing: Drawing): void {
    const active = document.activeElement;
    const ours = !active || active === document.body || this.root.contains(active);
    const { view } = drawing;
    const finished = view.status !== "active";
    show(this.root, this.head(drawing), finished && view.results ? resultsEl(view, view.results) : null, this.next(view), this.layout(drawing));
    this.drawLog(view);
    shown(this.root, finished ? "results" : "table");
    if (this.firstDraw) {
      this.firstDraw = false;
      performance.mark("ten:interactive");
    }
    if (finished && !this.shownEnd) {
      // the game just ended: the results (above the table) come into view, focused
      this.shownEnd = true;
      const results = this.root.querySelector<HTMLElement>("[data-testid=results]");
      results?.scrollIntoView({ block: "start" });
      results?.focus({ preventScroll: true });
      return;
    }
    if (ours) this.refocus();
  }

  private head({ view, offline, message }: Drawing): HTMLElement {
    const said = this.announcer.textContent;
    return h(
      "div",
      { class: "table-head" },
      h("h1", { "data-testid": "status" }, statusLine(view)),
      said ? h("p", { class: "small", "data-testid": "last-move", "aria-hidden": "true" }, said) : null,
      mySeat(view) === null ? h("p", { class: "muted" }, t("table.spectator")) : null,
      offline ? h("p", { class: "notice", role: "status" }, t("common.offline")) : null,
      message ? h("p", { class: "error", role: "alert" }, message) : null,
    );
  }

  /** Where an ended game leads: its tournament, or a table like it; its review. */
  private next(view: View): HTMLElement | null {
    const seat = mySeat(view);
    if (view.status === "active" || (seat === null && view.status !== "finished")) return null;
    const { gameId } = this.parts;
    const tournament = heldSeat(gameId)?.tournament;
    return h(
      "div",
      { class: "row" },
      // a tournament's game leads back to its tournament (its next round), not to a new table
      tournament
        ? h("a", { href: `#/tournaments/${encodeURIComponent(tournament)}`, class: "button primary", "data-testid": "to-tournament" }, t("tour.back"))
        : seat !== null
          ? h("button", { type: "button", id: "play-again", class: "primary", onclick: this.parts.playAgain }, t("results.again"))
          : null,
      // only a finished game is reviewed (not an aborted or abandoned one)
      view.status === "finished" ? h("a", { href: `#/replay/${encodeURIComponent(gameId)}?review`, class: "button", "data-testid": "to-review" }, t("results.review")) : null,
    );
  }

  private layout({ view, clockOffset, busy }: Drawing): HTMLElement {
    const now = Date.now() / 1000 + clockOffset;
    const { send, odds, pace, notify } = this.parts;
    return h(
      "div",
      { class: "layout" },
      h("div", { class: "col-main" }, boardEl(view), controlsEl(view, send, busy), odds),
      h(
        "div",
        { class: "col-side" },
        playersEl(view, now),
        fairnessEl(this.parts.gameId, "fairness" in view ? view.fairness : null, view.status !== "active"),
        view.status === "active" ? notify : null,
        h("section", { class: "panel" }, h("h2", null, t("table.log")), pace.el(), this.logEl),
      ),
    );
  }

  /** Keyboard users keep their place: the control they were on, else (when it is their turn
   * again) the first of their controls. */
  private refocus(): void {
    const key = this.focusKey;
    if (!key) return;
    const again = [...this.root.querySelectorAll<HTMLElement>("[id], [data-action]")].find(
      (el) => (el.id === key || el.dataset.action === key) && !(el as HTMLButtonElement).disabled,
    );
    (again ?? this.root.querySelector<HTMLElement>("[data-testid=actions] button:not([disabled])"))?.focus({ preventScroll: true });
  }

  /** The running clock's seconds, between two drawings. */
  tickClocks(view: View, clockOffset: number): void {
    if (!("clock" in view) || !view.clock || view.status !== "active") return;
    const now = Date.now() / 1000 + clockOffset;
    for (const el of this.root.querySelectorAll<HTMLElement>("[data-testid=clock]")) {
      const text = clockText(view, Number(el.dataset.seat), now);
      if (text !== null) el.textContent = `◷ ${text}`;
    }
  }

  stop(): void {
    this.announcer.remove();
    this.root.removeEventListener("focusin", this.onFocus);
  }
}
