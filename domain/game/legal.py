"""The legal actions of a seat, computed from what the players know (no pile order).

Bids and buys are listed once per amount or card, with the payment the service would
choose (`with_payment`); `apply` also accepts any other valid payment.
"""

from __future__ import annotations

from domain.game.cards import DIGIT, NUMBER_CARDS
from domain.game.engine import to_act
from domain.game.model import (
    MAX_BID,
    Action,
    Bid,
    Buy,
    Decline,
    Draw,
    GameState,
    Pass,
    Player,
    Reclaim,
    Resign,
    Stop,
)
from domain.game.payments import choose_buy_payment, token_payment

_DRAW = Draw()
_PASS = Pass()
_DECLINE = Decline()
_DRAW_OR_STOP = (_DRAW, Stop(take="numbers"), Stop(take="currency"))
# the unpriced bids and buys, built once (frozen, so shared), up to the highest amount a
# Bid may name
_BIDS = tuple(Bid(amount=a) for a in range(MAX_BID + 1))
_BUYS = {code: Buy(card=code) for code in NUMBER_CARDS}


def legal_actions(view: GameState, seat: int, *, priced: bool = True) -> list[Action]:
    """The actions `seat` may take now (empty when it is not that seat's decision), in a
    fixed order: draw then stop (numbers, currency); pass then each bid upwards; decline
    then each buyable card in code order. With `priced=False` bids and buys name no payment
    (`with_payment` adds it): a caller that keeps one action (a random bot) pays for one
    payment, not for all (choosing the payments is a large share of a bot game's time)."""
    if to_act(view) != seat:
        return []
    me = view.players[seat]
    actions: list[Action]
    if view.phase == "draw":
        if not view.drawn:
            return [_DRAW]
        return list(_DRAW_OR_STOP if view.draw_pile else _DRAW_OR_STOP[1:])
    if view.phase == "auction":
        assert view.auction is not None
        actions = [_PASS, *_BIDS[view.auction.high_bid + 1 : me.bidding_power + 1]]
    elif view.phase in ("buy", "final_buy"):
        actions = [_DECLINE, *(_BUYS[card] for card in buyable_cards(me, view.market))]
    else:
        return []
    return [with_payment(view, seat, action) for action in actions] if priced else actions


def with_payment(view: GameState, seat: int, action: Action) -> Action:
    """A bid or buy of `seat` naming the payment the service would choose for it (rules.md
    3.4, 3.5), when it names none; any other action as it is."""
    me = view.players[seat]
    if type(action) is Bid and action.payment is None:
        return Bid(amount=action.amount, payment=token_payment(action.amount, me.currency, me.bust))
    if type(action) is Buy and action.payment is None:
        price = DIGIT[action.card]
        payment = choose_buy_payment(me.cards, price, me.currency, me.bust, view.rules)
        return Buy(card=action.card, payment=payment)
    return action


def buyable_cards(me: Player, market: tuple[str, ...]) -> list[str]:
    """The cards of the market the seat `me` may buy, sorted, each once: those it does not
    hold yet, at a price it can pay."""
    top = me.bidding_power + len(me.cards)  # tokens at their value, a card for one (3.4)
    return sorted(card for card in set(market).difference(me.cards) if DIGIT[card] <= top)


_RESIGN = Resign()
_RECLAIM = Reclaim()


def seat_actions(view: GameState, seat: int) -> list[Action]:
    """What a human seat may send whoever's turn it is: `reclaim` while a bot plays it
    after timeouts, `resign` until it has resigned; nothing once the game is over. (Not in
    `legal_actions`: bots never resign.)"""
    if view.phase == "finished":
        return []
    me = view.players[seat]
    if me.resigned or me.bot is not None:
        return []
    return [_RECLAIM, _RESIGN] if me.stand_in is not None else [_RESIGN]
