"""Scoring and standings: place points, matchpoints, the standings and their tie-breaks
(`domain.tournaments.rules`' docstring), and the counts of past meetings and seats."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence

from domain.game.linear import solve
from domain.game.model import Result
from domain.game.results import margins
from domain.tournaments.model import (
    Entrant,
    Round,
    Settings,
    Standing,
    StandingsBy,
    Table,
    TableResult,
)

MARGIN_DIGITS = 9


def bye_points(table_size: int) -> float:
    """The points of a median place: the mean of a table's place points."""
    return (table_size - 1) / 2


def place_points(ranks: Sequence[int]) -> tuple[float, ...]:
    """Place p of N scores N - p; seats tied at rank k spanning m places share the mean of
    the points of places k .. k + m - 1."""
    n = len(ranks)
    tied = Counter(ranks)
    return tuple(sum(n - p for p in range(rank, rank + tied[rank])) / tied[rank] for rank in ranks)


def table_result(round_number: int, table: Table, results: Sequence[Result]) -> TableResult:
    """A table's result from the engine's final results (in seat order)."""
    by_seat = sorted(results, key=lambda r: r.seat)
    return TableResult(
        round=round_number,
        table=table.number,
        deal=table.deal,
        seats=table.seats,
        ranks=tuple(r.rank for r in by_seat),
        scores=tuple(r.score for r in by_seat),
    )


def counted(result: TableResult, by: StandingsBy) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """A table's (ranks, scores) as the standings count them (`Settings.standings_by`): its
    results, or its luck-adjusted results (`TableResult.adjusted`) once known; until then,
    and for a table no review adjusts (`unadjusted`), its results."""
    if by == "luck_adjusted" and result.adjusted is not None:
        return result.adjusted.ranks, result.adjusted.scores
    return result.ranks, result.scores


def settled(result: TableResult, by: StandingsBy) -> bool:
    """The table counts in the standings as it always will: by its results, or
    (luck_adjusted) once its luck-adjusted result is known or no review adjusts it."""
    return by == "results" or result.adjusted is not None or result.unadjusted


def matchpoints(
    results: Sequence[TableResult], by: StandingsBy = "results"
) -> dict[tuple[int, str], float]:
    """(round, entrant) -> matchpoints of that game, 0..1: per deal and seat, 1 per other
    holder of that seat beaten on game score (`by`: the scores `counted`), 0.5 per tie,
    over the number compared (0.5 when no one else held it)."""
    holders: dict[tuple[str, int], list[tuple[int, str, float]]] = defaultdict(list)
    for result in results:
        _, scores = counted(result, by)
        for seat, (entrant, score) in enumerate(zip(result.seats, scores, strict=True)):
            holders[(result.deal, seat)].append((result.round, entrant, score))
    out: dict[tuple[int, str], float] = {}
    for group in holders.values():
        for round_number, entrant, score in group:
            others = [s for r, e, s in group if (r, e) != (round_number, entrant)]
            won = sum(1.0 if score > s else 0.5 if score == s else 0.0 for s in others)
            out[(round_number, entrant)] = won / len(others) if others else 0.5
    return out


def standings(
    settings: Settings,
    entrants: Sequence[Entrant],
    rounds: Sequence[Round],
    results: Sequence[TableResult],
) -> list[Standing]:
    """The standings after the rounds given, best first (tie-breaks: `domain.tournaments.rules`' docstring)."""
    ids = [e.id for e in entrants]
    points = dict.fromkeys(ids, 0.0)
    marks = dict.fromkeys(ids, 0.0)
    margin = dict.fromkeys(ids, 0.0)
    score = dict.fromkeys(ids, 0)
    by = settings.standings_by
    for result in results:
        ranks, scores = counted(result, by)
        for entrant, pts, won in zip(
            result.seats, place_points(ranks), margins(scores), strict=True
        ):
            points[entrant] += pts
            margin[entrant] += won
        for entrant, game_score in zip(result.seats, result.scores, strict=True):
            score[entrant] += game_score  # the game score as played, whatever `by`
    for (_, entrant), mp in matchpoints(results, by).items():
        marks[entrant] += mp
    for played in rounds:
        for entrant in played.byes:
            points[entrant] += bye_points(settings.table_size)
            marks[entrant] += 0.5  # and a margin of 0, a table's mean
    # sums of fractions: rounded so that equal sums reached in another order tie
    margin = {e: round(m, MARGIN_DIGITS) for e, m in margin.items()}
    # a fit over every game: computed only for the ranking that needs it
    strength = strengths(ids, results, by) if settings.ranked_by == "strength" else None
    by_marks = settings.deal_mode == "duplicate" and settings.duplicate_primary == "matchpoints"
    keys = (marks, points) if by_marks else (points, marks)
    if settings.ranked_by == "margin":
        keys = (margin, *keys)
    elif strength is not None:
        keys = (strength, *keys)
    buchholz = dict.fromkeys(ids, 0.0)
    for entrant, other in _meetings(rounds):
        buchholz[entrant] += keys[0][other]
    seeding = {entrant: i for i, entrant in enumerate(ids)}
    order = sorted(
        ids,
        key=lambda e: (*(-k[e] for k in keys), -buchholz[e], -score[e], seeding[e]),
    )
    return [
        Standing(
            entrant=e,
            points=points[e],
            matchpoints=marks[e],
            margin=margin[e],
            strength=None if strength is None else strength[e],
            buchholz=buchholz[e],
            score=score[e],
            position=i + 1,
        )
        for i, e in enumerate(order)
    ]


def strengths(
    ids: Sequence[str], results: Sequence[TableResult], by: StandingsBy = "results"
) -> dict[str, float]:
    """Each entrant's strength: the least-squares fit of the game margins counted (`by`) by
    `margin = s(entrant) - mean of s(its table's other entrants)`, the strengths of each
    group of entrants linked by games summing to 0 (an entrant with no game: 0). A strength
    is a margin per game with the opponents' strengths taken out: against a field of
    strength 0, the margin a game is expected to bring.

    The fit's normal equations are, per entrant, `sum over its games of (s - mean of its
    opponents' s) = sum of its margins`: a graph Laplacian (`_solve`)."""
    index = {e: i for i, e in enumerate(ids)}
    n = len(ids)
    laplacian = [[0.0] * n for _ in range(n)]
    total = [0.0] * n
    for result in results:
        _, scores = counted(result, by)
        seats = [index[e] for e in result.seats]
        if len(seats) < 2:  # no opponent, nothing to fit (a tournament table has two or more)
            continue
        share = 1.0 / (len(seats) - 1)
        for i, won in zip(seats, margins(scores), strict=True):
            total[i] += won
            laplacian[i][i] += 1.0
            for j in seats:
                if j != i:
                    laplacian[i][j] -= share
    solved = _solve(laplacian, total)
    return {e: round(solved[i], MARGIN_DIGITS) + 0.0 for e, i in index.items()}


def _solve(laplacian: list[list[float]], total: list[float]) -> list[float]:
    """The solution of `laplacian @ s = total` whose entries sum to 0 over each connected
    group (`total` sums to 0 over each, as margins do): per group, its first entrant's
    strength fixed at 0 and the rest solved (`linear.solve`: the reduced matrix is not
    singular), then the group's mean taken out."""
    n = len(total)
    solved = [0.0] * n
    seen = [False] * n
    for start in range(n):
        if seen[start]:
            continue
        group, frontier = [start], [start]
        seen[start] = True
        while frontier:
            i = frontier.pop()
            for j in range(n):
                if not seen[j] and laplacian[i][j] != 0.0:
                    seen[j] = True
                    group.append(j)
                    frontier.append(j)
        group.sort()
        rest = group[1:]
        x = solve([[laplacian[i][j] for j in rest] for i in rest], [total[i] for i in rest])
        mean = sum(x) / len(group)
        solved[group[0]] = -mean
        for i, v in zip(rest, x, strict=True):
            solved[i] = v - mean
    return solved


def _meetings(rounds: Sequence[Round]) -> Iterator[tuple[str, str]]:
    """(entrant, opponent) for every pair at a table, both ways, once per meeting."""
    for played in rounds:
        for table in played.tables:
            yield from itertools.permutations(table.seats, 2)


def meeting_counts(rounds: Sequence[Round]) -> Counter[frozenset[str]]:
    """How often each pair of entrants has shared a table."""
    return Counter(frozenset(pair) for pair in _meetings(rounds) if pair[0] < pair[1])


def seat_counts(rounds: Sequence[Round]) -> dict[str, Counter[int]]:
    """entrant -> how often it has held each seat index."""
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    for played in rounds:
        for table in played.tables:
            for seat, entrant in enumerate(table.seats):
                counts[entrant][seat] += 1
    return counts
