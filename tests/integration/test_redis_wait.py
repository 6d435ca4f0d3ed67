"""Acknowledgement on WAIT (`RedisGameStore(wait_replicas=...)`, TEN_REDIS_WAIT_REPLICAS) on a
private primary and replica: a create or save returns once the replica has it; when the
replica cannot confirm in time (stopped, or fewer replicas than asked for), the write is
not acknowledged: StoreUnavailable (the API's 503 with Retry-After)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator

import msgspec
import pytest

from domain.tournaments.rules import Settings as TournamentSettings
from infra.redis_client import connect
from infra.redis_store import RedisGameStore
from infra.redis_tournaments import RedisTournamentStore
from service.core.model import TournamentRecord
from service.core.ports import IdempotentResponse, StoreUnavailable
from tests.servers import RedisServer, wait_until
from tests.support.records import TTL, advance, new_record


@pytest.fixture(scope="module")
def replicated() -> Iterator[tuple[RedisServer, RedisServer]]:
    primary = RedisServer()
    replica = RedisServer("--replicaof", "127.0.0.1", str(primary.port))
    try:

        def synced() -> bool:
            with replica.client() as client:
                return client.info("replication").get("master_link_status") == "up"

        wait_until(synced, 30, "the replica's first sync")
        yield primary, replica
    finally:
        replica.close()
        primary.close()


def answer() -> IdempotentResponse:
    record, events = new_record("wait-answer")
    return IdempotentResponse(fingerprint="0:wait", seat=0, record=record, events=events)


def on_replica(replica: RedisServer, game_id: str) -> int | None:
    """The stamp of the game as the replica has it (None: it has not got the game)."""
    with replica.client() as client:
        stamp = client.hget(f"{{game:{game_id}}}", "v")
    return None if stamp is None else int(stamp)


def run(store: RedisGameStore, work) -> None:
    async def body() -> None:
        try:
            await work(store)
        finally:
            await store.close()

    asyncio.run(body())


def test_every_acknowledged_write_is_on_the_replica_when_it_returns(replicated) -> None:
    primary, replica = replicated
    record, events = new_record("wait-acked")
    store = RedisGameStore(primary.url, wait_replicas=1, wait_timeout=5)

    async def work(store: RedisGameStore) -> None:
        await store.create(record, events, TTL)
        assert on_replica(replica, record.id) == record.stamp
        current = record
        while not current.ended:  # every save, the last (which ends it: the listings' trip) too
            following, produced = advance(current, 1)
            await store.save(following, current.stamp, produced, TTL, previous=current)
            assert on_replica(replica, record.id) == following.stamp
            current = following

    run(store, work)


@pytest.mark.parametrize("wait_replicas", [1, 2])
def test_a_write_the_replicas_do_not_confirm_in_time_is_not_acknowledged(
    replicated, wait_replicas: int
) -> None:
    primary, replica = replicated
    record, events = new_record(f"wait-unconfirmed-{wait_replicas}")
    first, first_events = advance(record, 1)
    waiting = RedisGameStore(primary.url, wait_replicas=wait_replicas, wait_timeout=0.2)
    plain = RedisGameStore(primary.url)

    async def work(store: RedisGameStore) -> None:
        assert replica.proc is not None
        if wait_replicas == 1:  # one replica, stopped: it cannot confirm
            replica.proc.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(StoreUnavailable, match=f"of {wait_replicas} replica"):
                await store.create(record, events, TTL)
            # the primary took it (and keeps it if it lives): the same save, not waiting on
            # replicas, goes through
            await plain.save(first, record.stamp, first_events, TTL)
            second, second_events = advance(first, 1)
            with pytest.raises(StoreUnavailable, match=f"of {wait_replicas} replica"):
                await store.save(second, first.stamp, second_events, TTL, ("key-2", answer()))
            # its replay is not an acknowledgement either while the replicas lag behind
            assert await plain.idempotent_response(record.id, "key-2") == answer()
            with pytest.raises(StoreUnavailable, match=f"of {wait_replicas} replica"):
                await store.idempotent_response(record.id, "key-2")
        finally:
            replica.proc.send_signal(signal.SIGCONT)
            await plain.close()

    run(waiting, work)


def test_waiting_on_a_redis_that_cannot_be_reached_is_unavailable() -> None:
    """Every step of a waiting write (the connection of its own included) maps a refused
    connection to StoreUnavailable: a 503, never a 500."""
    record, events = new_record("wait-unreachable")
    first, first_events = advance(record, 1)
    store = RedisGameStore("redis://127.0.0.1:1/0", wait_replicas=1, wait_timeout=0.2)

    async def work(store: RedisGameStore) -> None:
        with pytest.raises(StoreUnavailable):
            await store.create(record, events, TTL)
        with pytest.raises(StoreUnavailable):
            await store.save(first, record.stamp, first_events, TTL)

    run(store, work)


def test_a_tournament_write_is_acknowledged_only_once_the_replicas_have_it(replicated) -> None:
    """The tournaments' store waits as the games' does: acknowledged once on the replica;
    a create or save the stopped replica cannot confirm is StoreUnavailable (503)."""
    primary, replica = replicated
    assert replica.proc is not None

    async def work() -> None:
        client = connect(primary.url)
        store = RedisTournamentStore(client, prefix="ten-wait", wait=(1, 200))
        created = TournamentRecord(
            id="t-wait",
            name="Open",
            organiser="platform",
            places=8,
            settings=TournamentSettings(seed="s"),
            created_at=1.0,
            updated_at=1.0,
        )
        try:
            assert await store.create_tournament(created) is None
            with replica.client() as raw:  # on the replica when acknowledged
                assert raw.hget(store.key(created.id), "v") == b"0"
            replica.proc.send_signal(signal.SIGSTOP)
            try:
                later = msgspec.structs.replace(created, version=1, registered=("ann",))
                with pytest.raises(StoreUnavailable, match="of 1 replica"):
                    await store.save_tournament(later)
                other = msgspec.structs.replace(created, id="t-wait-2")
                with pytest.raises(StoreUnavailable, match="of 1 replica"):
                    await store.create_tournament(other)
            finally:
                replica.proc.send_signal(signal.SIGCONT)
        finally:
            await client.delete(store.key("t-wait"), store.key("t-wait-2"), store.index)
            await client.aclose()

    asyncio.run(work())
