"""`service.history.archiving` with an in-memory archive (tests/support/memory_archive.py): what is
archived of an ended game (its summary, seats and results; ranked or not and why; which
seats count; which are rated), and the use cases' guarantees: archived and rated exactly
once, the rating in the unit that adds the game (a failure keeps neither), ratings in
archive order, the rebuild giving the same numbers. The games are those the SQL archive's
tests store (tests/support/ended_games.py), each with what the rules expect of it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable
from typing import Any, TypeVar

import msgspec
import pytest

from infra.queues import MemoryQueue
from service.core.model import TableRef
from service.core.ports import ArchiveJob
from service.history.archive import Archival, ArchivedTable
from service.history.archiver import Archiver
from service.history.archiving import archival, archive_game, rebuild_ratings
from service.history.ratings import PRIOR, Rating, replay
from service.jobs.worker import Job, PermanentFailure
from tests.support.ended_games import (
    Played,
    aborted_game,
    clocked,
    dataset,
    rated_seats,
    scenario_games,
)
from tests.support.memory_archive import Broken, MemoryArchive

T = TypeVar("T")


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def everything() -> list[Played]:
    return [*dataset(), *clocked(), *(aborted_game(i) for i in (3, 7))]


def kept(p: Played) -> Archival:
    return archival(p.record, p.stored, p.player_ids)


def archive_all(archive: MemoryArchive, played: list[Played]) -> list[bool]:
    async def body() -> list[bool]:
        return [await archive_game(archive, p.record, p.stored, p.player_ids) for p in played]

    return run(body())


# ---------------------------------------------------------------- what is archived


def test_the_games_exercise_every_decision() -> None:
    played = everything()
    reasons = {r for p in played for r in p.reasons}
    assert reasons == {
        "aborted",
        "abandoned",
        "custom_deck",
        "unverified_identity",
        "too_few_humans",
    }
    assert any(p.excluded for p in played if p.ranked)  # seats taken over in ranked games
    assert any(p.ranked and not rated_seats(p) for p in played)
    assert {len(rated_seats(p)) for p in played} >= {0, 2, 3, 4}


@pytest.mark.parametrize("p", everything(), ids=lambda p: p.id)
def test_what_is_archived_of_each_game(p: Played) -> None:
    """Ranked or not and every reason (primary first), each seat counting or not and its
    own reason, results only for a finished game, the rated seats."""
    game = kept(p).game
    state = p.record.state
    assert state is not None
    assert (game.ranked, game.unranked_reasons) == (p.ranked, p.reasons)
    assert game.unranked_reason == (p.reasons[0] if p.reasons else None)
    assert [(s.ranked, s.unranked_reason) for s in game.seats] == p.seat_ranking()
    assert [s.player_id for s in game.seats] == list(p.player_ids)
    assert [(s.name, s.bot) for s in game.seats] == [(pl.name, pl.bot) for pl in state.players]
    assert game.status == p.record.status
    assert game.player_count == len(p.player_ids)
    assert game.event_count == len(p.stored) == len(kept(p).events)
    assert game.finished_at == p.finished_at
    if p.record.stopped:
        assert game.results == ()
    else:
        assert state.results is not None
        assert [(r.seat, r.score, r.rank) for r in game.results] == [
            (r.seat, r.score, r.rank) for r in state.results
        ]
    assert list(kept(p).rated) == rated_seats(p)
    control = None if state.clock is None else msgspec.to_builtins(state.clock.control)
    assert game.clock == control
    assert game.tournament is None


def test_a_tournament_table_is_archived_with_its_game() -> None:
    p = dataset()[0]
    record = msgspec.structs.replace(p.record, tournament=TableRef("t9", 2, 4))
    game = archival(record, p.stored, p.player_ids).game
    assert game.tournament == ArchivedTable(id="t9", round=2, table=4)
    assert any(kept(c).game.clock for c in clocked())  # the clocked games keep theirs


def test_the_summary_counts_busts_and_perfect_colours_from_the_log() -> None:
    p = next(q for q in dataset() if any(e.type == "busted" for e in kept(q).events))
    game = kept(p).game
    busted = [msgspec.json.decode(e.data)["seat"] for e in kept(p).events if e.type == "busted"]
    assert [r.busts for r in game.results] == [busted.count(r.seat) for r in game.results]
    assert all(
        r.perfect_colors == sum(len(c.run) == 9 for c in r.colors.values()) for r in game.results
    )
    logged = [msgspec.json.decode(e.data) for e in kept(p).events]
    drawn = [e["card"] for e in logged if e["type"] == "card_drawn"]
    assert len(game.deck) == logged[0]["draw_pile_size"]  # the whole deck as dealt
    assert list(game.deck) == drawn  # a finished game drew it all, in this order
    assert [e.seq for e in kept(p).events] == list(range(1, len(p.stored) + 1))


def test_a_seat_taken_over_does_not_count_nor_is_rated() -> None:
    for p in scenario_games("timeout"):
        game = kept(p).game
        assert game.ranked
        assert [s.unranked_reason for s in game.seats] == [None, "taken_over", None]
        assert [s.seat for s in game.seats if s.ranked] == [0, 2]
        assert [r.player_id for r in kept(p).rated] == [p.player_ids[0], p.player_ids[2]]


def test_a_resigned_seat_counts_and_is_rated() -> None:
    for p in scenario_games("timeout then resign"):
        game = kept(p).game
        assert game.ranked
        assert all(s.ranked for s in game.seats)
        assert len(kept(p).rated) == 2
        assert next(r for r in game.results if r.seat == 1).resigned


def test_a_ranked_game_with_one_rated_seat_is_not_rated() -> None:
    for p in scenario_games("the only other human left"):
        assert kept(p).game.ranked
        assert kept(p).rated == ()


@pytest.mark.parametrize(
    ("scenario", "reason"), [("abandoned", "abandoned"), ("unverified", "unverified_identity")]
)
def test_an_unranked_clocked_game_is_not_rated(scenario: str, reason: str) -> None:
    for p in scenario_games(scenario):
        game = kept(p).game
        assert game.unranked_reason == reason
        assert not any(s.ranked for s in game.seats)
        assert kept(p).rated == ()


def test_an_aborted_game_has_no_results_and_is_not_rated() -> None:
    p = aborted_game(3)
    game = kept(p).game
    assert (game.status, game.unranked_reasons, game.results) == ("aborted", ("aborted",), ())
    assert kept(p).rated == ()


def test_a_custom_deck_and_bot_tables_are_not_ranked() -> None:
    custom = [p for p in dataset() if p.record.custom_deck]
    assert custom
    assert all(kept(p).game.unranked_reasons[0] == "custom_deck" for p in custom)
    bots_only = [p for p in dataset() if not p.record.verified]
    assert bots_only
    assert all(kept(p).game.unranked_reason == "too_few_humans" for p in bots_only)
    assert all(kept(p).rated == () for p in [*custom, *bots_only])


def test_player_ids_given_apart_from_the_record_are_unverified() -> None:
    p = next(q for q in dataset() if q.ranked and len(rated_seats(q)) >= 2)
    swapped = tuple(reversed(p.player_ids))
    game = archival(p.record, p.stored, swapped).game
    assert "unverified_identity" in game.unranked_reasons
    assert [s.player_id for s in game.seats] == list(swapped)
    assert archival(p.record, p.stored, swapped).rated == ()


def refused(p: Played) -> list[tuple[Any, Any, Any]]:
    state = p.record.state
    assert state is not None
    return [
        (
            msgspec.structs.replace(p.record, state=msgspec.structs.replace(state, phase="play")),
            p.stored,
            p.player_ids,
        ),
        (p.record, p.stored[:-1], p.player_ids),  # log without its end
        (p.record, p.stored[1:], p.player_ids),  # log without its start
        (p.record, [*p.stored[:5], *p.stored[6:]], p.player_ids),  # a gap
        (p.record, p.stored, p.player_ids[:-1]),  # a seat without its player id slot
        (p.record, p.stored, ("ann",) * len(p.player_ids)),  # one player in two seats
        (p.record, p.stored, ("x" * 201, *p.player_ids[1:])),  # a player id too long
        (msgspec.structs.replace(p.record, id="g" * 65), p.stored, p.player_ids),
        (msgspec.structs.replace(p.record, aborted=True), p.stored, p.player_ids),  # finished
        (msgspec.structs.replace(p.record, state=None), p.stored, p.player_ids),
    ]


def test_what_is_not_a_whole_ended_game_is_refused_before_any_unit() -> None:
    p = dataset()[2]
    archive = MemoryArchive()
    for record, stored, player_ids in refused(p):
        with pytest.raises(ValueError, match=r"."):
            run(archive_game(archive, record, stored, player_ids))
    assert archive.units == 0


# ---------------------------------------------------------------- the use cases


def rated() -> list[Played]:
    return [p for p in everything() if rated_seats(p)]


def test_rated_games_are_rated_in_archive_order() -> None:
    archive = MemoryArchive()
    played = everything()
    assert archive_all(archive, played) == [True] * len(played)
    assert [g.game_id for g in archive.state.rated] == [p.id for p in rated()]
    current, outcomes = replay(rated_seats(p) for p in rated())
    assert archive.state.ratings == current
    assert [list(g.outcomes) for g in archive.state.rated] == outcomes
    assert run(archive.ratings(["ann"])) == {"ann": current["ann"]}
    history = run(archive.rating_history("ann"))
    assert [h.games for h in reversed(history)] == list(range(1, len(history) + 1))
    for older, newer in itertools.pairwise(reversed(history)):
        assert (newer.mu_before, newer.sigma_before) == (older.mu, older.sigma)
    assert archive.commits == len(played)


def test_a_game_archived_twice_is_rated_once() -> None:
    archive = MemoryArchive()
    p = rated()[0]
    assert archive_all(archive, [p, p]) == [True, False]
    assert [g.game_id for g in archive.state.rated] == [p.id]
    assert all(r.games == 1 for r in archive.state.ratings.values())
    assert archive.commits == 1  # the second unit ended without a change


def test_a_game_archived_by_racing_workers_is_rated_once() -> None:
    archive = MemoryArchive()
    games = rated()[:4]

    async def race() -> list[bool]:
        jobs = [p for p in games for _ in range(3)]
        return await asyncio.gather(
            *(archive_game(archive, p.record, p.stored, p.player_ids) for p in jobs)
        )

    won = run(race())
    assert won.count(True) == len(games)
    assert sorted(g.game_id for g in archive.state.rated) == sorted(p.id for p in games)
    current, _ = replay(rated_seats(p) for p in games)
    assert archive.state.ratings == current


def test_an_unrated_game_is_archived_and_rates_nobody() -> None:
    archive = MemoryArchive()
    unrated = [p for p in everything() if not rated_seats(p)]
    assert archive_all(archive, unrated) == [True] * len(unrated)
    assert archive.state.rated == []
    assert archive.state.ratings == {}
    assert run(archive.get_game(unrated[0].id)) == kept(unrated[0]).game
    assert run(archive.events(unrated[0].id)) == unrated[0].stored


@pytest.mark.parametrize("step", ["add_game", "ratings_of", "save_ratings", "commit"])
def test_a_failure_in_the_unit_keeps_neither_the_game_nor_its_rating(step: str) -> None:
    """The game and its rating are one unit of work: a failure at any step leaves the
    archive as it was; archived again once the cause is gone, it is rated once."""
    p = rated()[0]
    archive = MemoryArchive(broken=step)
    with pytest.raises(Broken):
        archive_all(archive, [p])
    assert archive.state.games == {}
    assert archive.state.rated == []
    assert archive.state.ratings == {}
    archive.broken = None
    assert archive_all(archive, [p]) == [True]
    assert [g.game_id for g in archive.state.rated] == [p.id]


def test_a_player_never_rated_starts_from_the_prior() -> None:
    archive = MemoryArchive()
    p = rated()[0]
    archive_all(archive, [p])
    (game,) = archive.state.rated
    assert all(o.before == PRIOR for o in game.outcomes)
    assert all(o.after.games == 1 for o in game.outcomes)


def test_the_rebuild_gives_the_same_ratings() -> None:
    archive = MemoryArchive()
    archive_all(archive, everything())
    incremental = archive.state.copy()
    assert run(rebuild_ratings(archive)) == len(rated())
    assert archive.state.rated == incremental.rated
    assert archive.state.ratings == incremental.ratings
    # ratings gone wrong are put right
    archive.state.ratings = {
        pid: Rating(mu=0.0, sigma=1.0, ordinal=-3.0, games=9) for pid in incremental.ratings
    }
    assert run(rebuild_ratings(archive)) == len(rated())
    assert archive.state.ratings == incremental.ratings


def test_a_game_rated_after_a_rebuild_comes_after_the_rebuilt_ones() -> None:
    archive = MemoryArchive()
    *first, last = rated()
    archive_all(archive, first)
    run(rebuild_ratings(archive))
    archive_all(archive, [last])
    assert [g.game_id for g in archive.state.rated] == [p.id for p in rated()]
    assert archive.state.ratings == replay(rated_seats(p) for p in rated())[0]


def test_the_rebuild_rates_games_archived_before_the_ratings_by_their_end() -> None:
    archive = MemoryArchive()
    archive_all(archive, everything())
    archive.state.rated, archive.state.ratings = [], {}  # as before ratings existed
    assert run(rebuild_ratings(archive)) == len(rated())
    by_end = sorted(rated(), key=lambda p: (p.finished_at, p.id.encode()))
    assert [g.game_id for g in archive.state.rated] == [p.id for p in by_end]
    current, _ = replay(rated_seats(p) for p in by_end)
    assert archive.state.ratings == current


def test_the_rebuild_of_an_empty_archive() -> None:
    archive = MemoryArchive()
    assert run(rebuild_ratings(archive)) == 0
    assert archive.state.rated == []
    assert archive.commits == 1


def test_the_archiver_archives_a_job_and_refuses_a_broken_log_for_good() -> None:
    archive = MemoryArchive()
    archiver = Archiver(MemoryQueue("archive"), archive)
    p = rated()[0]
    job = ArchiveJob(record=p.record, events=p.stored)
    run(archiver.handle(Job(id=p.id, payload=msgspec.msgpack.encode(job), token=1, failures=0)))
    assert run(archive.get_game(p.id)) == kept(p).game
    assert [g.game_id for g in archive.state.rated] == [p.id]
    broken = ArchiveJob(record=dataset()[5].record, events=dataset()[5].stored[:-1])
    with pytest.raises(PermanentFailure, match="not complete"):
        run(
            archiver.handle(
                Job(id="x", payload=msgspec.msgpack.encode(broken), token=1, failures=0)
            )
        )
    with pytest.raises(PermanentFailure, match="not an archive job"):
        run(archiver.handle(Job(id="y", payload=b"\xc1", token=1, failures=0)))


class Deal:
    """A fake `DealSecrecy`: the tables whose game is secret now, and one deal of three."""

    def __init__(self, *secret: int) -> None:
        self.secret = set(secret)

    async def sealed(self, ref: TableRef) -> bool:
        return ref.table in self.secret

    async def deal_of(self, ref: TableRef) -> list[str]:
        return [f"game-{t}" for t in (1, 2, 3) if t != ref.table]


def test_a_game_of_a_deal_still_played_elsewhere_waits_and_the_deals_last_frees_the_others():
    """Nothing of it reaches the archive (its record, the stats, the ratings) until the deal
    is done; then the deal's held games are due at once, not after the hold."""

    async def body() -> None:
        archive, queue, now = MemoryArchive(), MemoryQueue("archive"), [1_900_000_000.0]
        deal = Deal(1, 2)
        archiver = Archiver(queue, archive, secrecy=deal, hold=60.0, clock=lambda: now[0])
        games = rated()[:3]
        for table, p in enumerate(games, start=1):
            record = msgspec.structs.replace(p.record, id=f"game-{table}")
            record = msgspec.structs.replace(record, tournament=TableRef("t", 1, table))
            # ended 8 s and 10 min ago: looked at again in 2 s, and in 60 s (the longest)
            ended = now[0] - {1: 8.0, 2: 600.0, 3: 0.0}[table]
            record = msgspec.structs.replace(record, updated_at=ended)
            job = ArchiveJob(record=record, events=p.stored)
            await queue.put(record.id, msgspec.msgpack.encode(job), now[0])
        claimed = {j.id: j for j in await queue.claim(now[0], 30.0, 10)}
        assert sorted(claimed) == ["game-1", "game-2", "game-3"]
        for held, wait in (("game-1", 2.0), ("game-2", 60.0)):
            job = claimed[held]
            assert await archiver.handle(job) == now[0] + wait  # waits for its deal
            await queue.retry(job.id, job.token, now[0] + wait, failed=False)
        assert archive.state.rated == []
        assert await archive.get_game("game-1") is None
        deal.secret.clear()  # table 3's game ended: the deal is played everywhere
        now[0] += 1.0
        last = claimed["game-3"]  # still claimed: handled once the deal is done
        assert await archiver.handle(last) is None
        assert await queue.done(last.id, last.token)
        assert await archive.get_game("game-3") is not None
        freed = await queue.claim(now[0], 30.0, 10)  # due now, not at the hold's end
        assert sorted(j.id for j in freed) == ["game-1", "game-2"]
        for job in freed:
            assert await archiver.handle(job) is None
        assert {g.game_id for g in archive.state.rated} == {"game-1", "game-2", "game-3"}

    run(body())
