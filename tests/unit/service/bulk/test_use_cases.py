"""The bulk pairings' use cases (`service.bulk.use_cases.BulkPairings`) on in-memory adapters
(the embedded store, queue and bulk store), a fake clock whose sleeps move it on, and fake
randomness: the create checked whole, its copies, a create cut short and tried again, the
start jobs, the start and the cancel."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

import pytest

from domain.game.model import Draw
from infra.memory_bulk import MemoryBulkStore
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.bulk.records import CHUNK, LEAD, CreateBulk, TableRequest, job_id
from service.bulk.use_cases import MAKING, BulkPairings
from service.core.callers import PLATFORM, Caller
from service.core.errors import ServiceError
from service.core.settings import Settings
from service.games.commands import Act, SeatRequest
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.reactions.relay import GRACE, Relay

T0 = 1_800_000_000.0
PLAYER = Caller(kind="player", player_id="ann")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


class Told:
    """Every game started, as the relay hands it to its reactions."""

    name = "told"
    durable = True

    def __init__(self) -> None:
        self.started: list[str] = []

    async def react(self, change) -> None:
        self.started.append(change.new.id)


class World:
    def __init__(self, *, identities_open: bool = False, max_scheduled: int = 0) -> None:
        self.clock = Clock()
        counter = itertools.count(1)
        self.store = MemoryGameStore(clock=self.clock)
        self.told = Told()
        self.relay = relay = Relay(
            self.store, MemoryQueue("relay"), {"game_started": [self.told]}, clock=self.clock
        )
        self.games = GameService(
            self.store, Settings(), relay=relay, clock=self.clock,
            random_hex=lambda n: f"{next(counter):0{2 * n}x}",
        )  # fmt: skip
        self.queue = MemoryQueue("bulk")
        self.bulks = MemoryBulkStore()
        self.use = BulkPairings(
            self.bulks, Lobby(self.games), self.queue, quotas=self.store,
            max_scheduled=max_scheduled, identities_open=identities_open, clock=self.clock,
            random_hex=lambda n: f"{next(counter):0{2 * n}x}", sleep=self.clock.sleep,
        )  # fmt: skip


def run(body: Callable[[World], Awaitable[None]], **options) -> None:
    asyncio.run(body(World(**options)))


def tables(n: int, prefix: str = "p") -> tuple[TableRequest, ...]:
    return tuple(
        TableRequest(
            seats=(
                SeatRequest(name=f"{prefix}{i}a", player_id=f"{prefix}{i}a"),
                SeatRequest(name=f"{prefix}{i}b", player_id=f"{prefix}{i}b"),
                SeatRequest(bot="basic"),
            )
        )
        for i in range(n)
    )


def bulk(n: int = 3, start_at: float | None = T0 + 3600, key: str | None = None, **fields):
    return CreateBulk(
        caller=PLATFORM, tables=tables(n), start_at=start_at, idempotency_key=key, **fields
    )


async def refused(code: str, call: Awaitable[object]) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        await call
    assert caught.value.code == code
    return caught.value


def test_a_scheduled_bulk_makes_each_table_a_game_waiting_for_its_time():
    async def body(w: World) -> None:
        made = await w.use.create(bulk(3))
        assert made.status == "scheduled"
        assert made.record.start_at == T0 + 3600
        assert [t.status for t in made.tables] == ["open"] * 3
        assert len({t.game_id for t in made.tables}) == 3
        for table in made.tables:
            game = await w.store.load(table.game_id)
            assert game.table.starts_at == T0 + 3600
            assert game.table.seats[0].verified
            assert game.table.seats[0].player_id == table.seats[0].player_id
            assert table.tokens[2] is None  # the bot's seat
            for seat in (0, 1):
                assert await w.games.seat_of(game, table.tokens[seat]) == seat
        assert w.told.started == []
        assert await w.queue.backlog() == 1  # one start job for 3 tables

    run(body)


def test_a_bulk_started_now_answers_with_its_games_started_and_each_token_plays_its_own():
    async def body(w: World) -> None:
        made = await w.use.create(bulk(3, start_at=None))
        assert made.status == "started"
        assert [t.status for t in made.tables] == ["active"] * 3
        assert sorted(w.told.started) == sorted(t.game_id for t in made.tables)
        for table in made.tables:
            game = await w.store.load(table.game_id)
            for index in (0, 1):
                holder = Caller(kind="anonymous", seat_token=table.tokens[index])
                assert await w.games.seat_of_caller(game, holder) == index
            other = made.tables[0 if table.index else 1].tokens[0]
            await refused(
                "forbidden",
                w.games.seat_of_caller(game, Caller(kind="anonymous", seat_token=other)),
            )

    run(body)


def test_one_table_it_cannot_make_refuses_the_bulk_naming_it_and_nothing_is_stored():
    async def body(w: World) -> None:
        bad = TableRequest(seats=(SeatRequest(name="Ann"), SeatRequest(open=True)))
        twin = TableRequest(
            seats=(SeatRequest(name="A", player_id="x"), SeatRequest(name="B", player_id="x"))
        )
        for wrong, at in ((bad, 2), (twin, 1)):
            asked = tables(4)
            asked = (*asked[:at], wrong, *asked[at + 1 :])
            error = await refused(
                "invalid_bulk_pairing", w.use.create(CreateBulk(caller=PLATFORM, tables=asked))
            )
            assert error.text.params["table"] == at
        assert (await w.store.list_games("player:p0a", None, 10)) == []
        assert await w.queue.backlog() == 0

    run(body)


def test_a_start_too_far_ahead_or_in_the_past_or_too_many_tables_is_refused():
    async def body(w: World) -> None:
        await refused("invalid_bulk_pairing", w.use.create(bulk(1, start_at=T0 + 31 * 86400)))
        await refused("invalid_bulk_pairing", w.use.create(bulk(1, start_at=T0 - 3600)))
        await refused("invalid_bulk_pairing", w.use.create(bulk(0)))
        await refused("invalid_bulk_pairing", w.use.create(bulk(1001)))
        assert await w.queue.backlog() == 0
        made = await w.use.create(bulk(1, start_at=T0 + 30 * 86400))
        assert made.status == "scheduled"

    run(body)


def test_only_the_platform_may_pair_in_bulk_once_identities_are_verified():
    async def body(w: World) -> None:
        await refused("platform_only", w.use.create(CreateBulk(caller=PLAYER, tables=tables(1))))
        await refused(
            "authentication_required", w.use.create(CreateBulk(caller=Caller(), tables=tables(1)))
        )
        made = await w.use.create(bulk(1))
        await refused("platform_only", w.use.get(PLAYER, made.record.id))
        await refused("platform_only", w.use.start(PLAYER, made.record.id))
        await refused("platform_only", w.use.cancel(PLAYER, made.record.id))
        assert (await w.use.get(PLATFORM, made.record.id)).status == "scheduled"

    run(body)


def test_a_copy_of_a_keyed_create_gets_the_same_games_and_tokens_and_another_body_is_refused():
    async def body(w: World) -> None:
        first = await w.use.create(bulk(3, key="k1"))
        again = await w.use.create(bulk(3, key="k1"))
        assert again.replayed
        assert not first.replayed
        assert again.record.id == first.record.id
        assert [t.game_id for t in again.tables] == [t.game_id for t in first.tables]
        assert [t.tokens for t in again.tables] == [t.tokens for t in first.tables]
        await refused("idempotency_key_reused", w.use.create(bulk(2, key="k1")))
        other = await w.use.create(bulk(3, key="k2"))
        assert other.record.id != first.record.id

    run(body)


def test_a_create_cut_short_is_finished_by_its_copy_one_game_per_table():
    async def body(w: World) -> None:
        creation = w.use.lobby.creation
        real = creation.store_scheduled
        stored = 0

        async def dies_after_two(made):
            nonlocal stored
            if stored == 2:
                raise ConnectionError("the process died")
            stored += 1
            return await real(made)

        creation.store_scheduled = dies_after_two
        with pytest.raises(ConnectionError):
            await w.use.create(bulk(5, key="k"))
        creation.store_scheduled = real
        again = await w.use.create(bulk(5, key="k"))
        assert again.replayed
        assert again.record.made
        assert [t.status for t in again.tables] == ["open"] * 5
        for table in again.tables:  # the games the first try made take the tokens it gave
            game = await w.store.load(table.game_id)
            assert await w.games.seat_of(game, table.tokens[0]) == 0

    run(body)


def test_the_start_job_waits_for_the_time_then_starts_every_table_once():
    async def body(w: World) -> None:
        made = await w.use.create(bulk(CHUNK + 3))
        first, second = job_id(made.record.id, 0), job_id(made.record.id, 1)
        assert await w.use.run_job(first) == T0 + 3600 - LEAD
        w.clock.now = T0 + 3600 - LEAD
        assert await w.use.run_job(first) is None
        assert w.clock.now == T0 + 3600  # it waited for the time itself
        shown = await w.use.get(PLATFORM, made.record.id)
        assert [t.status for t in shown.tables[:CHUNK]] == ["active"] * CHUNK
        assert [t.status for t in shown.tables[CHUNK:]] == ["open"] * 3
        assert shown.status == "started"
        assert await w.use.run_job(second) is None
        assert await w.use.run_job(second) is None  # run again (a lease lapsed): nothing twice
        assert await w.use.run_job(first) is None
        shown = await w.use.get(PLATFORM, made.record.id)
        assert {t.status for t in shown.tables} == {"active"}
        assert w.told.started == []  # their reactions: the relay's workers', once due
        w.clock.now += GRACE
        worker = w.relay.worker(batch=100, clock=w.clock)
        while await worker.run_once():
            pass
        assert sorted(w.told.started) == sorted(t.game_id for t in made.tables)

    run(body)


def test_a_start_job_run_before_its_bulk_is_stored_waits_for_it_then_starts_it():
    """The create queues the start jobs before it stores the bulk (a process dying between
    the two leaves a job): a worker may run a job in between. Due at once (the start within
    LEAD), it must wait for the bulk, not be dropped; a job whose bulk never comes is
    dropped once its create could no longer store it."""

    async def body(w: World) -> None:
        worker = w.use.worker(clock=w.clock)
        create_bulk, ran = w.bulks.create_bulk, []

        async def after_a_worker_ran(record, ttl, remembered):
            ran.append(await worker.run_once())  # the job, due already, before the bulk
            return await create_bulk(record, ttl, remembered)

        w.bulks.create_bulk = after_a_worker_ran  # type: ignore[method-assign]
        made = await w.use.create(bulk(2, start_at=T0 + 2))
        assert ran == [1]
        job = job_id(made.record.id, 0)
        assert await w.queue.queued(job)  # kept: waiting for its bulk
        assert [t.status for t in made.tables] == ["open"] * 2
        w.clock.now = T0 + 1
        while await worker.run_once():
            pass
        shown = await w.use.get(PLATFORM, made.record.id)
        assert [t.status for t in shown.tables] == ["active"] * 2
        assert w.clock.now >= T0 + 2  # started at its time, not before
        assert not await w.queue.queued(job)
        lost = job_id("e" * 20, 0)  # its create died before storing the bulk
        assert await w.use.run_job(lost, repr(w.clock.now).encode()) == w.clock.now + 1.0
        w.clock.now += MAKING
        assert await w.use.run_job(lost, repr(w.clock.now - MAKING).encode()) is None
        assert await w.use.run_job(lost) is None  # queued without its time: dropped
        for unreadable in (b"inf", b"nan", b"x"):  # never a job that waits for good
            assert await w.use.run_job(lost, unreadable) is None

    run(body)


def test_a_seat_holder_who_acts_before_the_start_is_told_it_has_not_started():
    async def body(w: World) -> None:
        made = await w.use.create(bulk(1))
        table = made.tables[0]
        holder = Caller(kind="anonymous", seat_token=table.tokens[0])
        await refused(
            "game_not_started",
            w.games.act(Act(caller=holder, game_id=table.game_id, action=Draw())),
        )

    run(body)


def test_start_now_then_cancel_leaves_the_started_games_and_cancels_the_rest():
    async def body(w: World) -> None:
        started = await w.use.create(bulk(2))
        shown = await w.use.start(PLATFORM, started.record.id)
        assert [t.status for t in shown.tables] == ["active"] * 2
        later = await w.use.create(bulk(2))
        await w.use.lobby.start_scheduled(later.tables[0].game_id)  # one table's start won
        cancelled = await w.use.cancel(PLATFORM, later.record.id)
        assert cancelled.status == "cancelled"
        assert [t.status for t in cancelled.tables] == ["active", "cancelled"]
        await refused("bulk_pairing_cancelled", w.use.start(PLATFORM, later.record.id))
        assert await w.use.run_job(job_id(later.record.id, 0)) is None
        again = await w.use.get(PLATFORM, later.record.id)
        assert [t.status for t in again.tables] == ["active", "cancelled"]
        await refused("bulk_pairing_not_found", w.use.get(PLATFORM, "f" * 20))
        await refused("bulk_pairing_not_found", w.use.get(PLATFORM, "../x"))

    run(body)


def test_the_platform_may_have_so_many_bulks_waiting_for_their_start():
    async def body(w: World) -> None:
        first = await w.use.create(bulk(1))
        await w.use.create(bulk(1))
        error = await refused("too_many_bulk_pairings", w.use.create(bulk(1)))
        assert error.retry_after is not None
        await w.use.start(PLATFORM, first.record.id)  # started: it no longer counts
        await w.use.create(bulk(1))

    run(body, max_scheduled=2)


def test_a_create_for_now_cut_short_before_its_start_is_started_by_its_copy():
    async def body(w: World) -> None:
        real = w.use._start

        async def dies(*args, **kwargs):
            raise ConnectionError("the process died")

        w.use._start = dies
        with pytest.raises(ConnectionError):
            await w.use.create(bulk(3, start_at=None, key="now"))
        w.use._start = real
        again = await w.use.create(bulk(3, start_at=None, key="now"))
        assert again.replayed
        assert [t.status for t in again.tables] == ["active"] * 3
        assert sorted(w.told.started) == sorted(t.game_id for t in again.tables)
        once_more = await w.use.create(bulk(3, start_at=None, key="now"))
        assert [t.tokens for t in once_more.tables] == [t.tokens for t in again.tables]
        assert len(w.told.started) == 3  # started once

    run(body)
