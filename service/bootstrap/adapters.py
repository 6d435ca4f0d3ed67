"""The adapters the app runs on, chosen from the settings: the embedded default (one
process) or Redis (and PostgreSQL for the archive)."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from service.bulk.store import BulkStore
from service.core.ports import GameStore, TournamentStore
from service.core.settings import Settings
from service.correspondence.records import PlayerStore, Presence
from service.history.archive import GameArchive
from service.jobs.worker import LeasedQueue, registered
from service.matchmaking.records import TicketStore

log = logging.getLogger("ten")


class Adapters(NamedTuple):
    """The adapters the app runs on, all chosen from the settings here: Redis when
    `TEN_REDIS_URL` is set, else the embedded ones (one process)."""

    store: GameStore
    queue: Callable[[str], LeasedQueue]  # the leased queue of that name (service.jobs.worker)
    archive: GameArchive
    rate_counter: Any  # the rate limit's counts (service.entrypoints.api.rate_limit.RateCounter)
    store_system: str  # for metrics and traces: "redis" or "memory"
    close: Callable[[], Awaitable[None]]
    redis: Any = None  # the small shared client (outboxes, rate limits); None when embedded
    open: Callable[[], Awaitable[None]] | None = None  # before the first request
    tournaments: TournamentStore | None = (
        None  # the tournaments' store (service.tournaments.use_cases)
    )
    tickets: TicketStore | None = None  # the matchmaking tickets (service.matchmaking)
    # correspondence (service.correspondence): the players' records, who watches which game
    players: PlayerStore | None = None
    presence: Presence | None = None
    bulk: BulkStore | None = None  # the bulk pairings' store (service.bulk.use_cases)


def build_adapters(
    settings: Settings, store: GameStore | None = None, archive: GameArchive | None = None
) -> Adapters:
    """`store` and `archive`, when given (tests), replace the ones the settings name."""
    if archive is None:
        from infra.archive import SqlArchive  # noqa: PLC0415 - SQLAlchemy only when built

        archive = SqlArchive.from_url(settings.archive.database_url)
    if settings.redis.url is None:
        from infra.memory_bulk import MemoryBulkStore  # noqa: PLC0415
        from infra.memory_matchmaking import MemoryTicketStore  # noqa: PLC0415
        from infra.memory_presence import MemoryPresence  # noqa: PLC0415
        from infra.memory_push import MemoryPlayerStore  # noqa: PLC0415
        from infra.memory_store import MemoryGameStore  # noqa: PLC0415
        from infra.memory_tournaments import MemoryTournamentStore  # noqa: PLC0415
        from infra.queues import MemoryQueue  # noqa: PLC0415
        from infra.rate_limit_store import MemoryRateCounter  # noqa: PLC0415

        store = store if store is not None else MemoryGameStore()

        async def close_embedded() -> None:
            await store.close()
            await archive.close()

        # one queue per name for the process (functools.cache: made once, on first use)
        return Adapters(
            store,
            functools.cache(registered(MemoryQueue)),
            archive,
            MemoryRateCounter(),  # one process, one count
            "memory",
            close_embedded,
            tournaments=MemoryTournamentStore(),
            tickets=MemoryTicketStore(),
            players=MemoryPlayerStore(),
            presence=MemoryPresence(),
            bulk=MemoryBulkStore(),
        )
    return _redis_adapters(settings, store, archive)


def _redis_adapters(settings: Settings, store: GameStore | None, archive: GameArchive) -> Adapters:
    """The adapters on Redis (TEN_REDIS_URL): the game store, the queues and the rate-limit
    counts, shared by every replica."""
    assert settings.redis.url is not None
    from infra import queues as redis_queues  # noqa: PLC0415 - redis-py only when configured
    from infra.rate_limit_store import RedisRateCounter  # noqa: PLC0415
    from infra.redis_client import connect  # noqa: PLC0415
    from infra.redis_store import RedisGameStore  # noqa: PLC0415

    where = {
        "cluster": settings.redis.cluster,
        "sentinels": settings.redis.sentinels,
        "master": settings.redis.sentinel_master,
    }
    if store is None:
        store = RedisGameStore(
            settings.redis.url,
            wait_replicas=settings.redis.wait_replicas,
            wait_timeout=settings.redis.wait_timeout,
            max_connections=settings.redis.max_connections or 200,
            **where,
        )
    # the outbox (shared by every replica), the capabilities' stores and the rate-limit
    # counts: a small pool of their own
    client = connect(
        settings.redis.url, max_connections=settings.redis.max_connections or 50, **where
    )
    rate_counter = RedisRateCounter(client, namespace="ten-rate")  # shared by every replica

    async def close_redis() -> None:
        await store.close()
        await client.aclose()
        await archive.close()

    @functools.cache
    @registered
    def queue(name: str) -> LeasedQueue:
        return redis_queues.RedisQueue(client, name)

    async def open_redis() -> None:
        """Jobs an older release left in its own layout go to the queues (rolling upgrade)."""
        for key, name in (
            (redis_queues.LEGACY_ARCHIVE_OUTBOX, "archive"),
            (redis_queues.LEGACY_WEBHOOK_DELIVERIES, "webhooks"),
        ):
            moved = await redis_queues.adopt_legacy(client, key, queue(name), time.time())
            if moved:
                log.info(
                    "%d job(s) of an older release's %s moved to the %s queue", moved, key, name
                )

    return Adapters(
        store, queue, archive, rate_counter, "redis", close_redis, client, open_redis,
        *_redis_capability_stores(settings, client),
    )  # fmt: skip


def _redis_capability_stores(settings: Settings, client: Any) -> tuple[Any, ...]:
    """The capabilities' stores on the small shared client, in `Adapters`' order: the
    tournaments, the matchmaking tickets, the players' records, the presence, the bulk
    pairings (the writes of the versioned ones acknowledged on WAIT as the games')."""
    from infra.redis_bulk import RedisBulkStore  # noqa: PLC0415 - redis-py only when configured
    from infra.redis_matchmaking import RedisTicketStore  # noqa: PLC0415
    from infra.redis_presence import RedisPresence  # noqa: PLC0415
    from infra.redis_push import RedisPlayerStore  # noqa: PLC0415
    from infra.redis_tournaments import RedisTournamentStore  # noqa: PLC0415

    wait = (settings.redis.wait_replicas, int(settings.redis.wait_timeout * 1000))
    return (
        RedisTournamentStore(client, wait=wait), RedisTicketStore(client, wait=wait),
        RedisPlayerStore(client), RedisPresence(client, ttl=settings.correspondence.presence_ttl),
        RedisBulkStore(client, wait=wait),
    )  # fmt: skip
