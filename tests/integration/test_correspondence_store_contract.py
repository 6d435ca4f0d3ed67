"""The correspondence stores' contracts (service.correspondence.records: `PlayerStore` and
`Presence`), run against both adapters: in memory, and real Redis standalone and on the
3-node Redis Cluster of tests/conftest.py (each test its own key prefix, its keys deleted
afterwards)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

import pytest

from infra.memory_presence import MemoryPresence
from infra.memory_push import MemoryPlayerStore
from infra.redis_client import connect
from infra.redis_presence import RedisPresence
from infra.redis_push import RedisPlayerStore
from service.correspondence.records import (
    Away,
    PlayerConflict,
    PlayerRecord,
    PushKeys,
    PushSubscription,
)
from tests.support.replicas import CLUSTER_GROUP

NOW = 1_760_000_000.5
KEYS = PushKeys(p256dh="BPublic", auth="secret")


@pytest.fixture(params=["memory", "redis", pytest.param("cluster", marks=CLUSTER_GROUP)])
def kind(request: pytest.FixtureRequest) -> tuple[str, str | None]:
    """(the adapter, its Redis URL)."""
    if request.param == "memory":
        return "memory", None
    if request.param == "cluster":
        return "cluster", request.getfixturevalue("redis_cluster").url
    return "redis", request.getfixturevalue("redis_url")


def run(kind: tuple[str, str | None], body: Callable[..., Awaitable[None]]) -> None:
    adapter, url = kind

    async def main() -> None:
        if url is None:
            await body(MemoryPlayerStore(), MemoryPresence())
            return
        client = connect(url, cluster=adapter == "cluster")
        prefix = f"ten-test-{secrets.token_hex(6)}"
        players = RedisPlayerStore(client, prefix=prefix)
        presence = RedisPresence(client, prefix=prefix)
        try:
            await body(players, presence)
        finally:
            # the keys these tests write (one by one: each is in a slot of its own)
            keys = [players.key(p) for p in ("ann", "bob", "cy")]
            keys += [presence.key(g, seat) for g in ("g1", "g2") for seat in range(3)]
            for key in keys:
                await client.delete(key)
            await client.aclose()

    asyncio.run(main())


def test_a_player_record_is_created_at_version_one_and_saved_on_its_version(kind):
    async def body(players, _presence) -> None:
        assert await players.load_player("ann") is None
        first = PlayerRecord(player_id="ann").successor(away=(Away(NOW),))
        await players.save_player(first)
        assert await players.load_player("ann") == first
        sub = PushSubscription(
            id="s1", endpoint="https://push.example/a", keys=KEYS, created_at=NOW
        )
        second = first.successor(subscriptions=(sub,))
        await players.save_player(second)
        assert await players.load_player("ann") == second
        assert await players.load_player("bob") is None

    run(kind, body)


def test_a_save_on_a_version_no_longer_stored_is_refused_with_the_stored_one(kind):
    async def body(players, _presence) -> None:
        first = PlayerRecord(player_id="ann").successor()
        await players.save_player(first)
        with pytest.raises(PlayerConflict) as again:
            await players.save_player(PlayerRecord(player_id="ann").successor(away=(Away(NOW),)))
        assert again.value.current == first
        with pytest.raises(PlayerConflict) as ahead:
            await players.save_player(first.successor().successor())
        assert ahead.value.current == first
        assert await players.load_player("ann") == first

    run(kind, body)


def test_a_new_record_over_none_stored_but_not_at_version_one_is_refused(kind):
    async def body(players, _presence) -> None:
        with pytest.raises(PlayerConflict) as refused:
            await players.save_player(PlayerRecord(player_id="cy", version=3))
        assert refused.value.current is None
        assert await players.load_player("cy") is None

    run(kind, body)


def test_a_stream_watches_until_it_leaves_or_its_word_lapses(kind):
    async def body(_players, presence) -> None:
        assert not await presence.watching("g1", 0, NOW)
        await presence.enter("g1", 0, "s1", NOW + 30)
        assert await presence.watching("g1", 0, NOW)
        assert not await presence.watching("g1", 1, NOW)  # another seat
        assert not await presence.watching("g2", 0, NOW)  # another game
        assert not await presence.watching("g1", 0, NOW + 30)  # lapsed: never said again
        await presence.enter("g1", 0, "s1", NOW + 60)  # said again
        assert await presence.watching("g1", 0, NOW + 30)
        await presence.leave("g1", 0, "s1")
        assert not await presence.watching("g1", 0, NOW)

    run(kind, body)


def test_a_seat_watching_from_two_streams_watches_until_both_left(kind):
    async def body(_players, presence) -> None:
        await presence.enter("g1", 2, "phone", NOW + 30)
        await presence.enter("g1", 2, "laptop", NOW + 30)
        await presence.leave("g1", 2, "phone")
        assert await presence.watching("g1", 2, NOW)
        await presence.leave("g1", 2, "laptop")
        assert not await presence.watching("g1", 2, NOW)
        await presence.leave("g1", 2, "laptop")  # twice: nothing

    run(kind, body)


def test_the_redis_presence_key_expires_after_its_last_word(redis_url):
    async def main() -> None:
        client = connect(redis_url)
        prefix = f"ten-test-{secrets.token_hex(6)}"
        presence = RedisPresence(client, prefix=prefix, ttl=45)
        try:
            await presence.enter("g1", 0, "s1", NOW + 45)
            ttl = await client.ttl(presence.key("g1", 0))
            assert 0 < ttl <= 45
            assert presence.key("g1", 0) == f"{prefix}:presence:{{g1}}:0"  # the game's slot
        finally:
            keys = await client.keys(f"{prefix}:*")
            if keys:
                await client.delete(*keys)
            await client.aclose()

    asyncio.run(main())
