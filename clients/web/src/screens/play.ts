/**
 * The lobby's "Play": a matchmaking ticket (live or correspondence, the table sizes accepted,
 * rated or casual), then its wait (time waited, the rating window, cancel) followed on the
 * ticket's event stream until it is matched: the seat is held as a joined one and the game
 * opens. The ticket is kept in localStorage, so a page opened again resumes the wait (the
 * ticket lives on the service whether or not the page is open).
 */
import { describeError, TenApiError } from "../api";
import { h, show } from "../dom";
import { list, num, t } from "../i18n";
import { cancelTicket, createTicket, getTicket, isFinal, SIZES, ticketStreamUrl, type Ticket, type TicketMode } from "../matchmaking";
import { heldTicket, holdSeat, holdTicket, playerId, savedName, savedPlayerToken, saveName } from "../store";
import { EventStream } from "../stream";
import { authMode } from "./lobby";

/** How often (seconds) a rated wait reads its ticket again, for its widened window. */
const WINDOW_READ_S = 20;

/** `m:ss` (or `h:mm:ss`) of a number of seconds, in the language's digits. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = (n: number) => num(n).padStart(2, num(0));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const rest = `${two(s % 60)}`;
  return hours ? `${num(hours)}:${two(minutes)}:${rest}` : `${num(minutes)}:${rest}`;
}

function summary(ticket: Pick<Ticket, "mode" | "sizes" | "rated">): string {
  return t("play.summary", {
    mode: t(`play.mode.${ticket.mode}.short`),
    sizes: list([...ticket.sizes].sort((a, b) => a - b).map((n) => num(n))),
    kind: t(ticket.rated ? "play.rated.short" : "play.casual.short"),
  });
}

/** The Play panel of the lobby; `stop` ends its stream and timers. */
export function playPanel(): { el: HTMLElement; stop: () => void } {
  const panel = new PlayPanel();
  return { el: panel.el, stop: () => panel.stop() };
}

class PlayPanel {
  readonly el = h("section", { class: "panel", "data-testid": "play-panel" });
  private stream: EventStream | null = null;
  private ticker = 0;
  private stopped = false;

  constructor() {
    const held = heldTicket();
    if (held) void this.resume(held.id, held.token);
    else this.drawForm();
  }

  stop(): void {
    this.stopped = true;
    this.unfollow();
  }

  private unfollow(): void {
    this.stream?.close();
    this.stream = null;
    window.clearInterval(this.ticker);
    this.ticker = 0;
  }

  private drawForm(message = "", notice = ""): void {
    this.unfollow();
    // a name of its own until the player gives one: one click plays
    const guest = t("play.guest", { n: playerId().slice(-4).toUpperCase() });
    const name = h("input", { id: "play-name", maxlength: 40, autocomplete: "nickname", value: savedName(), placeholder: guest });
    const modes = (["live", "correspondence"] as const).map((mode) =>
      h(
        "div",
        { class: "field check" },
        h("input", { type: "radio", name: "play-mode", id: `play-mode-${mode}`, value: mode, checked: mode === "live" }),
        h("label", { for: `play-mode-${mode}` }, t(`play.mode.${mode}`)),
      ),
    );
    const sizes = SIZES.map((n) => h("input", { type: "checkbox", id: `play-size-${n}`, value: String(n), checked: true }));
    const rated = h("input", { type: "checkbox", id: "play-rated", checked: true });
    const form = h(
      "form",
      {
        id: "play-form",
        onsubmit: async (event: Event) => {
          event.preventDefault();
          const chosen = sizes.filter((box) => box.checked).map((box) => Number(box.value));
          if (!chosen.length) return this.drawError(t("play.sizes.none"));
          const mode = (this.el.querySelector<HTMLInputElement>("input[name=play-mode]:checked")?.value ?? "live") as TicketMode;
          const who = name.value.trim() || guest;
          if (name.value.trim()) saveName(who);
          await this.play(mode, chosen, rated.checked, who);
        },
      },
      h("div", { class: "field" }, h("label", { for: "play-name" }, t("lobby.name")), name),
      h("fieldset", null, h("legend", null, t("play.mode")), modes),
      h(
        "fieldset",
        { class: "sizes" },
        h("legend", null, t("play.sizes")),
        sizes.map((box) => h("span", { class: "check" }, box, h("label", { for: box.id }, num(Number(box.value))))),
      ),
      h("div", { class: "field check" }, rated, h("label", { for: "play-rated" }, t("play.rated"))),
      h("button", { type: "submit", id: "play-submit", class: "primary" }, t("play.submit")),
    );
    show(
      this.el,
      h("h2", null, t("play.heading")),
      h("p", { class: "small muted" }, t("play.intro")),
      notice ? h("p", { class: "notice", role: "status" }, notice) : null,
      form,
      h("p", { role: "alert", class: "error", "data-testid": "play-error" }, message),
    );
  }

  private drawError(message: string): void {
    const alert = this.el.querySelector("[data-testid=play-error]");
    if (alert) alert.textContent = message;
  }

  private async play(mode: TicketMode, sizes: number[], rated: boolean, name: string): Promise<void> {
    const jwt = savedPlayerToken();
    const body = { mode, sizes, rated, name, ...(authMode() === "open" && !jwt ? { player_id: playerId() } : {}) };
    let ticket: Ticket;
    try {
      ticket = await createTicket(body, jwt || undefined);
    } catch (error) {
      return this.drawError(describeError(error));
    }
    const token = ticket.ticket_token ?? jwt;
    holdTicket({ id: ticket.id, mode: ticket.mode, token });
    this.follow(ticket, token);
  }

  /** The held ticket read again (a page opened again): its wait goes on, or its end is told. */
  private async resume(id: string, token: string): Promise<void> {
    show(this.el, h("h2", null, t("play.heading")), h("p", { class: "muted" }, t("common.loading")));
    try {
      const ticket = await getTicket(id, token);
      if (!this.stopped) this.follow(ticket, token);
    } catch (error) {
      if (error instanceof TenApiError && (error.status === 404 || error.status === 401 || error.status === 403)) holdTicket(null);
      if (!this.stopped) this.drawForm(describeError(error));
    }
  }

  private follow(ticket: Ticket, token: string): void {
    this.unfollow();
    if (this.stopped) return;
    if (this.ended(ticket)) return;
    let received = performance.now();
    let current = ticket;
    const waited = h("p", { "data-testid": "play-waited" });
    const window_ = h("p", { "data-testid": "play-window" });
    const tick = () => {
      waited.textContent = t("play.waited", { time: duration(current.waited + (performance.now() - received) / 1000) });
    };
    const update = (next: Ticket) => {
      current = next;
      received = performance.now();
      tick();
      window_.textContent = next.window ? t("play.window", { low: num(next.window.low), high: num(next.window.high) }) : "";
      window_.hidden = !next.window;
    };
    update(ticket);
    const cancel = h("button", { type: "button", id: "play-cancel", class: "danger", onclick: () => void this.cancel(current.id, token) }, t("play.cancel"));
    show(
      this.el,
      h("h2", null, t("play.heading")),
      h(
        "div",
        { "data-testid": "play-waiting", "data-ticket-id": ticket.id },
        h("p", { role: "status" }, h("strong", null, t("play.waiting")), " · ", summary(ticket)),
        waited,
        window_,
        cancel,
      ),
      h("p", { role: "alert", class: "error", "data-testid": "play-error" }),
    );
    const stream = new EventStream(ticketStreamUrl(ticket.id), token);
    this.stream = stream;
    let reads = 0;
    this.ticker = window.setInterval(() => {
      tick();
      // a rated ticket's window widens with the wait, which is no change of the ticket: it is
      // read again now and then
      if (current.window && ++reads % WINDOW_READ_S === 0) {
        void getTicket(current.id, token).then(
          (next) => {
            if (this.stream === stream && next.id === current.id && !this.ended(next)) update(next);
          },
          () => undefined,
        );
      }
    }, 1000);
    stream.addEventListener("ticket", (event) => {
      let next: Ticket;
      try {
        next = JSON.parse((event as MessageEvent<string>).data) as Ticket;
      } catch {
        return;
      }
      if (next.id !== ticket.id) return;
      if (!this.ended(next)) update(next);
    });
    stream.onerror = () => {
      // refused for good (the ticket gone, or no longer ours): read it once to tell why
      if (stream.readyState === EventStream.CLOSED && this.stream === stream) void this.resume(ticket.id, token);
    };
  }

  /** A final state shown (and the ticket let go); false while it waits. */
  private ended(ticket: Ticket): boolean {
    if (!isFinal(ticket.status)) return false;
    this.unfollow();
    holdTicket(null);
    if (ticket.status === "matched" && ticket.game_id) {
      if (ticket.seat !== null && ticket.seat_token) holdSeat(ticket.game_id, { seat: ticket.seat, token: ticket.seat_token });
      show(this.el, h("h2", null, t("play.heading")), h("p", { role: "status" }, t("play.matched")));
      location.hash = `#/game/${encodeURIComponent(ticket.game_id)}`;
    } else this.drawForm("", ticket.status === "expired" ? t("play.expired") : t("play.cancelled"));
    return true;
  }

  private async cancel(id: string, token: string): Promise<void> {
    try {
      this.ended(await cancelTicket(id, token));
    } catch (error) {
      if (error instanceof TenApiError && error.code === "ticket_already_matched") return this.resume(id, token);
      this.drawError(describeError(error));
    }
  }
}
