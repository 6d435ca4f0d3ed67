/** The notifications panel (the lobby's, and beside a table played by the day): "Notify me
 * when it's my turn", and how to stop it. */
import { describeError } from "../api";
import { h, show } from "../dom";
import { t } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { notifying, pushSupported, startNotifying, stopNotifying } from "../push";
import { authMode } from "./lobby";

export function notifyPanel(): HTMLElement {
  const el = h("section", { class: "panel", "data-testid": "notify-panel" });
  /** A button that does `act` once (disabled meanwhile), then draws the panel again. */
  const button = (id: string, label: MessageKey, primary: boolean, act: (open: boolean) => Promise<unknown>) => {
    const pressed: HTMLButtonElement = h("button", { type: "button", id, class: primary ? "primary" : "", onclick: async () => {
      pressed.disabled = true;
      try {
        await act(authMode() === "open");
        draw();
      } catch (e) {
        draw(describeError(e));
      }
    } }, t(label));
    return pressed;
  };
  const draw = (message = "") => {
    // an alert only when there is one (a page with no error shows none)
    const error = message ? h("p", { role: "alert", class: "error", "data-testid": "notify-error" }, message) : null;
    let body: (HTMLElement | null)[];
    if (!pushSupported()) body = [h("p", { class: "muted" }, t("push.unsupported"))];
    else if (Notification.permission === "denied") body = [h("p", { class: "muted", "data-testid": "notify-state" }, t("push.denied"))];
    else if (notifying()) {
      body = [h("p", { "data-testid": "notify-state", "data-on": "1" }, t("push.on")), button("push-disable", "push.disable", false, stopNotifying)];
    } else {
      body = [h("p", { class: "small muted" }, t("push.intro")), button("push-enable", "push.enable", true, startNotifying)];
    }
    show(el, h("h2", null, t("push.heading")), ...body, error);
  };
  draw();
  return el;
}
