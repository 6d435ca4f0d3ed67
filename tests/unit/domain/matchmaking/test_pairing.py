"""The matchmaking step (domain.matchmaking.pairing): the window widens with the wait, tables
respect every ticket's sizes, windows, pool and bots, and no ticket sits at two tables."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.matchmaking.pairing import Proposed, Waiting, WindowRule, compatible, pair, window

RULE = WindowRule(sigma=8.0)
NOW = 1_000.0


def ticket(tid: str, rating: float | None = 25.0, waited: float = 0.0, **fields) -> Waiting:
    fields.setdefault("sizes", (2, 3, 4, 5))
    fields.setdefault("pool", "live:rated")
    return Waiting(id=tid, rating=rating, created_at=NOW - waited, **fields)


def test_the_window_starts_narrow_widens_linearly_and_stops_at_its_cap() -> None:
    assert RULE.half_width(0) == 0.25 * 8
    assert RULE.half_width(10) == (0.25 + 0.5) * 8
    assert RULE.half_width(10_000) == 2.0 * 8
    assert window(ticket("a", 30.0), NOW, RULE) == (28.0, 32.0)
    assert window(ticket("a", None), NOW, RULE) is None


def test_two_close_ratings_sit_together_at_once() -> None:
    tables = pair([ticket("a", 25.0), ticket("b", 26.0, sizes=(2,))], NOW, RULE)
    assert tables == [Proposed(tickets=("a", "b"), size=2)]


def test_distant_ratings_wait_until_both_windows_reach() -> None:
    a, b = ticket("a", 20.0, waited=0), ticket("b", 30.0, waited=0)
    assert pair([a, b], NOW, RULE) == []
    # 10 apart: each window must be 10 wide, 1.25 sigma: 20 s of waiting
    assert pair([a, b], NOW + 19, RULE) == []
    assert pair([a, b], NOW + 20, RULE) == [Proposed(tickets=("a", "b"), size=2)]


def test_one_wide_window_is_not_enough() -> None:
    old, new = ticket("old", 20.0, waited=1000), ticket("new", 30.0, waited=0)
    assert not compatible(old, new, NOW, RULE)
    assert pair([old, new], NOW, RULE) == []


def test_the_biggest_table_the_anchor_accepts_is_made() -> None:
    waiting = [ticket(t, 25.0 + i * 0.1, waited=10 - i) for i, t in enumerate("abcde")]
    assert pair(waiting, NOW, RULE) == [Proposed(tickets=("a", "b", "c", "d", "e"), size=5)]


def test_a_party_stays_together_and_counts_its_players() -> None:
    party = ticket("p", 25.0, waited=5, players=3, sizes=(4,))
    waiting = [party, ticket("x", 25.5, sizes=(4,)), ticket("y", 25.2, sizes=(4, 5))]
    assert pair(waiting, NOW, RULE) == [Proposed(tickets=("p", "y"), size=4)]


def test_pools_never_mix() -> None:
    waiting = [ticket("a", 25.0), ticket("b", 25.0, pool="live:casual")]
    assert pair(waiting, NOW, RULE) == []


def test_bots_fill_a_table_once_the_wait_passed_and_only_then() -> None:
    alone = ticket("a", 25.0, waited=29, sizes=(2, 4), fill_bots_after=30)
    assert pair([alone], NOW, RULE) == []
    assert pair([alone], NOW + 1, RULE) == [Proposed(tickets=("a",), size=2, bots=1)]


def test_a_ticket_that_wants_no_bots_never_sits_with_them() -> None:
    a = ticket("a", 25.0, waited=60, sizes=(3,), fill_bots_after=30)
    b = ticket("b", 25.0, waited=60, sizes=(3,))
    assert pair([a, b], NOW, RULE) == [Proposed(tickets=("a",), size=3, bots=2)]


def test_the_oldest_ticket_is_served_first() -> None:
    waiting = [
        ticket("young", 25.0, waited=1, sizes=(2,)),
        ticket("old", 25.4, waited=3, sizes=(2,)),
        ticket("mid", 25.2, waited=2, sizes=(2,)),
    ]
    assert pair(waiting, NOW, RULE) == [Proposed(tickets=("old", "mid"), size=2)]


# ---------------------------------------------------------------- properties

tickets = st.lists(
    st.builds(
        lambda i, rated, rating, waited, sizes, players, bots, mode: Waiting(
            id=f"t{i}",
            pool=f"{mode}:{'rated' if rated else 'casual'}",
            sizes=tuple(sorted(sizes)),
            created_at=NOW - waited,
            players=min(players, max(sizes)),
            rating=rating if rated else None,
            fill_bots_after=bots,
        ),
        st.integers(0, 10**6),
        st.booleans(),
        st.floats(0, 50),
        st.floats(0, 120),
        st.sets(st.integers(2, 5), min_size=1),
        st.integers(1, 3),
        st.none() | st.floats(0, 60),
        st.sampled_from(["live", "correspondence"]),
    ),
    max_size=40,
    unique_by=lambda t: t.id,
)


@settings(max_examples=200, deadline=None)
@given(tickets)
def test_every_table_respects_sizes_windows_pools_and_bots_and_no_ticket_sits_twice(
    waiting: list[Waiting],
) -> None:
    by_id = {t.id: t for t in waiting}
    tables = pair(waiting, NOW, RULE)
    seated = [tid for table in tables for tid in table.tickets]
    assert len(seated) == len(set(seated))
    for table in tables:
        members = [by_id[tid] for tid in table.tickets]
        assert sum(m.players for m in members) + table.bots == table.size
        assert all(table.size in m.sizes for m in members)
        assert len({m.pool for m in members}) == 1
        assert all(compatible(a, b, NOW, RULE) for a in members for b in members if a.id != b.id)
        if table.bots:
            assert all(NOW - m.created_at >= m.fill_bots_after for m in members)  # type: ignore[operator]


@settings(max_examples=100, deadline=None)
@given(tickets)
def test_the_same_tickets_make_the_same_tables_in_any_order(waiting: list[Waiting]) -> None:
    assert pair(waiting, NOW, RULE) == pair(list(reversed(waiting)), NOW, RULE)
