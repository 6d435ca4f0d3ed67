"""domain.tournaments.rules: pairing (no repeats while avoidable, byes), seats, deals,
place points, matchpoints and the standings' tie-breaks (issue 25)."""

from __future__ import annotations

import itertools
from collections import Counter

import msgspec
import pytest

from domain.game.engine import new_game
from domain.game.rng import SeededRandom
from domain.tournaments.rules import (
    Adjusted,
    Entrant,
    Round,
    Settings,
    Table,
    TableResult,
    affine_round,
    assign_seats,
    bye_entrants,
    circle_round,
    counted,
    margins,
    matchpoints,
    meeting_counts,
    next_round,
    place_points,
    seat_counts,
    settled,
    standings,
    strengths,
    swiss_tables,
)


def entrants(n: int) -> list[Entrant]:
    return [Entrant(id=f"e{i:02d}") for i in range(n)]


def scored(number: int, table: Table, scores: tuple[int, ...]) -> TableResult:
    """A table's result from its game scores (equal scores tie)."""
    ranks = tuple(1 + sum(o > s for o in scores) for s in scores)
    seats, deal = table.seats, table.deal
    return TableResult(
        round=number, table=table.number, deal=deal, seats=seats, ranks=ranks, scores=scores
    )


def played(round_: Round, strength: dict[str, int]) -> list[TableResult]:
    """A result per table: the stronger entrant scores more (its strength)."""
    return [scored(round_.number, t, tuple(strength[e] for e in t.seats)) for t in round_.tables]


def run(settings: Settings, field: list[Entrant], rounds: int) -> tuple[list[Round], list]:
    strength = {e.id: (7 * i) % 11 for i, e in enumerate(field)}
    done: list[Round] = []
    results: list[TableResult] = []
    for _ in range(rounds):
        round_ = next_round(settings, field, done, results)
        done.append(round_)
        results.extend(played(round_, strength))
    return done, results


def test_swiss_backtracks_to_avoid_a_repeat() -> None:
    # a-b first would leave c-d, who have met: a-c and b-d instead
    met = {frozenset({"c", "d"}): 1}
    assert swiss_tables(["a", "b", "c", "d"], met, 2) == [("a", "c"), ("b", "d")]


def test_swiss_keeps_neighbours_in_the_standings_together() -> None:
    assert swiss_tables(list("abcdefgh"), {}, 4) == [tuple("abcd"), tuple("efgh")]


def test_swiss_repeats_only_when_unavoidable() -> None:
    met = {frozenset({"a", "b"}): 1}
    assert swiss_tables(["a", "b"], met, 2) == [("a", "b")]
    met = {frozenset(p): 1 for p in [("a", "b"), ("a", "c")]}
    assert swiss_tables(["a", "b", "c", "d"], met, 2) == [("a", "d"), ("b", "c")]


def repeat_free(order: list[str], met: Counter, size: int) -> bool:
    """Whether some grouping of `order` into tables of `size` repeats no meeting (an
    exhaustive search, no budget)."""
    if not order:
        return True
    first, rest = order[0], order[1:]
    for combo in itertools.combinations(rest, size - 1):
        table = (first, *combo)
        if any(met[frozenset(p)] for p in itertools.combinations(table, 2)):
            continue
        if repeat_free([e for e in rest if e not in combo], met, size):
            return True
    return False


@pytest.mark.parametrize(
    ("fmt", "size", "count", "rounds"),
    [("swiss", 4, 16, 5), ("swiss", 2, 8, 7), ("swiss", 3, 12, 5), ("round_robin", 3, 10, 4)],
)
def test_a_round_repeats_no_meeting_while_avoidable(
    fmt: str, size: int, count: int, rounds: int
) -> None:
    done, _ = run(Settings(format=fmt, table_size=size), entrants(count), rounds)  # type: ignore[arg-type]
    forced = 0
    for number in range(1, len(done)):
        met = meeting_counts(done[:number])
        seated = [e for t in done[number].tables for e in t.seats]
        repeats = sum(
            met[frozenset(p)]
            for t in done[number].tables
            for p in itertools.combinations(t.seats, 2)
        )
        if repeat_free(seated, met, size):
            assert repeats == 0, f"round {number + 1} repeats a meeting it could avoid"
        else:
            forced += 1
            assert repeats > 0
    assert forced < len(done) - 1  # the rounds checked include avoidable ones


def repeats(tables: list[tuple[str, ...]], met: Counter) -> int:
    """The meetings the tables repeat, a pair counted as often as it has met."""
    return sum(met[frozenset(p)] for t in tables for p in itertools.combinations(t, 2))


def distance(tables: list[tuple[str, ...]], place: dict[str, int]) -> int:
    """How far apart in the standings the tables are: over the pairs at a table, the sum of
    the squared distance of their places."""
    return sum((place[a] - place[b]) ** 2 for t in tables for a, b in itertools.combinations(t, 2))


def better_swap(tables: list[tuple[str, ...]], met: Counter, order: list[str]) -> tuple | None:
    """Two entrants of different tables whose swap gives tables repeating fewer meetings,
    or as many and closer in the standings; None when no swap does."""
    place = {e: i for i, e in enumerate(order)}
    for (i, a), (j, b) in itertools.combinations(enumerate(tables), 2):
        now = (repeats([a, b], met), distance([a, b], place))
        for x, y in itertools.product(a, b):
            swapped = [tuple(y if e == x else e for e in a), tuple(x if e == y else e for e in b)]
            if (repeats(swapped, met), distance(swapped, place)) < now:
                return (i, x), (j, y)
    return None


def test_swiss_of_64_at_tables_of_5_over_12_rounds() -> None:
    # the largest tournament allowed (64 places, tables of 5), a round's tables and byes
    settings = Settings(format="swiss", table_size=5)
    field = entrants(64)
    done, results = run(settings, field, 12)
    byes_had: Counter = Counter()
    for number, round_ in enumerate(done):
        order = [
            s.entrant
            for s in standings(settings, field, done[:number], results_of(results, number))
        ]
        tables = [t.seats for t in round_.tables]
        seated = [e for t in tables for e in t]
        assert sorted(seated + list(round_.byes)) == [e.id for e in field]
        # byes: 4 a round (64 = 12 x 5 + 4), to those all below whom have had one
        assert len(round_.byes) == 4
        for bye in round_.byes:
            assert byes_had[bye] == 0
            assert all(byes_had[e] for e in order[order.index(bye) + 1 :] if e not in round_.byes)
        byes_had.update(round_.byes)
        # no two entrants could swap tables to repeat fewer meetings, or as few and sit
        # closer to their neighbours in the standings (of the entrants seated)
        playing = [e for e in order if e not in round_.byes]
        assert better_swap(tables, meeting_counts(done[:number]), playing) is None, number + 1
    assert max(meeting_counts(done).values()) <= 2  # 48 opponents of 63 each: no third meeting
    counts = seat_counts(done)
    spread = [
        max(counts[e][s] for s in range(5)) - min(counts[e][s] for s in range(5)) for e in counts
    ]
    assert max(spread) <= 2
    assert spread.count(2) <= len(spread) // 10  # 11 or 12 games on 5 seats: 2 or 3 each
    # the same step run twice pairs the same round
    assert next_round(settings, field, done[:11], results_of(results, 11)) == done[11]


def results_of(results: list[TableResult], rounds: int) -> list[TableResult]:
    return [r for r in results if r.round <= rounds]


@pytest.mark.parametrize("size", [2, 3, 4, 5])
@pytest.mark.parametrize("seed", range(3))
def test_swiss_finds_the_grouping_without_repeats_a_dense_field_hides(size: int, seed: int) -> None:
    # 60 entrants who have each met about half of the others, all but the members of
    # hidden tables: a round exists that repeats no meeting, and the pairing finds one
    ids = [f"e{i:02d}" for i in range(60)]
    rng = SeededRandom(f"hidden/{size}/{seed}")
    hidden = rng.shuffled(ids)
    allowed = {
        frozenset(p)
        for k in range(0, 60, size)
        for p in itertools.combinations(hidden[k : k + size], 2)
    }
    met = Counter(
        frozenset(p)
        for p in itertools.combinations(ids, 2)
        if frozenset(p) not in allowed and rng.random() < 0.5
    )
    tables = swiss_tables(ids, met, size)
    assert sorted(e for t in tables for e in t) == ids
    assert {len(t) for t in tables} == {size}
    assert repeats(tables, met) == 0


def test_byes_go_to_the_lowest_without_a_bye() -> None:
    order = ["a", "b", "c", "d", "e"]
    assert bye_entrants(order, {}, 2) == ["e", "d"]
    assert bye_entrants(order, {"e": 1}, 2) == ["d", "c"]


def test_swiss_byes_never_twice_while_avoidable() -> None:
    field = entrants(10)  # tables of 4: 2 byes a round, 10 byes in 5 rounds
    done, _ = run(Settings(format="swiss", table_size=4), field, 5)
    byes = Counter(e for r in done for e in r.byes)
    assert all(len(r.byes) == 2 for r in done)
    assert sorted(byes) == [e.id for e in field]
    assert set(byes.values()) == {1}
    assert set(done[0].byes) == {"e08", "e09"}  # round 1: the last in the seeding
    for r in done:
        seated = [e for t in r.tables for e in t.seats]
        assert sorted(seated + list(r.byes)) == [e.id for e in field]


def test_a_bye_scores_a_median_place() -> None:
    settings = Settings(format="swiss", table_size=4, deal_mode="fresh")
    field = entrants(5)
    done, results = run(settings, field, 1)
    (bye,) = done[0].byes
    row = next(s for s in standings(settings, field, done, results) if s.entrant == bye)
    assert (row.points, row.matchpoints, row.score) == (1.5, 0.5, 0)


@pytest.mark.parametrize("count", [4, 5, 6, 7, 10])
def test_circle_method_meets_every_pair_once(count: int) -> None:
    ids = [f"e{i}" for i in range(count)]
    rounds = count - 1 if count % 2 == 0 else count
    pairs = Counter()
    byes = Counter()
    for index in range(rounds):
        tables, sitting = circle_round(ids, index)
        pairs.update(frozenset(t) for t in tables)
        byes.update(sitting)
    assert set(pairs.values()) == {1}
    assert len(pairs) == count * (count - 1) // 2
    assert byes == (Counter(ids) if count % 2 else Counter())


@pytest.mark.parametrize("size", [2, 3, 4, 5])
def test_affine_schedule_meets_every_pair_once(size: int) -> None:
    ids = [f"e{i:02d}" for i in range(size * size)]
    pairs = Counter()
    for index in range(size + 1):
        tables = affine_round(ids, size, index)
        assert sorted(e for t in tables for e in t) == ids
        pairs.update(frozenset(p) for t in tables for p in itertools.combinations(t, 2))
    assert set(pairs.values()) == {1}
    assert len(pairs) == len(ids) * (len(ids) - 1) // 2


def test_round_robin_of_sixteen_at_four_meets_everyone_in_five_rounds() -> None:
    done, _ = run(Settings(format="round_robin", table_size=4), entrants(16), 5)
    counts = meeting_counts(done)
    assert len(counts) == 120
    assert set(counts.values()) == {1}


def test_round_robin_byes_rotate() -> None:
    done, _ = run(Settings(format="round_robin", table_size=3), entrants(7), 7)
    assert all(len(r.byes) == 1 for r in done)
    assert len({e for r in done for e in r.byes}) == 7


def test_seats_go_to_who_held_them_least() -> None:
    counts = {"a": Counter({0: 2}), "b": Counter({0: 1})}
    assert assign_seats([("a", "b")], counts, SeededRandom("x")) == [("b", "a")]
    counts = {"a": Counter({0: 1, 1: 1}), "b": Counter({0: 1, 2: 1}), "c": Counter({1: 1})}
    assert assign_seats([("a", "b", "c")], counts, SeededRandom("x")) == [("c", "b", "a")]


@pytest.mark.parametrize("fmt", ["swiss", "round_robin"])
def test_seats_balance_over_rounds(fmt: str) -> None:
    done, _ = run(Settings(format=fmt, table_size=4), entrants(16), 2)  # type: ignore[arg-type]
    counts = seat_counts(done)
    assert all(max(counts[e].values()) == 1 for e in counts)  # two rounds, two seats
    done, _ = run(Settings(format=fmt, table_size=4), entrants(16), 8)  # type: ignore[arg-type]
    counts = seat_counts(done)
    spread = [
        max(counts[e][s] for s in range(4)) - min(counts[e][s] for s in range(4)) for e in counts
    ]
    assert max(spread) <= 2  # each seat 1 to 3 times in 8 rounds
    assert spread.count(0) >= len(spread) // 2  # most hold each seat exactly twice


def test_duplicate_tables_share_one_deal_fresh_tables_do_not() -> None:
    dup = next_round(Settings(deal_mode="duplicate", seed="s"), entrants(12), [], [])
    fresh = next_round(Settings(deal_mode="fresh", seed="s"), entrants(12), [], [])
    assert {t.deal for t in dup.tables} == {"s/round/1"}
    assert len({t.deal for t in fresh.tables}) == 3


def test_one_deal_is_one_pile_and_starting_seat_whoever_sits() -> None:
    a, _ = new_game([("x", "master"), ("y", None), ("z", "random"), ("w", "basic")], "s/round/1")
    b, _ = new_game([("p", None), ("q", "expert"), ("r", None), ("s", None)], "s/round/1")
    assert (a.draw_pile, a.starting_seat) == (b.draw_pile, b.starting_seat)


def test_next_round_is_deterministic() -> None:
    settings = Settings(format="swiss", seed="same")
    assert run(settings, entrants(12), 3) == run(settings, entrants(12), 3)


def test_place_points_share_ties() -> None:
    assert place_points([2, 1, 4, 3]) == (2, 3, 0, 1)
    assert place_points([1, 1, 3, 4]) == (2.5, 2.5, 1, 0)
    assert place_points([1, 2, 2, 2, 5]) == (4, 2, 2, 2, 0)
    assert place_points([1, 2]) == (1, 0)


def test_matchpoints_per_deal_and_seat() -> None:
    def result(table: int, deal: str, seats: tuple[str, str], scores: tuple[int, int]):
        ranks = (1, 2) if scores[0] >= scores[1] else (2, 1)
        return TableResult(round=1, table=table, deal=deal, seats=seats, ranks=ranks, scores=scores)

    results = [
        result(0, "d", ("a", "b"), (10, 3)),
        result(1, "d", ("c", "d"), (10, 8)),
        result(2, "d", ("e", "f"), (5, 8)),
        result(3, "other", ("g", "h"), (0, 1)),
    ]
    marks = matchpoints(results)
    # seat 0 of deal d: a 10, c 10, e 5; seat 1: b 3, d 8, f 8
    assert marks[(1, "a")] == marks[(1, "c")] == 0.75
    assert marks[(1, "e")] == 0.0
    assert marks[(1, "b")] == 0.0
    assert marks[(1, "d")] == marks[(1, "f")] == 0.75
    assert marks[(1, "g")] == marks[(1, "h")] == 0.5  # no one else held those seats


def table(number: int, seats: tuple[str, ...], deal: str) -> Table:
    return Table(number=number, seats=seats, deal=deal)


def two_player_rounds(
    rounds: list[list[tuple[tuple[str, str], tuple[int, int]]]],
) -> tuple[list[Round], list[TableResult]]:
    """Rounds of 2-player tables, each its own deal, from (seats, scores); equal scores tie."""
    done, results = [], []
    for number, tables in enumerate(rounds, start=1):
        made = []
        for t, (seats, scores) in enumerate(tables):
            made.append(table(t, seats, f"r{number}/{t}"))
            results.append(scored(number, made[-1], scores))
        done.append(Round(number=number, tables=tuple(made)))
    return done, results


def test_tie_breaks_points_then_buchholz_then_score_then_seeding() -> None:
    settings = Settings(deal_mode="fresh", table_size=2)
    field = [Entrant(id=i) for i in "abcdefhg"]  # h seeded before g
    done, results = two_player_rounds(
        [
            [
                (("a", "b"), (5, 1)),
                (("c", "d"), (5, 2)),
                (("e", "f"), (5, 3)),
                (("g", "h"), (3, 3)),
            ],
            [
                (("a", "c"), (9, 1)),
                (("b", "e"), (6, 1)),
                (("d", "f"), (4, 4)),
                (("g", "h"), (3, 3)),
            ],
        ]
    )
    rows = standings(settings, field, done, results)
    got = {r.entrant: (r.points, r.buchholz, r.score) for r in rows}
    assert got["a"] == (2.0, 2.0, 14)
    assert (got["b"], got["c"], got["e"]) == ((1.0, 3.0, 7), (1.0, 2.5, 6), (1.0, 1.5, 6))
    assert got["g"] == got["h"] == (1.0, 2.0, 6)  # met twice: counted twice
    assert (got["d"], got["f"]) == ((0.5, 1.5, 6), (0.5, 1.5, 7))
    # a on points; b, c, {g, h}, e on Buchholz; h before g on the seeding; f over d on score
    assert [r.entrant for r in rows] == ["a", "b", "c", "h", "g", "e", "f", "d"]
    assert [r.position for r in rows] == list(range(1, 9))


def test_duplicate_standings_put_points_first_and_matchpoints_second() -> None:
    field = [Entrant(id=i) for i in "abcd"]
    round1 = Round(number=1, tables=(table(0, ("a", "b"), "d"), table(1, ("c", "d"), "d")))
    results = [
        TableResult(round=1, table=0, deal="d", seats=("a", "b"), ranks=(2, 1), scores=(9, 10)),
        TableResult(round=1, table=1, deal="d", seats=("c", "d"), ranks=(1, 2), scores=(3, 2)),
    ]
    # b and c won their tables (1 point each), a and d lost theirs; on the deal's seat 0 a
    # (9) beat c (3), on seat 1 b (10) beat d (2): matchpoints b 1, a 1, c 0, d 0
    by_points = standings(Settings(deal_mode="duplicate", table_size=2), field, [round1], results)
    assert [r.entrant for r in by_points] == ["b", "c", "a", "d"]
    assert [(r.points, r.matchpoints) for r in by_points] == [
        (1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0),
    ]  # fmt: skip
    # as duplicate tournaments created before Dec 4 2026 are ranked: matchpoints first
    by_marks = standings(
        Settings(deal_mode="duplicate", table_size=2, duplicate_primary="matchpoints"),
        field,
        [round1],
        results,
    )
    assert [r.entrant for r in by_marks] == ["b", "a", "c", "d"]


def luck_adjusted_round() -> tuple[list[Entrant], Round, list[TableResult]]:
    """One duplicate deal at two tables of 2: a beat b and c beat d as played; luck taken
    out, b beat a (adjusted ranks) and on seat 1 d (6.5) beat b (6.0) (adjusted scores)."""
    field = [Entrant(id=i) for i in "abcd"]
    round1 = Round(number=1, tables=(table(0, ("a", "b"), "d"), table(1, ("c", "d"), "d")))
    results = [
        TableResult(
            round=1, table=0, deal="d", seats=("a", "b"), ranks=(1, 2), scores=(9, 4),
            adjusted=Adjusted(ranks=(2, 1), scores=(5.5, 6.0)),
        ),
        TableResult(
            round=1, table=1, deal="d", seats=("c", "d"), ranks=(1, 2), scores=(8, 3),
            adjusted=Adjusted(ranks=(1, 2), scores=(7.0, 6.5)),
        ),
    ]  # fmt: skip
    return field, round1, results


def test_luck_adjusted_standings_count_the_adjusted_ranks_and_scores() -> None:
    """Place points from the adjusted ranks, matchpoints from the adjusted scores; the total
    game score (a tie-break) stays the one played; by results, the adjustment is ignored."""
    field, round1, results = luck_adjusted_round()
    adjusted = Settings(deal_mode="duplicate", table_size=2, standings_by="luck_adjusted")
    rows = standings(adjusted, field, [round1], results)
    # points: b 1, c 1, a 0, d 0; seat 0 of the deal: c 7.0 beat a 5.5; seat 1: d 6.5 beat b 6.0
    got = {r.entrant: (r.points, r.matchpoints, r.score) for r in rows}
    assert got == {
        "a": (0.0, 0.0, 9), "b": (1.0, 0.0, 4), "c": (1.0, 1.0, 8), "d": (0.0, 1.0, 3),
    }  # fmt: skip
    assert [r.entrant for r in rows] == ["c", "b", "d", "a"]
    plain = standings(
        msgspec.structs.replace(adjusted, standings_by="results"), field, [round1], results
    )
    assert [(r.entrant, r.points, r.matchpoints) for r in plain] == [
        ("a", 1.0, 1.0), ("c", 1.0, 0.0), ("b", 0.0, 1.0), ("d", 0.0, 0.0),
    ]  # fmt: skip


def test_luck_adjusted_standings_are_the_standings_of_the_adjusted_results() -> None:
    """One implementation: ranking by luck-adjusted results is ranking by results whose ranks
    and scores are the adjusted ones (points, matchpoints, Buchholz, order, and so pairing)."""
    field, round1, results = luck_adjusted_round()
    adjusted = Settings(deal_mode="duplicate", table_size=2, standings_by="luck_adjusted")
    as_results = [
        msgspec.structs.replace(r, ranks=r.adjusted.ranks, scores=r.adjusted.scores)
        for r in results
        if r.adjusted is not None
    ]
    plain = msgspec.structs.replace(adjusted, standings_by="results")
    mine = standings(adjusted, field, [round1], results)
    theirs = standings(plain, field, [round1], as_results)
    assert [(r.entrant, r.points, r.matchpoints, r.buchholz) for r in mine] == [
        (r.entrant, r.points, r.matchpoints, r.buchholz) for r in theirs
    ]
    assert next_round(adjusted, field, [round1], results) == next_round(
        plain, field, [round1], as_results
    )


def test_a_table_without_its_adjusted_result_counts_by_its_results() -> None:
    """Until its review is read (not settled), or when no review adjusts it (unadjusted:
    settled), a table counts by its results in luck-adjusted standings."""
    _, _, (first, _) = luck_adjusted_round()
    waiting = msgspec.structs.replace(first, adjusted=None)
    unadjusted = msgspec.structs.replace(waiting, unadjusted=True)
    assert counted(first, "luck_adjusted") == ((2, 1), (5.5, 6.0))
    assert counted(first, "results") == ((1, 2), (9, 4))
    assert (
        counted(waiting, "luck_adjusted")
        == counted(unadjusted, "luck_adjusted")
        == ((1, 2), (9, 4))
    )
    assert [settled(r, "luck_adjusted") for r in (first, waiting, unadjusted)] == [
        True,
        False,
        True,
    ]
    assert settled(waiting, "results")


def test_margins_are_each_score_less_the_mean_of_the_other_scores() -> None:
    assert margins((9, 4)) == (5.0, -5.0)
    assert margins((10, 4, 1)) == (7.5, -1.5, -6.0)
    assert margins((3, 3, 3, 3)) == (0.0, 0.0, 0.0, 0.0)
    assert sum(margins((12, 7, 0, 5, 1))) == pytest.approx(0.0)
    assert margins((6,)) == (6.0,)  # a seat alone: its own (a tournament table has two or more)


def test_ranked_by_margin_puts_the_summed_margins_first_then_points() -> None:
    """a won both games by 1 (points 2, margin +2); b lost by 1, then won by 10 (points 1,
    margin +9): by points a leads, by margin b; Buchholz sums the opponents' first key."""
    field = [Entrant(id=i) for i in "abcd"]
    done, results = two_player_rounds(
        [
            [(("a", "c"), (5, 4)), (("b", "d"), (4, 5))],
            [(("a", "d"), (5, 4)), (("b", "c"), (12, 2))],
        ]
    )
    by_points = standings(Settings(deal_mode="fresh", table_size=2), field, done, results)
    assert by_points[0].entrant == "a"
    by_margin = standings(
        Settings(deal_mode="fresh", table_size=2, ranked_by="margin"), field, done, results
    )
    got = {r.entrant: (r.margin, r.points, r.buchholz) for r in by_margin}
    # c: -1 then -10; d: +1 then -1; Buchholz: a met c and d, b met d and c
    assert got == {
        "a": (2.0, 2.0, -11.0), "b": (9.0, 1.0, -11.0),
        "c": (-11.0, 0.0, 11.0), "d": (0.0, 1.0, 11.0),
    }  # fmt: skip
    assert [r.entrant for r in by_margin] == ["b", "a", "d", "c"]
    assert [r.margin for r in by_points] == [got[r.entrant][0] for r in by_points]


def test_margins_in_luck_adjusted_standings_come_from_the_adjusted_scores() -> None:
    field, round1, results = luck_adjusted_round()
    adjusted = Settings(
        deal_mode="duplicate", table_size=2, standings_by="luck_adjusted", ranked_by="margin"
    )
    rows = standings(adjusted, field, [round1], results)
    assert {r.entrant: r.margin for r in rows} == {"a": -0.5, "b": 0.5, "c": 0.5, "d": -0.5}
    # b and c tie on margin: b and c have a point each, c has the matchpoint
    assert [r.entrant for r in rows] == ["c", "b", "d", "a"]
    plain = standings(
        msgspec.structs.replace(adjusted, standings_by="results"), field, [round1], results
    )
    assert {r.entrant: r.margin for r in plain} == {"a": 5.0, "b": -5.0, "c": 5.0, "d": -5.0}


def test_equal_margins_summed_in_another_order_tie() -> None:
    """x's margins 0.1 + 0.2 and y's 0.3 + 0 are equal sums (not in binary floating point):
    they tie on margin, and the next key (points: y lost a game) puts x first."""
    field = [Entrant(id=i) for i in "xyzw"]
    rounds, results = [], []
    games = [(("x", "z"), (0.1, 0.0), (1, 2)), (("y", "w"), (0.3, 0.0), (1, 2))]
    later = [(("x", "w"), (0.2, 0.0), (1, 2)), (("y", "z"), (0.0, 0.0), (2, 1))]
    for number, tables in ((1, games), (2, later)):
        made = []
        for t, (seats, scores, ranks) in enumerate(tables):
            made.append(table(t, seats, f"r{number}/{t}"))
            results.append(
                TableResult(
                    round=number, table=t, deal=f"r{number}/{t}", seats=seats, ranks=(1, 1),
                    scores=(0, 0), adjusted=Adjusted(ranks=ranks, scores=scores),
                )
            )  # fmt: skip
        rounds.append(Round(number=number, tables=tuple(made)))
    settings = Settings(
        deal_mode="fresh", table_size=2, standings_by="luck_adjusted", ranked_by="margin"
    )
    rows = {r.entrant: r for r in standings(settings, field, rounds, results)}
    assert 0.1 + 0.2 != 0.3  # why the sums are rounded
    assert rows["x"].margin == rows["y"].margin == 0.3
    assert (rows["x"].points, rows["y"].points) == (2.0, 1.0)
    assert rows["x"].position < rows["y"].position


def exact_results(rounds: list[Round], strength: dict[str, float]) -> list[TableResult]:
    """Each table's luck-adjusted scores its seats' strengths (results all 0), so that its
    margins are exactly the strength model's: `s(seat) - mean s(others)`."""
    made = []
    for r in rounds:
        for t in r.tables:
            worth = tuple(strength[e] for e in t.seats)
            ranks = tuple(1 + sum(o > s for o in worth) for s in worth)
            made.append(
                TableResult(
                    round=r.number, table=t.number, deal=t.deal, seats=t.seats,
                    ranks=(1,) * len(worth), scores=(0,) * len(worth),
                    adjusted=Adjusted(ranks=ranks, scores=worth),
                )
            )  # fmt: skip
    return made


def test_strengths_recover_the_strengths_that_made_the_margins() -> None:
    """Margins made exactly by `s(seat) - mean s(others)` (s summing to 0) are fitted back to
    s, whatever the schedule: tables of 4, three rounds of a Swiss field of 12."""
    field = entrants(12)
    truth = {e.id: float((5 * i) % 12) - 5.5 for i, e in enumerate(field)}
    settings = Settings(format="swiss", deal_mode="fresh", table_size=4, rounds=3)
    done: list[Round] = []
    for _ in range(3):
        done.append(next_round(settings, field, done, exact_results(done, truth)))
    results = exact_results(done, truth)
    fitted = strengths([e.id for e in field], results, "luck_adjusted")
    assert fitted == pytest.approx(truth, abs=1e-9)
    # by results (every table's scores 0 here), every margin is 0 and so is every strength
    assert set(strengths([e.id for e in field], results, "results").values()) == {0.0}


def test_strengths_of_one_table_and_of_separate_groups() -> None:
    """One table: a margin times (n - 1) / n (the fit of a group of one game); two groups
    no game links each sum to 0 on their own; an entrant without a game: 0."""
    _, results = two_player_rounds([[(("a", "b"), (9, 4))]])
    three = TableResult(
        round=1, table=1, deal="x", seats=("c", "d", "e"), ranks=(1, 2, 3), scores=(10, 4, 1)
    )
    got = strengths(list("abcdef"), [*results, three])
    assert got == {"a": 2.5, "b": -2.5, "c": 5.0, "d": -1.0, "e": -4.0, "f": 0.0}


def test_ranked_by_strength_takes_the_opponents_strengths_out() -> None:
    """a beat w twice by 2 (margin +4); b lost to s by 1 and beat w by 3 (+2); s beat w by
    8. By margin a leads b; the fit (normal equations solved by hand: s_a - s_w = 2,
    2 s_b - s_s - s_w = 2, 2 s_s - s_b - s_w = 9, the four summing to 0) sees that b met
    the stronger opponents, and ranked by strength b leads a."""
    field = [Entrant(id=i) for i in "absw"]
    done, results = two_player_rounds(
        [
            [(("a", "w"), (6, 4)), (("b", "s"), (4, 5))],
            [(("a", "w"), (6, 4)), (("s", "w"), (9, 1))],
            [(("b", "w"), (7, 4))],
        ]
    )
    by_margin = standings(
        Settings(deal_mode="fresh", table_size=2, ranked_by="margin"), field, done, results
    )
    assert [(r.entrant, r.margin) for r in by_margin] == [
        ("s", 9.0), ("a", 4.0), ("b", 2.0), ("w", -15.0)
    ]  # fmt: skip
    assert {r.strength for r in by_margin} == {None}  # computed only when ranked by it
    settings = Settings(deal_mode="fresh", table_size=2, ranked_by="strength")
    by_strength = standings(settings, field, done, results)
    assert [r.entrant for r in by_strength] == ["s", "b", "a", "w"]
    expected = {"a": -5 / 4, "b": 13 / 12, "s": 41 / 12, "w": -13 / 4}
    assert {r.entrant: r.strength for r in by_strength} == pytest.approx(expected, abs=1e-9)
    # Buchholz sums the opponents' first key: a met w twice
    assert {r.entrant: r.buchholz for r in by_strength}["a"] == pytest.approx(-6.5)
