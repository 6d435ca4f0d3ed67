/**
 * The vacation panel (the lobby's): a player's days off, during which the clocks of their
 * games played by the day stand still (`/v1/players/{id}/vacation`). It shows whether the
 * player is on vacation and what is left of this year's allowance, counted down while on,
 * and starts or ends a vacation. The player is the one the page knows: the signed-in JWT's,
 * else (a service that runs open) this browser's player id; with identities configured and
 * no JWT there is nobody to name.
 */
import { bearer, type components } from "@ten/client";
import { answered, api, describeError } from "../api";
import { h, show } from "../dom";
import { t, tn, when } from "../i18n";
import { playerId, savedPlayerToken, tokenSubject } from "../store";
import { authMode } from "./lobby";
import { duration } from "./play";

type Vacation = components["schemas"]["VacationOut"];

const DAY = 86400;
/** Seconds between reads once the count shown ran out while the service still says "on"
 * (its `days_left` is rounded). */
const READ_AGAIN_S = 5;

/** Who the page names and how: the JWT's player, or this browser's on an open service. */
function me(): { id: string; token?: string } | null {
  const jwt = savedPlayerToken();
  const subject = jwt ? tokenSubject(jwt) : null;
  if (jwt && subject) return { id: subject, token: jwt };
  return authMode() === "open" ? { id: playerId() } : null;
}

/** The vacation panel; `stop` ends its count. */
export function vacationPanel(): { el: HTMLElement; stop: () => void } {
  const panel = new VacationPanel();
  return { el: panel.el, stop: () => panel.stop() };
}

class VacationPanel {
  readonly el = h("section", { class: "panel", "data-testid": "vacation-panel", "aria-labelledby": "vacation-heading" });
  private ticker = 0;
  private stopped = false;
  private readonly who = me();

  constructor() {
    if (!this.who) {
      show(this.el, this.heading(), h("p", { class: "muted", "data-testid": "vacation-signin" }, t("vacation.signin")));
      return;
    }
    show(this.el, this.heading(), h("p", { class: "muted" }, t("common.loading")));
    void this.read();
  }

  stop(): void {
    this.stopped = true;
    window.clearInterval(this.ticker);
  }

  private heading(): HTMLElement {
    return h("h2", { id: "vacation-heading" }, t("vacation.heading"));
  }

  private call(on?: boolean) {
    const who = this.who!;
    const options = {
      params: { path: { player_id: who.id } },
      ...(who.token ? { headers: { Authorization: bearer(who.token) } } : {}),
    };
    return on === undefined
      ? api.raw.GET("/v1/players/{player_id}/vacation", options)
      : api.raw.PUT("/v1/players/{player_id}/vacation", { ...options, body: { on } });
  }

  private async read(): Promise<void> {
    try {
      this.draw(answered(await this.call()));
    } catch (error) {
      if (!this.stopped) show(this.el, this.heading(), this.alert(describeError(error)));
    }
  }

  private async switch(on: boolean, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      this.draw(answered(await this.call(on)));
    } catch (error) {
      button.disabled = false;
      const alert = this.el.querySelector("[data-testid=vacation-error]");
      if (alert) alert.textContent = describeError(error);
    }
  }

  private alert(message: string): HTMLElement {
    return h("p", { role: "alert", class: "error", "data-testid": "vacation-error" }, message);
  }

  /** The state the service answered; while on, the allowance left counted down each second
   * and, once it ran out, read again until the service says the vacation ended. */
  private draw(vacation: Vacation): void {
    window.clearInterval(this.ticker);
    if (this.stopped) return;
    const received = performance.now();
    const total = Math.round(vacation.days_left * DAY);
    const left = h("p", {
      "data-testid": "vacation-left",
      "data-days-left": String(vacation.days_left),
      "data-allowance": String(vacation.allowance),
    });
    const count = () => {
      const elapsed = vacation.on ? Math.floor((performance.now() - received) / 1000) : 0;
      const seconds = Math.max(0, total - elapsed);
      left.dataset.secondsLeft = String(seconds);
      const days = Math.floor(seconds / DAY);
      left.textContent = tn("vacation.left", days, { time: duration(seconds % DAY) });
      return seconds;
    };
    count();
    const spent = !vacation.on && vacation.days_left <= 0;
    const state = vacation.on
      ? t("vacation.on", { since: vacation.since ? when(vacation.since) : "" })
      : t(spent ? "vacation.spent" : "vacation.off");
    const button: HTMLButtonElement | null = vacation.on
      ? h("button", { type: "button", id: "vacation-end", onclick: () => void this.switch(false, button!) }, t("vacation.end"))
      : spent
        ? null
        : h("button", { type: "button", id: "vacation-start", class: "primary", onclick: () => void this.switch(true, button!) }, t("vacation.start"));
    show(
      this.el,
      this.heading(),
      h("p", { class: "small muted" }, tn("vacation.intro", vacation.allowance)),
      h("p", { role: "status", "data-testid": "vacation-state", "data-on": vacation.on ? "1" : "0", "data-since": vacation.since ?? "" }, state),
      left,
      button,
      this.alert(""),
    );
    if (!vacation.on) return;
    let waited = 0;
    this.ticker = window.setInterval(() => {
      // the allowance ran out (as far as this count knows): the service says when it ended
      if (count() === 0 && waited++ % READ_AGAIN_S === 0) void this.read();
    }, 1000);
  }
}
