"""The minimal-payment rule (rules.md 3.4, 3.5) and the payment the service chooses."""

from __future__ import annotations

from functools import lru_cache

from domain.game.cards import WILDS
from domain.game.errors import RuleError
from domain.game.model import BUST_TOKEN_VALUE, Payment, Rules, TokenPayment
from domain.game.scoring import score_collection


def is_minimal(value: int, price: int, currency: int, bust: int, cards: int) -> bool:
    """True when `value` covers `price` and dropping any single token or card would not."""
    if value < price:
        return False
    if currency or cards:
        # a 1-point unit is in the payment: any excess could be dropped
        return value == price
    return bust > 0 and value - BUST_TOKEN_VALUE < price


@lru_cache(maxsize=4096)
def choose_tokens(price: int, currency: int, bust: int) -> tuple[int, int] | None:
    """The valid token mix of least excess and, at equal excess, the most bust tokens.

    Returns (currency, bust), or None when the tokens held cannot pay `price`.
    """
    b = min(bust, price // BUST_TOKEN_VALUE)
    c = price - BUST_TOKEN_VALUE * b
    if c <= currency:
        return c, b  # exact: no excess, and b is the most bust tokens an exact mix can hold
    b = -(-price // BUST_TOKEN_VALUE)
    if b <= bust:
        return 0, b  # bust tokens only: the only valid mix with excess
    return None


@lru_cache(maxsize=4096)
def token_payment(price: int, currency: int, bust: int) -> TokenPayment | None:
    """The payment `choose_tokens` picks (a frozen struct: callers share it)."""
    chosen = choose_tokens(price, currency, bust)
    if chosen is None:
        return None
    return TokenPayment(currency=chosen[0], bust=chosen[1])


def check_token_payment(payment: TokenPayment, price: int, currency: int, bust: int) -> None:
    if payment.currency < 0 or payment.bust < 0:
        raise RuleError("payment_not_held", "Token counts cannot be negative.")
    if payment.currency > currency or payment.bust > bust:
        raise RuleError("payment_not_held")
    value = payment.currency + BUST_TOKEN_VALUE * payment.bust
    if value < price:
        raise RuleError("insufficient_payment")
    if not is_minimal(value, price, payment.currency, payment.bust, 0):
        raise RuleError("payment_not_minimal")


def check_payment(
    payment: Payment, price: int, currency: int, bust: int, owned: tuple[str, ...]
) -> None:
    if payment.currency < 0 or payment.bust < 0:
        raise RuleError("payment_not_held", "Token counts cannot be negative.")
    if payment.currency > currency or payment.bust > bust:
        raise RuleError("payment_not_held")
    if payment.cards:
        held = list(owned)
        for card in payment.cards:
            if card not in held:
                raise RuleError(
                    "payment_not_held", "The payment names cards the player does not hold."
                )
            held.remove(card)
    value = payment.currency + BUST_TOKEN_VALUE * payment.bust + len(payment.cards)
    if value < price:
        raise RuleError("insufficient_payment")
    if not is_minimal(value, price, payment.currency, payment.bust, len(payment.cards)):
        raise RuleError("payment_not_minimal")


@lru_cache(maxsize=4096)
def choose_buy_mix(price: int, currency: int, bust: int, cards: int) -> tuple[int, int, int] | None:
    """(currency, bust, number of cards) for a purchase: tokens alone when they can pay
    (least excess, most bust tokens), otherwise every token that fits exactly plus the
    fewest cards. None when the player cannot pay at all."""
    tokens = choose_tokens(price, currency, bust)
    if tokens is not None:
        return tokens[0], tokens[1], 0
    b = min(bust, price // BUST_TOKEN_VALUE)
    c = min(currency, price - BUST_TOKEN_VALUE * b)
    k = price - BUST_TOKEN_VALUE * b - c
    if k <= cards:
        return c, b, k
    return None


def choose_buy_payment(
    owned: tuple[str, ...], price: int, currency: int, bust: int, rules: Rules
) -> Payment | None:
    """The payment the service picks for a purchase (see `choose_buy_mix`); when cards
    must be spent, those that cost the collection's best score the least."""
    mix = choose_buy_mix(price, currency, bust, len(owned))
    if mix is None:
        return None
    c, b, k = mix
    return Payment(currency=c, bust=b, cards=cards_to_spend(owned, k, rules.perfect_bonus))


def cards_to_spend(owned: tuple[str, ...], k: int, perfect_bonus: int) -> tuple[str, ...]:
    """The k cards of `owned` the service spends: a prefix of `spend_order`."""
    if k == 0:
        return ()
    return spend_order(tuple(sorted(owned)), perfect_bonus)[:k]


@lru_cache(maxsize=2048)
def spend_order(owned: tuple[str, ...], perfect_bonus: int) -> tuple[str, ...]:
    """The order in which the service spends a collection's cards, cheapest first.

    First the cards that no scored run uses (they cost no points; number cards before
    wild cards, which may fill a gap later), then cards peeled off the ends of the scored
    runs, shortest run first, so each costs at most one point and a perfect colour is
    broken last.
    """
    score = score_collection(owned, perfect_bonus)
    spare = list(owned)
    runs = []
    for color, color_score in score.colors.items():
        run = color_score.run
        if run:
            for code in run:
                spare.remove(code)
            runs.append((color_score.points, color, run))
    order = sorted(code for code in spare if code not in WILDS)
    order += sorted(code for code in spare if code in WILDS)
    runs.sort()
    for _, _, run in runs:
        order.extend(_peel(run))
    return tuple(order)


@lru_cache(maxsize=4096)
def _peel(run: tuple[str, ...]) -> tuple[str, ...]:
    """A run's cards in the order `spend_order` peels them."""
    rest = list(run)
    out = []
    while rest:
        # the end that is a number card when only one end is, else the high end
        out.append(rest.pop(0) if rest[-1] in WILDS and rest[0] not in WILDS else rest.pop())
    return tuple(out)
