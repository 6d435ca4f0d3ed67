"""The legal actions of a seat, computed from public information only.

Bids and buys are listed once per amount or card, with the payment the service would
choose; `apply` also accepts any other valid payment. `legal_choices` names the same
actions without building their payments (`make_action` builds one), so a caller that
needs only one of them (a random bot) does not pay for all.
"""

from __future__ import annotations

from domain.cards import NUMBER_CARDS
from domain.model import (
    BUST_TOKEN_VALUE,
    Action,
    Bid,
    Buy,
    Decline,
    Draw,
    Pass,
    Player,
    Rules,
    Stop,
)
from domain.payments import choose_buy_payment, highest_price, token_payment
from domain.views import PublicView

_FIXED: dict[str, Action] = {
    "draw": Draw(),
    "numbers": Stop(take="numbers"),
    "currency": Stop(take="currency"),
    "pass": Pass(),
    "decline": Decline(),
}
_DRAW_ONLY = (("draw", 0),)
_DRAW_OR_STOP = (("draw", 0), ("numbers", 0), ("currency", 0))
_STOP_ONLY = (("numbers", 0), ("currency", 0))

_PRICE = {code: int(code[1]) for code in NUMBER_CARDS}  # the market holds number cards only
_MAX_PRICE = max(_PRICE.values())

Choice = tuple[str, int | str]  # ("bid", amount), ("buy", card) or (fixed action name, 0)


def legal_choices(view: PublicView, seat: int) -> tuple[Choice, ...] | list[Choice]:
    if view.to_act != seat:
        return ()
    auction = view.auction
    return choices_of(
        view.phase,
        view.drawn,
        view.draw_pile_size,
        view.players[seat],
        0 if auction is None else auction.high_bid,
        view.market,
    )


def choices_of(
    phase: str, drawn: bool, pile_size: int, me: Player, high_bid: int, market: tuple[str, ...]
) -> tuple[Choice, ...] | list[Choice]:
    """`legal_choices` from the public facts it needs, for the seat `me` whose decision
    it is: the phase, whether the active player has drawn, the draw pile's size, the
    highest bid of the auction and the market."""
    if phase == "draw":
        if not drawn:
            return _DRAW_ONLY
        return _DRAW_OR_STOP if pile_size else _STOP_ONLY
    if phase == "auction":
        power = me.currency + BUST_TOKEN_VALUE * me.bust
        choices: list[Choice] = [("pass", 0)]
        choices.extend(("bid", amount) for amount in range(high_bid + 1, power + 1))
        return choices
    if phase in ("buy", "final_buy"):
        choices = [("decline", 0)]
        choices.extend([("buy", card) for card in buyable_cards(me, market)])
        return choices
    return ()


def buyable_cards(me: Player, market: tuple[str, ...]) -> list[str]:
    """The cards of the market the seat `me` may buy, sorted, each once: those it does not
    hold yet, at a price it can pay."""
    buyable = set(market).difference(me.cards)
    top = highest_price(me.currency, me.bust, len(me.cards))  # = choose_buy_mix pays
    if top < _MAX_PRICE:
        price = _PRICE
        return sorted([card for card in buyable if price[card] <= top])
    return sorted(buyable)


def make_action(view: PublicView, seat: int, choice: Choice) -> Action:
    """The action for one of `legal_choices`, with the payment the service would choose."""
    return action_for(view.players[seat], view.rules, choice)


def action_for(me: Player, rules: Rules, choice: Choice) -> Action:
    """`make_action` for the seat `me` under `rules`."""
    kind, value = choice
    if kind == "bid":
        assert isinstance(value, int)
        return Bid(amount=value, payment=token_payment(value, me.currency, me.bust))
    if kind == "buy":
        assert isinstance(value, str)
        payment = choose_buy_payment(me.cards, int(value[1]), me.currency, me.bust, rules)
        return Buy(card=value, payment=payment)
    return _FIXED[kind]


def legal_actions(view: PublicView, seat: int) -> list[Action]:
    """The actions `seat` may take now (empty when it is not that seat's decision)."""
    return [make_action(view, seat, choice) for choice in legal_choices(view, seat)]
