"""The `expert` bot: a search over the cards not yet seen, on what the players know only.

It reads the game as its players know it (`engine.information_state`: never the draw
pile's order) and prices every outcome with one
valuation, `expert_value`: the change of the seat's equity minus the mean change of the
other seats' equities, where a seat's equity is

    points + TOKEN_POINTS * (bidding power + SPARE_CARD * cards outside the scored runs)

(`scoring.best_total` for the points; a token, or a collection card no run uses, is what
pays for cards and wild cards later). Its decisions:

- draw phase: an expectimax over the unseen cards (`domain.bots.odds`): the value of the best
  stop now against the expected value of the best stop after one more draw, every
  possible next card weighted by its count among the cards not yet seen (the exact
  expectation that determinized Monte Carlo would estimate by sampling piles), with
  outcomes computed by the engine, each next card given to it as the draw's outcome.
  The budget is at most one draw per distinct unseen card (at most 58), two stops each; `odds.draw_decision` bounds the outcomes first and
  draws and prices a card only while the bounds leave the answer open (the same answer,
  for a fraction of the work). It draws while drawing is worth more; then it takes the
  better reward.
- auction: what the card is worth to it (its equity's change) plus what it denies the
  best other seat that could still take it, in tokens; it bids what deters the bidders
  still to speak (the most each could pay for the card, valued the same way) when it can
  afford that within its worth, else the least bid within its worth, else passes.
- buy phase: the purchase (with the payment the service chooses) of the highest value,
  or declines when none is worth its price; purchases are priced best bound first, and
  those a bound excludes are not (`_buy`).

No randomness and no clock: the same view gives the same move, so a served game replays
from its seed (the bot's random source is not used).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import lru_cache

from domain.bots.odds import draw_decision
from domain.game.cards import FULL_WILD
from domain.game.engine import apply, purchased
from domain.game.legal import legal_actions, with_payment
from domain.game.model import Action, Bid, Buy, Decline, Draw, GameState, Pass, Player, Stop
from domain.game.rng import SeededRandom
from domain.game.scoring import cached_best_total, total_bound

TOKEN_POINTS = 1 / 3  # a token's worth in points
SPARE_CARD = 1.0  # a collection card outside the scored runs, in tokens (it pays 1)

_DRAW = Draw()
_PASS = Pass()
_DECLINE = Decline()


def equity(player: Player, perfect_bonus: int) -> float:
    """A seat's equity in points (module docstring)."""
    return _equity(player.cards, player.bidding_power, perfect_bonus)


# A decision prices the same seats many times (the seats before, in every outcome; the
# other seats, whose tokens alone change): their equities are kept, and the scores of
# their collections apart (the same collection comes back with other tokens).
@lru_cache(maxsize=16384)
def _equity(cards: tuple[str, ...], bidding_power: int, perfect_bonus: int) -> float:
    return _equity_of(_points(cards, perfect_bonus), len(cards), bidding_power)


def _equity_of(points: int, cards: int, bidding_power: int) -> float:
    """The equity of a seat scoring `points` with `cards` cards (module docstring): it
    grows with the points for a given number of cards."""
    spare = cards - points
    return points + TOKEN_POINTS * (bidding_power + SPARE_CARD * max(spare, 0))


_points = cached_best_total  # shared with the basic bot


def expert_value(
    before: Sequence[Player], after: Sequence[Player], seat: int, perfect_bonus: int
) -> float:
    """The value to `seat` of going from `before` to `after`: its equity's change minus the
    mean change of the other seats' equities."""
    mine = others = 0.0
    value = _equity
    for old, new in zip(before, after, strict=True):
        if old is new:
            continue
        change = value(new.cards, new.bidding_power, perfect_bonus) - value(
            old.cards, old.bidding_power, perfect_bonus
        )
        if new.seat == seat:
            mine = change
        else:
            others += change
    n = len(before) - 1
    return mine - others / n if n else mine


def expert_bot(view: GameState, seat: int, rng: SeededRandom) -> Action:
    """The expert's move (module docstring); `rng` is not used."""
    actions = legal_actions(view, seat, priced=False)
    if not actions:
        raise ValueError("it is not this seat's decision")
    if view.phase == "draw":
        return _draw_or_stop(view)
    if view.phase == "auction":
        return _bid(view, seat, actions)
    return _buy(view, seat, [with_payment(view, seat, a) for a in actions])


def _draw_or_stop(view: GameState) -> Action:
    if not view.drawn:
        return _DRAW  # the first action of a turn is a draw
    draw, values = draw_decision(view, expert_value)
    if draw:
        return _DRAW
    take = max(("numbers", "currency"), key=lambda t: values[t])
    return Stop(take=take)


def _card_worth(player: Player, card: str, perfect_bonus: int) -> float:
    """What taking `card` into `player`'s collection adds to its equity."""
    power = player.bidding_power
    return _equity((*player.cards, card), power, perfect_bonus) - _equity(
        player.cards, power, perfect_bonus
    )


def _bid(view: GameState, seat: int, actions: list[Action]) -> Action:
    """`actions`: the legal actions without payments (the one kept gets its payment)."""
    auction = view.auction
    assert auction is not None
    bonus = view.rules.perfect_bonus
    me = view.players[seat]
    later = auction.bidders[auction.bidders.index(seat) + 1 :]
    rivals = [s for s in auction.bidders if s != seat]
    n = max(len(view.players) - 1, 1)
    # the card denied: the best other seat that could still take it (the high bidder or a
    # later bidder), at its share in the mean over the others
    contenders = [s for s in rivals if s in later or s == auction.high_bidder]
    # what the card is worth to the seats that count (the others are not priced)
    worth = {s: _card_worth(view.players[s], auction.card, bonus) for s in (seat, *contenders)}
    denied = max((worth[s] for s in contenders), default=0.0) / n
    limit = int((worth[seat] + denied) / TOKEN_POINTS)
    # the most each later bidder could pay for it, valued the same way
    deter = max(
        (
            min(view.players[s].bidding_power, int(max(worth[s], TOKEN_POINTS) / TOKEN_POINTS))
            for s in later
        ),
        default=0,
    )
    top = min(limit, me.bidding_power)
    bids = [a for a in actions if type(a) is Bid and a.amount <= top]
    if not bids:
        return _PASS
    for bid in bids:
        if bid.amount >= deter:
            return with_payment(view, seat, bid)
    return with_payment(view, seat, bids[0])


def _buy(view: GameState, seat: int, actions: list[Action]) -> Action:
    """The purchase of the highest value (the first in `actions` among equals), or
    `Decline` when none is worth anything.

    A purchase changes only the seat: its collection becomes its cards without the cards
    paid, plus the card, and its tokens drop by those paid (`engine.purchased`, the rule
    the engine applies); so its value, `expert_value` of the outcome, is the change of the
    seat's equity, priced without applying the whole action. Its points are bounded
    first by one figure for every purchase, the collection's with W# added (when the seat
    holds none: W# can stand where any card bought would, and the cards paid only take
    points away), then by its own collection's `scoring.total_bound` (cheap, and often
    the score): purchases are priced best bound first, and those whose bound cannot
    reach the best value found are not."""
    bonus = view.rules.perfect_bonus
    me = view.players[seat]
    cards = me.cards
    now = _equity(cards, me.bidding_power, bonus)
    # the points of any purchase's collection are at most those of the cards with W#
    most_points = _points((*cards, FULL_WILD), bonus) if FULL_WILD not in cards else None
    # (-bound, index, how tight the bound is, the collection after it, its tokens, the
    # purchase): 0 the bound for all, 1 the collection's, 2 the value
    heap: list[tuple[float, int, int, tuple[str, ...], int, Buy]] = []
    for index, action in enumerate(actions):
        if type(action) is not Buy:
            continue
        payment = action.payment
        if payment is None:  # the engine refuses it
            apply(view, seat, action)
        assert payment is not None
        bought = purchased(me, action.card, payment)  # the engine's rule (3.4)
        after, power = bought.cards, bought.bidding_power
        if most_points is None:
            most = _equity_of(total_bound(after, bonus), len(after), power) - now
            heap.append((-most, index, 1, after, power, action))
        else:
            most = _equity_of(most_points, len(after), power) - now
            heap.append((-most, index, 0, after, power, action))
    heapq.heapify(heap)
    best: tuple[float, int, Action] = (0.0, -1, _DECLINE)
    while heap:
        enough = best[0] - _ROUNDING * (abs(best[0]) + 1)
        if -heap[0][0] < enough:
            break  # nor can the others
        _most, index, tight, after, power, action = heapq.heappop(heap)
        if tight == 0:  # its own collection's bound, no higher
            most = _equity_of(total_bound(after, bonus), len(after), power) - now
            heapq.heappush(heap, (max(-most, _most), index, 1, after, power, action))
            continue
        value = _equity(after, power, bonus) - now
        if value > best[0] or (value == best[0] and best[1] >= 0 and index < best[1]):
            best = (value, index, action)
    return best[2]


# far above the rounding of a few float operations on equities, far below a token's worth
_ROUNDING = 1e-9
