"""Each seat's chance of winning from a position: the value the review graphs and the
`master` bot searches towards.

A conditional logit on one feature, the seats' equities (`expert.equity`: the points of the
best scoring plus what the tokens and the cards outside the runs are worth):

    P(seat p wins) = exp(beta * e_p) / sum over the seats q of exp(beta * e_q)

where `beta` depends on the player count and on the share of the draw pile left: early, a
lead in equity says little (beta small); at the end it says nearly everything. `beta` is
learned offline from self-play of `expert` bots and shipped as a table
(`domain/bots/win_table.py`, whose header says how it is made again); it is read here by
linear interpolation between the table's knots. A finished game's chances are its results:
1 shared among the winners.

Reads only what the players know (the pile's size, never its order).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from domain.bots.expert import equity
from domain.bots.win_table import BETA, KNOTS
from domain.game.cards import deck_for
from domain.game.model import GameState
from domain.game.results import margins as seat_margins

_DECK_SIZES = {n: len(deck_for(n)) for n in range(1, 6)}


def knot(pile_share: float) -> tuple[int, float]:
    """(k, t): `pile_share` (0..1) lies between knots k and k + 1, at t of the way."""
    x = min(max(pile_share, 0.0), 1.0) * (KNOTS - 1)
    k = min(int(x), KNOTS - 2)
    return k, x - k


def interpolated(table: Sequence[float], pile_share: float) -> float:
    """A table of knots read at `pile_share`, linearly between its two knots."""
    k, t = knot(pile_share)
    return table[k] * (1 - t) + table[k + 1] * t


def beta(players: int, pile_share: float) -> float:
    """The table's `beta` for a player count at a share of the pile left (0..1)."""
    return interpolated(BETA[players], pile_share)


def chances(b: float, equities: Sequence[float]) -> list[float]:
    """The model's chances for seats of `equities` at `beta` = `b` (they sum to 1)."""
    top = max(equities)
    weights = [math.exp(b * (e - top)) for e in equities]
    total = sum(weights)
    return [w / total for w in weights]


def margins(state: GameState) -> tuple[float, ...]:
    """Each seat's expected margin in points: its equity (`expert.equity`), or once the game
    is finished its score, less the mean of the other seats' (they sum to 0 over the
    seats)."""
    if state.results is not None:
        worth = [float(r.score) for r in sorted(state.results, key=lambda r: r.seat)]
    else:
        bonus = state.rules.perfect_bonus
        worth = [equity(p, bonus) for p in state.players]
    return seat_margins(worth)


def win_chances(state: GameState) -> tuple[float, ...]:
    """Each seat's chance of winning (seat order; they sum to 1)."""
    players = state.players
    n = len(players)
    if state.results is not None:
        winners = [r.seat for r in state.results if r.winner]
        return tuple(1 / len(winners) if p.seat in winners else 0.0 for p in players)
    if n == 1:
        return (1.0,)
    bonus = state.rules.perfect_bonus
    b = beta(n, len(state.draw_pile) / _DECK_SIZES[n])
    return tuple(chances(b, [equity(p, bonus) for p in players]))
