"""The round robin schedule: the circle method for tables of 2, the affine plane for
size**2 entrants, otherwise the fewest repeats in a seeded order (`round_robin_groups`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from domain.game.rng import SeededRandom
from domain.tournaments.model import Round, Settings
from domain.tournaments.standings import meeting_counts
from domain.tournaments.swiss import bye_entrants, swiss_tables

_GF4_MUL = ((0, 0, 0, 0), (0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2))  # GF(4): + is xor


def _field(size: int) -> tuple[Callable[[int, int], int], Callable[[int, int], int]]:
    """Addition and multiplication of the field of `size` elements (2, 3, 4 or 5)."""
    if size == 4:
        return (lambda a, b: a ^ b), (lambda a, b: _GF4_MUL[a][b])
    return (lambda a, b: (a + b) % size), (lambda a, b: (a * b) % size)


def affine_round(ids: Sequence[str], size: int, index: int) -> list[tuple[str, ...]]:
    """For size**2 entrants: round `index` (0 .. size) of the affine plane of order `size`:
    entrant x * size + y is the point (x, y); round k < size has the lines y = k x + c,
    round size the lines x = c. Over the size + 1 rounds every pair meets exactly once."""
    add, mul = _field(size)
    if index == size:
        return [tuple(ids[c * size + y] for y in range(size)) for c in range(size)]
    return [tuple(ids[x * size + add(mul(index, x), c)] for x in range(size)) for c in range(size)]


def circle_round(ids: Sequence[str], index: int) -> tuple[list[tuple[str, ...]], list[str]]:
    """Round `index` (0 .. n - 2, n even after a bye is added for an odd count) of the
    circle method: the first entrant stays, the others turn one place a round; the pairs
    are first with last, second with second last...; who meets the added bye sits out."""
    seats: list[str | None] = [*ids, None] if len(ids) % 2 else list(ids)
    n = len(seats)
    turn = index % (n - 1)
    rotated = [seats[0], *(seats[1:][-turn:] + seats[1:][:-turn] if turn else seats[1:])]
    pairs: list[tuple[str, ...]] = []
    byes: list[str] = []
    for i in range(n // 2):
        a, b = rotated[i], rotated[n - 1 - i]
        if a is None or b is None:
            byes.append(a if b is None else b)  # type: ignore[arg-type]
        else:
            pairs.append((a, b))
    return pairs, byes


def round_robin_groups(
    settings: Settings, ids: Sequence[str], rounds: Sequence[Round], number: int
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The tables and byes of round `number` by the schedule, the standings aside: tables
    of 2, the circle method (every pair once in n - 1 rounds, n rounded up to even);
    size**2 entrants, the affine plane (every pair once in size + 1 rounds); past the end,
    the schedule starts over. Otherwise the fewest byes sit out (the last seeded first) and
    the rest are grouped as `swiss_tables` groups them (the fewest repeats), in a
    seeded shuffle of the round instead of the standings."""
    size = settings.table_size
    if size == 2:
        return circle_round(ids, number - 1)
    if len(ids) == size * size:
        return affine_round(ids, size, (number - 1) % (size + 1)), []
    byes_had = Counter(e for played in rounds for e in played.byes)
    sitting = bye_entrants(ids, byes_had, len(ids) % size)
    order = SeededRandom(f"{settings.seed}/round/{number}/order").shuffled(
        [e for e in ids if e not in sitting]
    )
    return swiss_tables(order, meeting_counts(rounds), size), sitting
