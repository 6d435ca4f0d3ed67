"""Server-side players. A bot sees only the game as its players know it (no pile order,
no seed: `engine.information_state`) and its own random source.

- `random`: uniform over the legal actions.
- `basic`: stops when the chance that the next card busts, counted from the cards not
  yet seen, is too high; bids what a wild card is worth to its runs (just enough when it
  bids last); buys the card that raises its score most.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from domain.bots.expert import expert_bot
from domain.bots.master import master_bot
from domain.bots.odds import TOKENS_PER_POINT, bust_counts
from domain.game.cards import NUMBER_CARDS
from domain.game.engine import tableau_sums
from domain.game.legal import legal_actions, with_payment
from domain.game.model import (
    CURRENCY_CAP,
    Action,
    Bid,
    BotLevel,
    Buy,
    Decline,
    Draw,
    GameState,
    Pass,
    Stop,
)
from domain.game.rng import SeededRandom
from domain.game.scoring import cached_best_total as best_total

Bot = Callable[[GameState, int, SeededRandom], Action]

RISK_LIMIT = 0.3  # the basic bot stops when the next draw busts with this chance or more


def random_bot(view: GameState, seat: int, rng: SeededRandom) -> Action:
    """Uniform over the legal actions."""
    actions = legal_actions(view, seat, priced=False)
    if not actions:
        raise ValueError("it is not this seat's decision")
    return with_payment(view, seat, rng.choice(actions))


def basic_policy(risk_limit: float = RISK_LIMIT, tokens_per_point: int = TOKENS_PER_POINT) -> Bot:
    """The basic bot with its two constants (tuned with `python -m service.entrypoints.simulator`)."""
    # `bust_risk(view) < risk_limit` in integers, exactly (a Fraction compares with a float
    # exactly): busting / unseen < num / den, a risk of 0 when nothing is unseen
    if math.isfinite(risk_limit):
        num, den = Fraction(risk_limit).as_integer_ratio()
    else:  # a Fraction is below inf, not below -inf nor nan
        num, den = (1, 0) if risk_limit > 0 else (0, 1)

    def safe(view: GameState) -> bool:
        busting, unseen = bust_counts(view)
        return busting * den < num * (unseen or 1)

    def basic(view: GameState, seat: int, rng: SeededRandom) -> Action:
        # unpriced: only the action kept gets its payment (`with_payment`), as the priced
        # list would name it
        actions = legal_actions(view, seat, priced=False)
        if not actions:
            raise ValueError("it is not this seat's decision")
        me = view.players[seat]
        bonus = view.rules.perfect_bonus
        if view.phase == "draw":
            can_draw = any(isinstance(a, Draw) for a in actions)
            if can_draw and (not view.drawn or safe(view)):
                return Draw()
            numbers = [c for c in view.tableau if c in NUMBER_CARDS]
            _, money = tableau_sums(view.tableau)
            room = min(money, CURRENCY_CAP - me.currency)
            # cards added never lower a score (gain >= 0): no room for currency, no need
            # to score
            take_numbers = room <= 0 and tokens_per_point >= 0
            if not take_numbers:
                gain = best_total((*me.cards, *numbers), bonus) - best_total(me.cards, bonus)
                take_numbers = gain * tokens_per_point >= room or gain > 0
            return Stop(take="numbers" if take_numbers else "currency")
        if view.phase == "auction":
            assert view.auction is not None
            card = view.auction.card
            worth = best_total((*me.cards, card), bonus) - best_total(me.cards, bonus)
            # a wild card that adds nothing now can still fill a gap later
            limit = max(worth, 1) * tokens_per_point - 1
            bids = [a for a in actions if isinstance(a, Bid) and a.amount <= limit]
            if not bids:
                return Pass()
            # one chance each: the last bidder outbids by the least, the others bid their
            # limit at once (the least bid invites the next bidder to take it cheaply)
            return with_payment(
                view, seat, bids[0] if view.auction.bidders[-1] == seat else bids[-1]
            )
        return _best_buy(view, seat, actions)

    return basic


basic_bot = basic_policy()


def _best_buy(view: GameState, seat: int, actions: list[Action]) -> Action:
    """The basic bot's buy phase: the purchase that raises the score most, if any (the
    first in `actions` among equals).

    A card added never lowers a score, so a purchase gains at most what the card would
    with no card spent: that bound, one collection scored per card of the market, is
    taken first, and a purchase it puts no higher than the best gain so far is not
    scored nor priced (it could not replace it). `actions`: the legal actions without
    payments (`with_payment` names the one the service would choose)."""
    me = view.players[seat]
    bonus = view.rules.perfect_bonus
    base = best_total(me.cards, bonus)
    most: dict[str, int] = {}  # card -> the gain of buying it with no card spent
    best: tuple[int, Action] = (0, Decline())
    for action in actions:
        if not isinstance(action, Buy):
            continue
        card = action.card
        bound = most.get(card)
        if bound is None:
            bound = most[card] = best_total((*me.cards, card), bonus) - base
        if bound <= best[0]:
            continue
        priced = with_payment(view, seat, action)
        assert isinstance(priced, Buy)
        if priced.payment is None:
            continue
        spent = priced.payment.cards
        if spent:
            after = list(me.cards)
            for code in spent:
                after.remove(code)
            after.append(card)
            gain = best_total(tuple(after), bonus) - base
        else:
            gain = bound
        if gain > best[0]:
            best = (gain, priced)
    return best[1]


BOTS: dict[BotLevel, Bot] = {
    "random": random_bot,
    "basic": basic_bot,
    "expert": expert_bot,
    "master": master_bot,
}


def bot_rng(seed: str, version: int) -> SeededRandom:
    """The random source of the bot moving at `version`: derived from the game's seed, so a
    game replays exactly, yet a different stream from the shuffle's."""
    return SeededRandom(f"bot/{version}/{seed}")
