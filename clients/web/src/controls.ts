/**
 * The seat's controls: exactly the view's `legal_actions` and `seat_actions`, nothing else.
 * Every control carries its action as `data-action` (the JSON the service listed); choosing one
 * sends that action unchanged, so the page can never offer or send a move the rules forbid.
 */
import type { Action } from "../../ts/src/client";
import { cardEl, cardName, tableauTotals } from "./cards";
import { h } from "./dom";
import { list, t, tn } from "./i18n";
import type { View } from "./table";

type Send = (action: Action) => void;

function paymentText(payment: { currency?: number; bust?: number; cards?: readonly string[] } | null | undefined): string {
  const parts: string[] = [];
  if (payment?.currency) parts.push(tn("n.currency", payment.currency));
  if (payment?.bust) parts.push(tn("n.bustToken", payment.bust));
  if (payment?.cards?.length) parts.push(tn("pay.cards", payment.cards.length, { cards: list(payment.cards.map(cardName)) }));
  return parts.length ? parts.join(" + ") : t("pay.nothing");
}

function button(action: Action, label: string | Node[], send: Send, extra: Record<string, unknown> = {}): HTMLButtonElement {
  return h("button", { type: "button", "data-action": JSON.stringify(action), onclick: () => send(action), ...extra }, label);
}

function bidControls(bids: Action[], send: Send): HTMLElement {
  const select = h(
    "select",
    { id: "bid-amount" },
    bids.map((bid, i) =>
      h(
        "option",
        { value: String(i), "data-action": JSON.stringify(bid) },
        bid.type === "bid" ? t("action.bid.option", { amount: bid.amount, payment: paymentText(bid.payment) }) : "",
      ),
    ),
  );
  return h(
    "div",
    { class: "bid" },
    h("label", { for: "bid-amount" }, t("action.bid.amount")),
    select,
    h(
      "button",
      {
        type: "button",
        id: "bid-submit",
        class: "primary",
        onclick: () => {
          const bid = bids[Number(select.value)];
          if (bid) send(bid);
        },
      },
      t("action.bid"),
    ),
  );
}

/** The buy confirmation: the card and exactly what it costs, before anything is sent. */
function confirmBuy(action: Action & { type: "buy" }, send: Send): void {
  const dialog = h(
    "dialog",
    { "data-testid": "confirm-buy", "aria-labelledby": "confirm-buy-title" },
    h("h2", { id: "confirm-buy-title" }, t("confirm.buy.heading", { card: cardName(action.card) })),
    h("p", null, cardEl(action.card)),
    h("p", null, t("confirm.buy.pay", { payment: paymentText(action.payment) })),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", id: "buy-confirm", class: "primary", onclick: () => { dialog.close(); dialog.remove(); send(action); } }, t("confirm.buy.ok")),
      h("button", { type: "button", id: "buy-cancel", onclick: () => { dialog.close(); dialog.remove(); } }, t("confirm.buy.cancel")),
    ),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
}

/**
 * What a stop does with the tableau (rules 3.2): numbers: its number cards go to the seat's
 * collection and every other player gains its currency; currency: the seat gains the currency
 * and its number cards go to the market.
 */
function stopText(view: View, take: "numbers" | "currency"): string {
  const totals = tableauTotals(view.tableau);
  const currency = tn("n.currency", totals.currency);
  if (take === "numbers") {
    const stop = tn("action.stop.numbers", totals.numberCards);
    return totals.currency > 0 && view.players.length > 1 ? t("action.stop.others", { stop, currency }) : stop;
  }
  return totals.numberCards > 0 ? tn("action.stop.market", totals.numberCards, { currency }) : t("action.stop.currency", { currency });
}

function turnControls(view: View, legal: Action[], send: Send): HTMLElement[] {
  const out: HTMLElement[] = [];
  const bids = legal.filter((a) => a.type === "bid");
  const buys = legal.filter((a): a is Action & { type: "buy" } => a.type === "buy");
  const simple = h("div", { class: "row" });
  for (const action of legal) {
    if (action.type === "draw") simple.append(button(action, t("action.draw"), send, { class: "primary" }));
    else if (action.type === "stop") simple.append(button(action, stopText(view, action.take), send));
    else if (action.type === "pass") simple.append(button(action, t("action.pass"), send));
  }
  if (bids.length) out.push(bidControls(bids, send));
  if (simple.childElementCount) out.push(simple);
  if (buys.length) {
    out.push(
      h(
        "div",
        { class: "buys" },
        h("h3", null, t("action.buy.heading")),
        h(
          "ul",
          { class: "plain" },
          buys.map((buy) =>
            h(
              "li",
              null,
              h(
                "button",
                { type: "button", "data-action": JSON.stringify(buy), onclick: () => confirmBuy(buy, send) },
                cardEl(buy.card),
                " ",
                t("action.buy", { card: cardName(buy.card) }),
                h("span", { class: "small" }, " — ", paymentText(buy.payment)),
              ),
            ),
          ),
        ),
      ),
    );
  }
  const decline = legal.find((a) => a.type === "decline");
  if (decline) out.push(h("div", { class: "row" }, button(decline, t("action.decline"), send)));
  return out;
}

function seatControls(seatActions: Action[], send: Send): HTMLElement | null {
  if (!seatActions.length) return null;
  return h(
    "div",
    { class: "row seat-actions" },
    seatActions.map((action) =>
      action.type === "resign"
        ? button(action, t("action.resign"), (a) => { if (confirm(t("action.resign.confirm"))) send(a); }, { class: "danger" })
        : button(action, t("action.reclaim"), send),
    ),
  );
}

export function controlsEl(view: View, send: Send, busy: boolean): HTMLElement | null {
  if (!("legal_actions" in view) || view.seat === null || view.seat === undefined) return null;
  if (view.status !== "active") return null;
  const legal = (view.legal_actions ?? []) as Action[];
  const seatActions = (view.seat_actions ?? []) as Action[];
  const controls = turnControls(view, legal, send);
  const panel = h(
    "section",
    { class: "actions", "data-testid": "actions", "aria-label": t("table.actions"), "aria-busy": busy ? "true" : "false" },
    h("h2", null, t("table.actions")),
    controls.length ? controls : h("p", { class: "muted" }, view.status === "active" ? t("table.actions.none") : ""),
    seatControls(seatActions, send),
  );
  if (busy) for (const el of panel.querySelectorAll<HTMLButtonElement | HTMLSelectElement>("button, select")) el.disabled = true;
  return panel;
}
