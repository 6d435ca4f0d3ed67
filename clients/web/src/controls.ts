/**
 * The seat's controls: exactly the view's `legal_actions` and `seat_actions`, nothing else.
 * Every control carries its action as `data-action` (the JSON the service listed); choosing one
 * sends that action unchanged, so the page can never offer or send a move the rules forbid.
 */
import type { Action } from "@ten/client";
import { cardEl, cardName, tableauTotals } from "./cards";
import { h } from "./dom";
import { list, t, tn } from "./i18n";
import { mySeat, type View } from "./table";

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

type Payment = Required<NonNullable<(Action & { type: "buy" })["payment"]>>;
type CardCode = Payment["cards"][number];

/**
 * How to pay for a purchase: the service's payment preselected (the one its legal action
 * names), any other mix of the seat's tokens and collection cards choosable; the service
 * checks the payment named (rules 3.4: enough, and minimal) and says why when it refuses.
 */
function paymentChoice(view: View, offered: Payment, changed: (payment: Payment) => void): HTMLElement {
  const me = view.players[mySeat(view) ?? -1];
  const chosen: Payment = { currency: offered.currency, bust: offered.bust, cards: [...offered.cards] };
  const tokens = (id: string, label: string, held: number, value: number, set: (n: number) => void) =>
    h(
      "div",
      { class: "field" },
      h("label", { for: id }, label),
      h("input", { id, type: "number", min: 0, max: held, step: 1, value: String(value), oninput: (event: Event) => {
        set(Math.max(0, Math.trunc(Number((event.target as HTMLInputElement).value) || 0)));
        changed(chosen);
      } }),
    );
  const cards = (me?.cards ?? []).map((code, i) => {
    const id = `pay-card-${i}`;
    const box = h("input", { id, type: "checkbox", "data-card": code, checked: false, onchange: () => {
      chosen.cards = [...root.querySelectorAll<HTMLInputElement>("input[data-card]:checked")].map((b) => b.dataset.card as CardCode);
      changed(chosen);
    } });
    return { code, box, row: h("div", { class: "field check" }, box, h("label", { for: id }, cardEl(code), " ", cardName(code))) };
  });
  // preselect the offered cards (a card held twice: as many boxes as the payment names)
  const left: string[] = [...offered.cards];
  for (const card of cards) {
    const at = left.indexOf(card.code);
    if (at >= 0) {
      card.box.checked = true;
      left.splice(at, 1);
    }
  }
  const root = h(
    "fieldset",
    { class: "payment", "data-testid": "payment" },
    h("legend", null, t("confirm.buy.choose")),
    tokens("pay-currency", t("confirm.buy.currency"), me?.currency ?? 0, offered.currency, (n) => (chosen.currency = n)),
    tokens("pay-bust", t("confirm.buy.bust"), me?.bust ?? 0, offered.bust, (n) => (chosen.bust = n)),
    cards.length ? h("div", { class: "pay-cards" }, cards.map((c) => c.row)) : null,
  );
  return root;
}

const CONFIRM = "dialog[data-testid=confirm-buy]";

/** Closes the buy confirmation if one is open (its screen is left: it must not outlive it). */
export function closeConfirm(): void {
  document.querySelector<HTMLDialogElement>(CONFIRM)?.close();
}

/** The buy confirmation: the card and exactly what it costs, before anything is sent. */
function confirmBuy(view: View, action: Action & { type: "buy" }, send: Send): void {
  const offered: Payment = { currency: action.payment?.currency ?? 0, bust: action.payment?.bust ?? 0, cards: [...(action.payment?.cards ?? [])] };
  let chosen: Payment = offered;
  const summary = h("p", { "data-testid": "payment-summary" }, t("confirm.buy.pay", { payment: paymentText(offered) }));
  const choice = paymentChoice(view, offered, (payment) => {
    chosen = { ...payment, cards: [...payment.cards] };
    summary.textContent = t("confirm.buy.pay", { payment: paymentText(chosen) });
  });
  const dialog = h(
    "dialog",
    { "data-testid": "confirm-buy", "aria-labelledby": "confirm-buy-title" },
    h("h2", { id: "confirm-buy-title" }, t("confirm.buy.heading", { card: cardName(action.card) })),
    h("p", null, cardEl(action.card)),
    choice,
    summary,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", id: "buy-confirm", class: "primary", onclick: () => { dialog.close(); dialog.remove(); send({ ...action, payment: chosen }); } }, t("confirm.buy.ok")),
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
                { type: "button", "data-action": JSON.stringify(buy), onclick: () => confirmBuy(view, buy, send) },
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
