/** The lobby's notifications panel: "Notify me when it's my turn", and how to stop it. */
import { describeError } from "../api";
import { h, show } from "../dom";
import { t } from "../i18n";
import { notifying, pushSupported, startNotifying, stopNotifying } from "../push";
import { authMode } from "./lobby";

export function notifyPanel(): HTMLElement {
  const el = h("section", { class: "panel", "data-testid": "notify-panel" });
  const draw = (message = "") => {
    const error = h("p", { role: "alert", class: "error", "data-testid": "notify-error" }, message);
    let body: (HTMLElement | null)[];
    if (!pushSupported()) body = [h("p", { class: "muted" }, t("push.unsupported"))];
    else if (Notification.permission === "denied") body = [h("p", { class: "muted", "data-testid": "notify-state" }, t("push.denied"))];
    else if (notifying()) {
      const off = h("button", { type: "button", id: "push-disable", onclick: async () => {
        off.disabled = true;
        try {
          await stopNotifying(authMode() === "open");
          draw();
        } catch (e) {
          draw(describeError(e));
        }
      } }, t("push.disable"));
      body = [h("p", { "data-testid": "notify-state", "data-on": "1" }, t("push.on")), off];
    } else {
      const on = h("button", { type: "button", id: "push-enable", class: "primary", onclick: async () => {
        on.disabled = true;
        try {
          await startNotifying(authMode() === "open");
          draw();
        } catch (e) {
          draw(describeError(e));
        }
      } }, t("push.enable"));
      body = [h("p", { class: "small muted" }, t("push.intro")), on];
    }
    show(el, h("h2", null, t("push.heading")), ...body, error);
  };
  draw();
  return el;
}
