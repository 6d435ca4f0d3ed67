"""The luck of a card: what drawing it did to each seat's final margin, as far as a value
the players could compute sees it, less what the draw was expected to do.

A card's luck is a control variate (AIVAT's, Burch et al. 2018, for TEN's one kind of
chance): `value(card) - sum over the cards the draw could bring of p(c) * value(c)`, each
unseen card at its probability given what the players knew (`odds.chance_outcomes`).
Whatever `value` is, that has expectation 0 before the draw, so a result less the luck of
its cards keeps the result's expectation; the better `value` predicts the final margin,
the more of the result's spread the cards explain and the luck takes out.

`value` (per seat, in points of final margin): the position the card leads to
(`outcome`: the card drawn, an auction it starts played out by the expert bot, then the
drawer's better stop if it may stop, played out the same way), read as each seat's
`FEATURES` (`features`) less the mean of the other seats' (a margin, so the seats' values
sum to 0), weighted by `luck_table.WEIGHTS`: a weight per feature when the pile is empty
and when it is full (linear between, by the share of the pile left), fitted by least squares to the final
margins of self-play games by `bench/train_luck.py`, whose header says how. The seats' luck
of a card sums to 0.

Reads only what the players know (the pile's size and the cards seen, never its order).
"""

from __future__ import annotations

from domain.bots.luck_table import WEIGHTS
from domain.bots.master import settle
from domain.bots.winning import margins
from domain.game.cards import COLOR_WILDS, FULL_WILD, NUMBER_WILDS, deck_for
from domain.game.engine import apply, to_act
from domain.game.legal import legal_actions
from domain.game.model import Draw, GameState, Player, Stop
from domain.game.results import margins as seat_margins
from domain.game.scoring import cached_best_total

# what a seat holds that the weights value, each a count
FEATURES = (
    "points",  # its score now (`scoring.best_total`)
    "power",  # its bidding power (currency tokens, bust tokens at 3)
    "spare",  # collection cards no scored run uses
    "distinct",  # distinct number cards (colour and number) and wild cards: runs to come
    "wilds",  # wild cards
    "near",  # per colour, the longest run of its number cards with one gap filled, summed
    "bust",  # bust tokens
)
_WILDS = COLOR_WILDS | NUMBER_WILDS | {FULL_WILD}
_DECK_SIZES = {n: len(deck_for(n)) for n in range(1, 6)}
_DRAW = Draw()

Vector = tuple[float, ...]


def features(player: Player, perfect_bonus: int) -> Vector:
    """A seat's `FEATURES`."""
    cards = player.cards
    points = cached_best_total(cards, perfect_bonus)
    wilds = sum(1 for c in cards if c in _WILDS)
    numbers = {c for c in cards if c not in _WILDS}
    return (
        float(points),
        float(player.bidding_power),
        float(len(cards) - points),
        float(len(numbers) + wilds),
        float(wilds),
        float(sum(_near({int(c[1]) for c in numbers if c[0] == colour}) for colour in "RBOG")),
        float(player.bust),
    )


def _near(numbers: set[int]) -> int:
    """The longest run of `numbers` (1-9) with at most one number missing from it, holding
    one of them at least (0 for none)."""
    best = 0
    for low in numbers:
        gaps = 0
        high = low
        while high + 1 <= 9:
            if high + 1 not in numbers:
                if gaps:
                    break
                gaps = 1
            high += 1
        best = max(best, high - low + 1)
    return best


def outcome(state: GameState, seat: int, card: str) -> GameState:
    """The position `seat` drawing `card` leads to (module docstring): the card drawn, what
    needs no chance played out by the expert (`master.settle`), then the drawer's better
    stop by its margin if it may stop, played out the same way."""
    after = settle(apply(state, seat, _DRAW, card=card)[0])
    if after.phase != "draw" or not after.drawn or to_act(after) != seat:
        return after
    stops = [
        settle(apply(after, seat, a)[0]) for a in legal_actions(after, seat) if type(a) is Stop
    ]
    return max(stops, key=lambda s: margins(s)[seat])


def relative_features(position: GameState) -> tuple[Vector, ...]:
    """Each seat's `features` less the mean of the other seats' (seat order)."""
    bonus = position.rules.perfect_bonus
    own = [features(p, bonus) for p in position.players]
    return tuple(zip(*(seat_margins(column) for column in zip(*own, strict=True)), strict=True))


def weights(players: int, share: float) -> Vector:
    """The weight of each feature for `players` seats at a share of the pile left (0..1)."""
    return tuple(empty + (full - empty) * share for empty, full in WEIGHTS[players])


def value(position: GameState, share: float) -> Vector:
    """Each seat's value of `position` (module docstring), the weights read at `share`, the
    share of the pile left when the card was drawn."""
    w = weights(len(position.players), share)
    return tuple(sum(a * x for a, x in zip(w, f, strict=True)) for f in relative_features(position))


def pile_share(state: GameState) -> float:
    """The share of the pile left (0..1) at `state`."""
    return len(state.draw_pile) / _DECK_SIZES[len(state.players)]
