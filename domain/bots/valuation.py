"""What an outcome of the draw phase is worth to a seat (`domain.bots.odds`' docstring): a
seat's holding in points, the net value of a change of the seats, and the two stops' values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from domain.game.engine import apply
from domain.game.model import GameState, Player, Stop
from domain.game.scoring import best_total

TOKENS_PER_POINT = 3  # what a point of score is worth in tokens (cards cost 1-9 to buy)

# (players before, players after, seat, rules' perfect bonus) -> the outcome's value to seat
Valuation = Callable[[Sequence[Player], Sequence[Player], int, int], Fraction | float]


def holding(player: Player, perfect_bonus: int) -> Fraction:
    """A seat's holding in points: its best score plus its bidding power in points."""
    return best_total(player.cards, perfect_bonus) + Fraction(
        player.bidding_power, TOKENS_PER_POINT
    )


def net_value(
    before: Sequence[Player], after: Sequence[Player], seat: int, perfect_bonus: int
) -> Fraction:
    """The value to `seat` of going from `before` to `after`: its holding's change minus
    the mean change of the other seats' holdings (`domain.bots.odds`' docstring)."""
    changes = [
        Fraction(0) if old is new else holding(new, perfect_bonus) - holding(old, perfect_bonus)
        for old, new in zip(before, after, strict=True)
    ]
    others = len(changes) - 1
    mine = changes[seat]
    if others == 0:
        return mine
    return mine - (sum(changes) - mine) / others


STOPS = (Stop(take="numbers"), Stop(take="currency"))
STOP_NUMBERS, STOP_CURRENCY = STOPS


def stop_values(state: GameState, value: Valuation = net_value) -> dict[str, Fraction | float]:
    """The `value` of each of the two rewards for the active seat of `state` (in the draw
    phase, with something drawn): of the states right after `Stop(numbers)` and
    `Stop(currency)`, by take."""
    return stop_values_and_seats(state, value)[0]


def stop_values_and_seats(
    state: GameState, value: Valuation
) -> tuple[dict[str, Fraction | float], Sequence[Player]]:
    """`stop_values` and the seats right after `Stop(numbers)`."""
    seat = state.active_seat
    bonus = state.rules.perfect_bonus
    values = {}
    for stop in STOPS:
        after = apply(state, seat, stop)[0].players
        values[stop.take] = value(state.players, after, seat, bonus)
        if stop is STOP_NUMBERS:
            taken = after
    return values, taken


def stop_value(state: GameState, value: Valuation = net_value) -> Fraction | float:
    """The better of the two rewards (`stop_values`)."""
    return max(stop_values(state, value).values())
