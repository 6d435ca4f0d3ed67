/**
 * The pace of the moves shown (`Pacer`): the player's choice (normal, fast, all at once;
 * remembered), "show them all now" while moves wait, or the word that reduced motion shows
 * every move at once. Its controls are made once and put in again at each redraw, so a
 * keyboard user finds them where they were.
 */
import { h } from "../dom";
import { t, tn } from "../i18n";
import { choosePace, isPace, pace, PACES, reducedMotion, type Pace, type Pacer } from "../pacing";

export class PaceControl {
  private readonly select: HTMLSelectElement;
  private readonly skip: HTMLButtonElement;

  constructor(private readonly pacer: Pacer) {
    this.select = h(
      "select",
      {
        id: "pace",
        onchange: () => {
          const chosen = this.select.value;
          if (isPace(chosen)) choosePace(chosen);
          pacer.repace();
        },
      },
      (Object.keys(PACES) as Pace[]).map((p) => h("option", { value: p, selected: p === pace() }, t(`pace.${p}`))),
    );
    this.skip = h("button", { type: "button", id: "pace-skip", onclick: () => pacer.skip() }, t("pace.skip"));
  }

  el(): HTMLElement {
    const waiting = this.pacer.waiting;
    return h(
      "div",
      { class: "row small", "data-testid": "pace" },
      reducedMotion()
        ? h("span", { class: "muted" }, t("pace.reduced"))
        : [h("label", { for: "pace" }, t("pace.label")), this.select],
      waiting ? [this.skip, h("span", { class: "muted" }, tn("pace.waiting", waiting))] : null,
    );
  }
}
