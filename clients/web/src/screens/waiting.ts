/**
 * The waiting room of an open table: its invite link, its seats (who joined, bots, this
 * browser's), the host's start and cancel, and the form to join. The game's first event
 * (game_started, on its stream) says the table has started: no polling for it; the seats
 * (joins make no event) are read again now and then, and whenever the stream (re)opens.
 */
import { bearer, type Problem, type Table } from "@ten/client";
import { api, describeError, TenApiError } from "../api";
import { copyButton, h, show, shown } from "../dom";
import { randomEntropy, sealedLine } from "../fair";
import { t } from "../i18n";
import { heldSeat, holdSeat, playerId, savedName, saveName, type HeldSeat } from "../store";
import { EventStream } from "../stream";
import { botBadge, seatName } from "../table";
import { authMode } from "./lobby";

/** How long the waiting room goes without re-reading its seats (who joined, or left). */
const SEATS_REFRESH_MS = 10_000;

/** The invite link of a table: the hash route, so the invite code never reaches a server log. */
function inviteLink(gameId: string, invite: string | null | undefined): string {
  const base = `${location.origin}${location.pathname}#/join/${encodeURIComponent(gameId)}`;
  return invite ? `${base}?invite=${encodeURIComponent(invite)}` : base;
}

/** The waiting room of `table` drawn into `root` until it starts (`started`); returns how to stop it. */
export function waitingRoom(root: HTMLElement, table: Table, invite: string | null, started: () => void): () => void {
  const room = new WaitingRoom(root, table, invite, started);
  return () => room.stop();
}

class WaitingRoom {
  private timer = 0;
  private stream: EventStream | null = null;

  constructor(
    private readonly root: HTMLElement,
    private current: Table,
    private readonly invite: string | null,
    private readonly started: () => void,
  ) {
    this.draw();
    if (current.status === "open") {
      this.follow();
      this.timer = window.setTimeout(() => void this.refresh(), SEATS_REFRESH_MS);
    }
  }

  stop(): void {
    window.clearTimeout(this.timer);
    this.stream?.close();
    this.stream = null;
  }

  private draw(message = ""): void {
    const current = this.current;
    const held = heldSeat(current.id);
    show(
      this.root,
      h("h1", null, t("wait.heading")),
      current.status === "cancelled" ? h("p", { class: "notice" }, t("wait.cancelled")) : null,
      this.inviteEl(held),
      h(
        "section",
        { class: "panel" },
        h("h2", null, t("wait.seats")),
        this.seatsEl(held),
        held ? h("p", null, t("wait.seated", { n: held.seat + 1 })) : null,
        held?.host && current.status === "open" ? this.hostControls() : null,
        sealedLine(current.fairness),
      ),
      !held && current.status === "open" ? this.joinForm() : null,
      message ? h("p", { role: "alert", class: "error" }, message) : null,
    );
    shown(this.root, "waiting");
  }

  private inviteEl(held: HeldSeat | undefined): HTMLElement {
    const link = inviteLink(this.current.id, held?.invite ?? this.invite);
    const copy = copyButton(link, t("common.copy"), t("common.copied"));
    return h(
      "section",
      { class: "panel" },
      h("label", { for: "invite-link" }, t("wait.invite")),
      h("div", { class: "row" }, h("input", { id: "invite-link", "data-testid": "invite-link", readonly: true, value: link }), copy),
      h("p", { class: "small muted" }, t("wait.invite.help")),
    );
  }

  private seatsEl(held: HeldSeat | undefined): HTMLElement {
    return h(
      "ul",
      { class: "plain", "data-testid": "table-seats" },
      this.current.seats.map((seat) =>
        h(
          "li",
          { "data-seat": seat.seat },
          t("common.seat", { n: seat.seat + 1 }),
          ": ",
          seat.taken ? seatName(seat) : h("em", null, t("wait.open")),
          seat.bot ? h("span", { class: "badge" }, botBadge(seat.bot)) : null,
          held?.seat === seat.seat ? h("span", { class: "badge" }, t("common.you")) : null,
        ),
      ),
    );
  }

  private hostControls(): HTMLElement {
    return h(
      "div",
      { class: "row" },
      h("button", { type: "button", id: "start-now", class: "primary", onclick: () => this.startNow() }, t("wait.start")),
      h("button", { type: "button", id: "cancel-table", class: "danger", onclick: () => this.cancel() }, t("wait.cancel")),
    );
  }

  /** The join: a name, and what this seat adds to the deal (random from this browser, the
   * player's own, or none), sent with the join, after the table's commitment was published. */
  private joinForm(): HTMLElement {
    const name = h("input", { id: "join-name", required: true, maxlength: 40, autocomplete: "nickname", value: savedName() });
    const entropy = h("input", { id: "join-entropy", maxlength: 64, autocomplete: "off", spellcheck: "false", value: randomEntropy(), "aria-describedby": "join-entropy-help" });
    return h(
      "form",
      { class: "panel", id: "join-form", onsubmit: (event: Event) => {
        event.preventDefault();
        return this.join(name.value.trim(), entropy.value.trim());
      } },
      h("h2", null, t("wait.join")),
      h("div", { class: "field" }, h("label", { for: "join-name" }, t("lobby.name")), name),
      h(
        "div",
        { class: "field" },
        h("label", { for: "join-entropy" }, t("fair.entropy")),
        entropy,
        h("p", { id: "join-entropy-help", class: "small muted" }, t("fair.entropy.help")),
      ),
      h("button", { type: "submit", id: "join-submit", class: "primary" }, t("wait.join.submit")),
    );
  }

  private async join(name: string, entropy: string): Promise<void> {
    saveName(name);
    const current = this.current;
    try {
      const body = {
        name,
        ...(entropy ? { entropy } : {}),
        ...(this.invite ? { invite: this.invite } : {}),
        ...(authMode() === "open" ? { player_id: playerId() } : {}),
      };
      const joined = await api.joinGame(current.id, body, { idempotencyKey: crypto.randomUUID() });
      holdSeat(current.id, { seat: joined.seat, token: joined.token });
      if (joined.game) this.started();
      else if (joined.table) {
        this.current = joined.table;
        this.draw();
      }
    } catch (error) {
      this.draw(describeError(error));
    }
  }

  private async startNow(): Promise<void> {
    const host = heldSeat(this.current.id)?.host;
    try {
      await api.startGame(this.current.id, host ? { token: host } : {});
      this.started();
    } catch (error) {
      this.draw(describeError(error));
    }
  }

  private async cancel(): Promise<void> {
    const host = heldSeat(this.current.id)?.host;
    if (!confirm(t("wait.cancel.confirm"))) return;
    const { data, error, response } = await api.raw.POST("/v1/games/{game_id}/cancel", {
      params: { path: { game_id: this.current.id } },
      headers: host ? { Authorization: bearer(host) } : {},
    });
    if (data) {
      this.current = data;
      this.stop();
      this.draw();
    } else this.draw(describeError(new TenApiError(response, error as Problem | undefined)));
  }

  /** The seats read again (and whether the table started meanwhile). */
  private async refresh(): Promise<void> {
    const id = this.current.id;
    try {
      const { game } = await api.getGame(id, heldSeat(id) ? { token: heldSeat(id)?.token ?? "" } : {});
      if ("players" in game) return this.started();
      if (game.version !== this.current.version || game.status !== this.current.status) {
        this.current = game as Table;
        const focused = document.activeElement;
        if (!focused || focused === document.body || !this.root.contains(focused)) this.draw();
      }
    } catch {
      /* try again on the next tick */
    }
    if (this.current.status === "open") this.timer = window.setTimeout(() => void this.refresh(), SEATS_REFRESH_MS);
    else this.stop();
  }

  private follow(): void {
    this.stream = new EventStream(api.eventStreamUrl(this.current.id, 0), heldSeat(this.current.id)?.token);
    this.stream.addEventListener("game_started", () => {
      this.stop();
      this.started();
    });
    this.stream.onopen = () => void this.refresh();
  }
}
