"""The due index of the GameStore contract (`due_games`, `claim_due`, `settle_due`, and what
`create` and `save` write into it), run against both adapters and, through
tests/scaleout/test_cluster_store_contract.py, on a Redis Cluster.

The invariant: a game not ended has an entry never later than its stored `due`; entry
writes are gated by the stamp they were read at (an older one is ignored, an equal one
applied); a due entry is claimed by exactly one poller until its lease lapses or it is
settled. On Redis each test has its own due index (a hash tag of its own) and live
key (other tests share the database), deleted afterwards.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from msgspec.structs import replace
from redis.crc import key_slot

from service.core.model import GameRecord
from service.core.ports import DueGame
from tests.support.records import NOW, TTL, advance, new_record

LEASE = 15.0


class Due:
    """A test's store settings (`due.run(body)` as `backend.run(body)`), on Redis a due index
    of its own."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.redis = backend.kind != "memory"
        self.kwargs: dict[str, Any] = {}
        if self.redis:
            tag = backend.new_id()
            self.tag = f"ten:test-due:{tag}"
            self.kwargs = {
                "due_tag": self.tag,
                "live_key": f"ten:test-live:{tag}",
            }
            backend.other_keys += [*self.keys, self.kwargs["live_key"]]

    @property
    def keys(self) -> list[str]:
        """The Redis keys of the due index, as the layout documents them."""
        return [f"{{{self.tag}}}", f"{{{self.tag}}}:stamp", f"{{{self.tag}}}:claims"]

    def run(self, body) -> None:
        self.backend.run(body, **self.kwargs)


def due_game(backend: Any, due: float | None = NOW + 60) -> GameRecord:
    record, _ = new_record(backend.new_id())
    return replace(record, due=due)


async def entry(store, game_id: str, now: float = NOW + 10**6) -> float | None:
    """When the game's entry is due (None: no entry), read through `due_games`."""
    found = [e.at for e in await store.due_games(now, 10_000) if e.game_id == game_id]
    assert len(found) <= 1, found
    return found[0] if found else None


# ------------------------------------------------------------------ create and read


def test_create_writes_the_entry_and_due_games_reads_the_due_ones_earliest_first(backend):
    due = Due(backend)
    later = due_game(backend, NOW + 30.5)
    sooner = due_game(backend, NOW + 10.25)
    same = due_game(backend, NOW + 30.5)
    never = due_game(backend, None)  # no due: no entry

    async def body(store):
        assert await store.due_games(NOW + 10**6, 10) == []
        for record in (later, sooner, same, never):
            await store.create(record, [], TTL)
        assert await store.due_games(NOW + 10, 10) == []  # nothing due yet
        assert await store.due_games(NOW + 10.25, 10) == [DueGame(sooner.id, NOW + 10.25)]
        found = await store.due_games(NOW + 31, 10)
        assert found[0] == DueGame(sooner.id, NOW + 10.25)  # scores kept exactly
        assert sorted(found[1:]) == sorted(
            [DueGame(later.id, NOW + 30.5), DueGame(same.id, NOW + 30.5)]
        )
        assert len(await store.due_games(NOW + 31, 2)) == 2  # at most `limit`
        assert await store.due_games(NOW + 31, 0) == []
        assert await entry(store, never.id) is None

    due.run(body)


def test_a_create_over_an_existing_game_never_delays_that_games_entry(backend):
    """The entry is written before the create is refused; it may not move later."""
    due = Due(backend)
    first = due_game(backend, NOW + 10)
    second = replace(due_game(backend, NOW + 99), id=first.id)
    earlier = replace(due_game(backend, NOW + 5), id=first.id)

    async def body(store):
        await store.create(first, [], TTL)
        with pytest.raises(Exception, match="exists"):
            await store.create(second, [], TTL)
        assert await entry(store, first.id) == NOW + 10
        with pytest.raises(Exception, match="exists"):
            await store.create(earlier, [], TTL)
        assert await entry(store, first.id) <= NOW + 10  # earlier is allowed

    due.run(body)


# ------------------------------------------------------------------ saves


def test_saves_lower_the_entry_keep_it_when_due_moves_later_and_remove_it_once_ended(backend):
    due = Due(backend)
    r0 = due_game(backend, NOW + 100)
    r1 = r0.successor(due=NOW + 40)  # earlier: written
    r2 = r1.successor(due=NOW + 500)  # later: not written (still <= the due)
    r3 = r2.successor(due=NOW + 450)  # earlier than the previous: written
    r4 = r3.successor(due=None, aborted=True)  # ended: removed

    async def body(store):
        await store.create(r0, [], TTL)
        assert await entry(store, r0.id) == NOW + 100
        await store.save(r1, r0.stamp, [], TTL, previous=r0)
        assert await entry(store, r0.id) == NOW + 40
        await store.save(r2, r1.stamp, [], TTL, previous=r1)
        assert await entry(store, r0.id) == NOW + 40
        await store.save(r3, r2.stamp, [], TTL, previous=r2)
        assert await entry(store, r0.id) == NOW + 450
        await store.save(r4, r3.stamp, [], TTL, previous=r3)
        assert r4.ended
        assert await entry(store, r0.id) is None

    due.run(body)


def test_a_save_without_previous_writes_the_entry(backend):
    """Without the game as read, the store cannot tell the due moved later: it writes."""
    due = Due(backend)
    r0 = due_game(backend, NOW + 100)
    r1 = r0.successor(due=NOW + 200)

    async def body(store):
        await store.create(r0, [], TTL)
        await store.save(r1, r0.stamp, [], TTL)
        assert await entry(store, r0.id) == NOW + 200

    due.run(body)


def test_a_refused_save_writes_no_entry(backend):
    due = Due(backend)
    r0 = due_game(backend, NOW + 100)
    r1 = r0.successor(due=NOW + 50)
    stale = r0.successor(due=NOW + 1)

    async def body(store):
        await store.create(r0, [], TTL)
        await store.save(r1, r0.stamp, [], TTL, previous=r0)
        with pytest.raises(Exception, match=r0.id):
            await store.save(stale, r0.stamp, [], TTL, previous=r0)
        assert await entry(store, r0.id) == NOW + 50

    due.run(body)


def test_redis_a_save_whose_due_moved_later_costs_no_other_round_trip(redis_backend):
    """Actions push the idle expiry later: the save script alone. A due moved earlier or a
    game ended: one pipeline more, nothing else; a create: one call before it. Round trips
    are commands sent alone and pipelines (a save or create goes in its turn's pipeline,
    `infra.redis_batch`)."""
    due = Due(redis_backend)
    r0, _ = new_record(redis_backend.new_id())
    r0 = replace(r0, due=NOW + 100)
    r1, e1 = advance(r0, 1)
    r1 = replace(r1, due=NOW + 200)
    r2, e2 = advance(r1, 1)
    r2 = replace(r2, due=NOW + 150)

    async def body(store):
        for script in (store._due_write, store._create, store._save):  # on every node
            await store._redis.script_load(script.script)
        sent: list[str] = []
        pipeline, execute = store._pipeline, store._redis.execute_command

        def counted_pipeline():
            pipe = pipeline()
            run = pipe.execute

            async def counted_run(*args, **options):
                sent.append(f"pipeline of {len(pipe)}")
                return await run(*args, **options)

            pipe.execute = counted_run
            return pipe

        async def counted(*args, **options):
            sent.append(str(args[0]))
            return await execute(*args, **options)

        exchange = store._batch._exchange

        async def counted_exchange(commands):  # the batcher's own connections (not a Cluster)
            sent.append(f"pipeline of {len(commands)}")
            return await exchange(commands)

        store._pipeline = store._batch._pipeline = counted_pipeline
        store._batch._exchange = counted_exchange
        store._redis.execute_command = counted
        await store.create(r0, [], TTL)
        # the entry, the create, its listings
        assert sent == ["EVALSHA", "pipeline of 1", "pipeline of 1"]
        sent.clear()
        await store.save(r1, r0.stamp, e1, TTL, previous=r0)
        assert sent == ["pipeline of 1"]  # the save script alone
        sent.clear()
        await store.save(r2, r1.stamp, e2, TTL, previous=r1)
        assert sent == ["pipeline of 1", "pipeline of 1"]  # earlier: the entry after
        assert await entry(store, r0.id) == NOW + 150

    due.run(body)


def test_redis_layout_three_keys_in_one_slot(redis_backend):
    due = Due(redis_backend)
    record = due_game(redis_backend, NOW + 7.5)

    async def body(store):
        await store.create(record, [], TTL)
        assert await store.claim_due(record.id, NOW + 8, LEASE)

    due.run(body)
    entries, stamps, claims = due.keys
    assert len({key_slot(key.encode()) for key in due.keys}) == 1
    client = redis_backend.client
    assert client.zscore(entries, record.id) == NOW + 7.5
    assert int(client.hget(stamps, record.id)) == record.stamp
    assert client.zscore(claims, record.id) == NOW + 8 + LEASE


def test_redis_a_save_when_redis_forgot_the_script_still_writes_the_entry(redis_backend):
    """A restarted Redis forgets its scripts: the pipeline's EVALSHA meets NOSCRIPT and is
    sent again, loaded. (Shown with a digest Redis never had: SCRIPT FLUSH would disturb
    the tests running beside this one.)"""
    due = Due(redis_backend)
    r0 = due_game(redis_backend, NOW + 100)
    r1 = r0.successor(due=NOW + 20)

    async def body(store):
        await store.create(r0, [], TTL)
        store._due_write.sha = "0" * 40
        await store.save(r1, r0.stamp, [], TTL, previous=r0)
        assert await entry(store, r0.id) == NOW + 20
        assert store._due_write.sha != "0" * 40  # loaded again

    due.run(body)


# ------------------------------------------------------------------ claims


def test_a_due_entry_is_claimed_once_until_its_lease_lapses(backend):
    due = Due(backend)
    record = due_game(backend, NOW + 10)

    async def body(store):
        assert not await store.claim_due(record.id, NOW + 10, LEASE)  # no such entry
        await store.create(record, [], TTL)
        assert not await store.claim_due(record.id, NOW + 9.99, LEASE)  # not due yet
        assert await store.claim_due(record.id, NOW + 10, LEASE)  # due at its time exactly
        assert not await store.claim_due(record.id, NOW + 11, LEASE)  # claimed
        assert not await store.claim_due(record.id, NOW + 10 + LEASE - 0.01, LEASE)
        # an entry under a live claim is not listed (other pollers take other games); a
        # lapsed one is again
        assert await store.due_games(NOW + 11, 10) == []
        lapsed = await store.due_games(NOW + 10 + LEASE, 10)
        assert lapsed == [DueGame(record.id, NOW + 10)]
        assert await store.claim_due(record.id, NOW + 10 + LEASE, LEASE)  # lapsed: re-claimed
        assert not await store.claim_due(record.id, NOW + 10 + LEASE + 1, LEASE)

    due.run(body)


def test_concurrent_claims_of_a_due_entry_have_exactly_one_winner(backend):
    due = Due(backend)
    records = [due_game(backend, NOW + i) for i in range(3)]

    async def body(store):
        for record in records:
            await store.create(record, [], TTL)
        for record in records:
            claims = [store.claim_due(record.id, NOW + 5, LEASE) for _ in range(50)]
            assert sorted(await asyncio.gather(*claims)) == [False] * 49 + [True]

    due.run(body)


# ------------------------------------------------------------------ settle and stamps


def test_settle_releases_the_claim_and_reschedules_gated_by_stamp(backend):
    due = Due(backend)
    r0 = due_game(backend, NOW + 10)
    r1 = r0.successor(due=NOW + 5)

    async def body(store):
        await store.create(r0, [], TTL)
        assert await store.claim_due(r0.id, NOW + 10, LEASE)
        # the game had moved on (not due yet): rescheduled at its due, claim released
        await store.settle_due(r0.id, NOW + 30, r0.stamp)
        assert await entry(store, r0.id) == NOW + 30
        assert not await store.claim_due(r0.id, NOW + 29, LEASE)
        assert await store.claim_due(r0.id, NOW + 30, LEASE)  # released: claimable when due
        await store.save(r1, r0.stamp, [], TTL, previous=r0)  # a newer stamp, earlier due
        assert await entry(store, r0.id) == NOW + 5
        await store.settle_due(r0.id, NOW + 90, r0.stamp)  # an older stamp: ignored...
        assert await entry(store, r0.id) == NOW + 5
        assert await store.claim_due(r0.id, NOW + 31, LEASE)  # ...but the claim released
        await store.settle_due(r0.id, NOW + 80, r1.stamp)  # the same stamp: applied
        assert await entry(store, r0.id) == NOW + 80
        await store.settle_due(r0.id, NOW + 70, r1.stamp + 3)  # a newer one too
        assert await entry(store, r0.id) == NOW + 70
        await store.settle_due(r0.id, None, r1.stamp)  # older than the entry's: kept
        assert await entry(store, r0.id) == NOW + 70
        await store.settle_due(r0.id, None, r1.stamp + 3)  # ended: removed
        assert await entry(store, r0.id) is None

    due.run(body)


def test_settle_of_a_game_gone_removes_whatever_the_entry_holds(backend):
    due = Due(backend)
    record = due_game(backend, NOW + 10)
    newer = record.successor(due=NOW + 1)

    async def body(store):
        await store.create(record, [], TTL)
        await store.save(newer, record.stamp, [], TTL, previous=record)
        assert await store.claim_due(record.id, NOW + 10, LEASE)
        await store.settle_due(record.id, NOW + 50, None)
        assert await entry(store, record.id) is None
        assert not await store.claim_due(record.id, NOW + 60, LEASE)
        await store.settle_due(record.id, None, None)  # nothing there: harmless

    due.run(body)


def test_an_ended_save_removes_the_claim_too_and_a_stale_removal_is_ignored(backend):
    """A game ended while claimed: no claim is left behind (nothing would remove it)."""
    due = Due(backend)
    r0 = due_game(backend, NOW + 10)
    r1 = r0.successor(due=NOW + 5)
    ended = r1.successor(due=None, aborted=True)

    async def body(store):
        await store.create(r0, [], TTL)
        await store.save(r1, r0.stamp, [], TTL, previous=r0)
        await store.settle_due(r0.id, None, r0.stamp)  # removal from an older stamp: ignored
        assert await entry(store, r0.id) == NOW + 5
        assert await store.claim_due(r0.id, NOW + 10, LEASE)
        await store.save(ended, r1.stamp, [], TTL, previous=r1)
        assert await entry(store, r0.id) is None

    due.run(body)
    if due.redis:
        assert backend.client.zscore(due.keys[2], r0.id) is None
        assert backend.client.hget(due.keys[1], r0.id) is None


def test_the_entry_is_never_later_than_the_stored_due(backend):
    """A seeded random run of saves (due earlier or later, with or without the game as read)
    and pollers settling what they read, some of them late (an older stamp): after every
    step the entry is at most the stored game's due."""
    due = Due(backend)
    rng = random.Random(12)
    start = due_game(backend, NOW + 100)

    async def body(store):
        await store.create(start, [], TTL)
        stored, seen = start, []
        for _ in range(150):
            step = rng.random()
            if step < 0.5:
                new = stored.successor(due=stored.due + rng.uniform(-40, 60))
                previous = stored if rng.random() < 0.8 else None
                await store.save(new, stored.stamp, [], TTL, previous=previous)
                stored = new
            else:  # a poller settles the game as it read it (maybe several saves ago)
                read = rng.choice([*seen[-4:], stored])
                await store.settle_due(stored.id, read.due, read.stamp)
            seen.append(stored)
            at = await entry(store, stored.id)
            assert at is not None
            assert at <= stored.due

    due.run(body)
