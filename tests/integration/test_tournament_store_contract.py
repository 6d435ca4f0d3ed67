"""The TournamentStore contract (service.core.ports), run against both adapters: in memory and
real Redis (each test its own key prefix, its keys deleted afterwards)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

import msgspec
import pytest

from domain.tournaments.rules import Settings
from infra.memory_tournaments import MemoryTournamentStore
from infra.redis_client import connect
from infra.redis_tournaments import RedisTournamentStore
from service.core.model import TournamentRecord
from service.core.ports import TournamentConflict

NOW = 1_760_000_000.5


def record(tournament_id: str, at: float = NOW, **changes) -> TournamentRecord:
    fields = {"name": "Open", "organiser": "platform", "places": 8}
    fields.update(changes)
    return TournamentRecord(
        id=tournament_id, settings=Settings(seed="s"), created_at=at, updated_at=at, **fields
    )


def run(backend, body: Callable[..., Awaitable[None]]) -> None:
    async def main() -> None:
        if backend.kind == "memory":
            await body(MemoryTournamentStore())
            return
        client = connect(backend.url)
        store = RedisTournamentStore(client, prefix=f"ten-test-{secrets.token_hex(6)}")
        try:
            await body(store)
        finally:
            keys = await client.keys(f"{store.prefix}:*")
            if keys:
                await client.delete(*keys)
            await client.aclose()

    asyncio.run(main())


def test_create_load_and_no_overwrite(backend):
    async def body(store) -> None:
        assert await store.load_tournament("t1") is None
        assert await store.create_tournament(record("t1")) is None
        assert await store.load_tournament("t1") == record("t1")
        taken = await store.create_tournament(record("t1", name="Other"))
        assert taken == record("t1")  # the one stored, untouched
        assert (await store.load_tournament("t1")).name == "Open"

    run(backend, body)


def test_save_compares_the_version(backend):
    async def body(store) -> None:
        first = record("t2")
        await store.create_tournament(first)
        one = msgspec.structs.replace(first, status="running", version=1)
        await store.save_tournament(one)
        assert await store.load_tournament("t2") == one
        stale = msgspec.structs.replace(first, name="late", version=1)  # read at version 0
        with pytest.raises(TournamentConflict) as refused:
            await store.save_tournament(stale)
        assert refused.value.current == one
        with pytest.raises(TournamentConflict) as gone:
            await store.save_tournament(record("nobody", version=1))
        assert gone.value.current is None

    run(backend, body)


def test_concurrent_saves_from_one_version_leave_exactly_one(backend):
    async def body(store) -> None:
        first = record("t3")
        await store.create_tournament(first)
        tries = [msgspec.structs.replace(first, name=f"n{i}", version=1) for i in range(8)]
        outcomes = await asyncio.gather(
            *(store.save_tournament(t) for t in tries), return_exceptions=True
        )
        assert sum(o is None for o in outcomes) == 1
        assert all(isinstance(o, TournamentConflict) for o in outcomes if o is not None)

    run(backend, body)


def test_list_newest_first_with_a_keyset_cursor(backend):
    async def body(store) -> None:
        for i, tid in enumerate(["a", "b", "c", "d"]):
            await store.create_tournament(record(tid, at=NOW + i))
        await store.create_tournament(record("e", at=NOW + 3))  # a tie with d: by id
        page = await store.list_tournaments(None, 3)
        assert [r.id for r in page] == ["e", "d", "c"]
        last = page[-1]
        rest = await store.list_tournaments((last.created_at, last.id), 10)
        assert [r.id for r in rest] == ["b", "a"]

    run(backend, body)


def test_the_times_of_a_tournament_are_kept(backend):
    async def body(store) -> None:
        timed = record("t1", starts_at=NOW + 600.25, round_interval=60.0)
        assert await store.create_tournament(timed) is None
        waiting = msgspec.structs.replace(timed, version=1, next_round_at=NOW + 660.5)
        await store.save_tournament(waiting)
        loaded = await store.load_tournament("t1")
        assert loaded == waiting
        assert (loaded.starts_at, loaded.round_interval, loaded.next_round_at) == (
            NOW + 600.25,
            60.0,
            NOW + 660.5,
        )

    run(backend, body)
