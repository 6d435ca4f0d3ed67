"""The composition root: settings -> adapters -> use cases, and what runs beside them.

`build_adapters` picks the adapters (the embedded default, or Redis and PostgreSQL as the
settings say); `game_service` wires the use cases and their reactions on them, with the
background tasks (`Background`: the job workers, the deadline poller, the event streams'
reader). The HTTP app (`service.entrypoints.api.app.create_app`) and the job workers' own
process (`work_jobs`, `python -m service.cli work`) are both built from here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from infra.watchers import Watchers
from service.bulk.records import QUEUE as BULK
from service.bulk.store import BulkStore
from service.bulk.use_cases import BulkPairings
from service.core.cancellation import finish_within, stop_tasks
from service.core.ports import GameStore, TournamentStore
from service.core.settings import Settings
from service.core.unit_of_work import Retry
from service.correspondence.notices import QUEUE as PUSH
from service.correspondence.notices import PushDelivery, TurnNotices
from service.correspondence.records import PlayerStore, Presence
from service.correspondence.use_cases import Correspondence
from service.games.bot_work import BotWork
from service.games.use_cases import GameService
from service.history.archive import GameArchive
from service.history.archiver import Archiver, ArchiveReaction
from service.history.reviews import QUEUE as REVIEWS
from service.history.reviews import Reviews
from service.jobs.worker import LeasedQueue, registered
from service.lobby.use_cases import Lobby
from service.matchmaking.records import QUEUE as MATCHMAKING
from service.matchmaking.records import TicketStore
from service.matchmaking.use_cases import Matchmaking
from service.reactions.deadlines import DeadlinePoller
from service.reactions.relay import (
    DUE_MOVED,
    GAME_CREATED,
    GAME_ENDED,
    TURN_WAITS,
    LocalReaction,
    Reaction,
    ReactionTable,
    Relay,
)
from service.reactions.webhook_delivery import WebhookOutbox
from service.reactions.webhooks import Webhooks
from service.tournaments.director import TournamentReaction
from service.tournaments.records import QUEUE as TOURNAMENTS
from service.tournaments.secrecy import Secrecy
from service.tournaments.use_cases import Tournaments

log = logging.getLogger("ten")
STOP_SECONDS = 10.0  # the background tasks' time to stop at shutdown (then left behind)
CLOSE_SECONDS = 10.0  # the adapters' time to close at shutdown (then left behind)


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
    from infra.redis_bulk import RedisBulkStore  # noqa: PLC0415
    from infra.redis_client import connect  # noqa: PLC0415
    from infra.redis_matchmaking import RedisTicketStore  # noqa: PLC0415
    from infra.redis_presence import RedisPresence  # noqa: PLC0415
    from infra.redis_push import RedisPlayerStore  # noqa: PLC0415
    from infra.redis_store import RedisGameStore  # noqa: PLC0415
    from infra.redis_tournaments import RedisTournamentStore  # noqa: PLC0415

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
            **where,
        )
    # the outbox (shared by every replica), the tournaments and the rate-limit counts: a
    # small pool of their own; the tournaments' writes are acknowledged on WAIT as the games'
    wait = (settings.redis.wait_replicas, int(settings.redis.wait_timeout * 1000))
    client = connect(settings.redis.url, max_connections=50, **where)
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
        RedisTournamentStore(client, wait=wait), RedisTicketStore(client, wait=wait),
        RedisPlayerStore(client),
        RedisPresence(client, ttl=settings.correspondence.presence_ttl),
        RedisBulkStore(client, wait=wait),
    )  # fmt: skip


class Instruments:
    """Metrics and tracing as the settings ask, each off costing nothing per request. The
    app's one `Metrics` (`metrics`, None: off) is made here and handed to whatever counts."""

    def __init__(self, settings: Settings, store_system: str, tracer_provider: Any) -> None:
        self.metrics = None
        self.tracing = None
        self.store_system = store_system
        if settings.observability.metrics:
            from infra.observability import metrics as m  # noqa: PLC0415 - only when on

            self._m = m
            self.metrics = m.Metrics()
        if settings.observability.tracing:
            from infra.observability.tracing import Tracing  # noqa: PLC0415 - optional

            self.tracing = Tracing(tracer_provider)

    def store(self, store: GameStore) -> GameStore:
        if self.metrics is None and self.tracing is None:
            return store
        from infra.observability.instrumented_store import InstrumentedStore  # noqa: PLC0415

        return InstrumentedStore(
            store,
            self.metrics,
            tracer=self.tracing.tracer if self.tracing else None,
            system=self.store_system,
        )

    def count_job(self) -> Callable[[str, str], None] | None:
        """What the job workers count (`ten_jobs_total{queue,outcome}`), None: metrics off."""
        return None if self.metrics is None else self.metrics.job

    def count_queued(self) -> Callable[[], None] | None:
        return None if self.metrics is None else self.metrics.archive_queued.inc

    def reaction(self) -> LocalReaction | None:
        """The metrics' reaction to saves (actions, games created and finished); None: off."""
        return None if self.metrics is None else self._m.GameMetrics(self.metrics)

    def route_handlers(self, store: GameStore) -> list:
        return [] if self.metrics is None else [self._m.metrics_route(store, self.metrics)]

    def plugins(self) -> list:
        plugins: list = []
        if self.metrics is not None:
            plugins.append(self._m.ProblemMetricsPlugin(self.metrics))  # after ProblemDetails
        if self.tracing is not None:
            plugins.append(self.tracing.plugin)
        return plugins

    def before_send(self) -> list:
        return [] if self.tracing is None else self.tracing.before_send

    def shutdown(self) -> None:
        if self.metrics is not None:
            self.metrics.flush()  # this worker's last second, before it exits
            self._m.mark_process_dead()
        if self.tracing is not None:
            self.tracing.shutdown()


class Background:
    """The tasks every process runs beside the requests: the job workers (the archiver, the
    relay of changes whose process did not relay them, the webhooks' deliveries, the
    post-game reviews), the deadline poller, the event streams' reader, the metrics
    flusher."""

    def __init__(
        self,
        settings: Settings,
        archiver: Archiver,
        relay: Relay,
        service: GameService,
        obs: Instruments,
        secrecy: Secrecy,
        webhooks: Webhooks,
        deadlines: DeadlinePoller,
        reviews: Reviews,
        tournaments: Tournaments,
        bulk: BulkPairings,
        matchmaking: Matchmaking | None = None,
        correspondence: CorrespondenceParts | None = None,
    ) -> None:
        self.settings, self.archiver, self.service, self.obs = settings, archiver, service, obs
        self.reviews = reviews
        self.secrecy = secrecy
        self.tournaments = tournaments
        self.director = tournaments.director.worker(count=obs.count_job())
        self.bulk = bulk
        self.bulk_starts = bulk.worker(count=obs.count_job())
        self.relay = relay
        self.open_adapters: Callable[[], Awaitable[None]] | None = None
        self.relayer = relay.worker(count=obs.count_job())
        self.webhooks = webhooks
        self.deadlines = deadlines
        self.correspondence = correspondence
        self.tasks: list[asyncio.Task] = []
        self.matchmaking = matchmaking
        self.matchmaker = (
            None if matchmaking is None else matchmaking.matchmaker.worker(count=obs.count_job())
        )
        # every event stream of the process, served by one reader of the store
        self.watchers = Watchers(
            service.store,
            max_streams=settings.streams.max_streams,
            max_per_client=settings.streams.max_per_client,
            buffer=settings.streams.buffer,
            keepalive=settings.streams.keepalive,
            presence=None if correspondence is None else correspondence.presence,
            presence_ttl=settings.correspondence.presence_ttl,
        )

    async def start(self) -> None:
        await self.service.store.open()
        if self.settings.archive.run_migrations:
            from infra.archive.migrate import upgrade_async  # noqa: PLC0415

            await upgrade_async(self.settings.archive.database_url)
        if self.open_adapters is not None:
            await self.open_adapters()
        if self.settings.runtime.job_workers:
            self.start_jobs()
        self._run(self.deadlines.run_forever(), "ten-deadlines")
        self._run(self.watchers.run_forever(), "ten-watchers")
        if self.obs.metrics is not None:
            self._run(self.obs.metrics.flush_forever(), "ten-metrics")

    def start_jobs(self) -> None:
        """The queues' workers (archive, relay, reviews, tournaments, webhooks): in every
        serving process (TEN_JOB_WORKERS), else in the processes of `python -m service.cli
        work`."""
        self._run(self.archiver.run_forever(), "ten-archiver")
        self._run(self.relayer.run_forever(), "ten-relay")
        self._run(self.reviews.worker.run_forever(), "ten-reviews")
        self._run(self.director.run_forever(), "ten-tournaments")
        self._run(self.bulk_starts.run_forever(), "ten-bulk")
        if self.webhooks.enabled:
            self._run(self.webhooks.run_forever(), "ten-webhooks")
        if self.matchmaker is not None:
            self._run(self.matchmaker.run_forever(), "ten-matchmaking")
        if self.correspondence is not None:
            self._run(self.correspondence.push_worker.run_forever(), "ten-push")

    def _run(self, coroutine: Any, name: str) -> None:
        self.tasks.append(asyncio.create_task(coroutine, name=name))

    async def stop(self) -> None:
        await stop_tasks(self.tasks, STOP_SECONDS)
        await self.webhooks.close()
        if self.correspondence is not None:
            await self.correspondence.sender.close()


def game_service(
    settings: Settings, adapters: Adapters, obs: Instruments
) -> tuple[GameService, Background]:
    """The use cases on the adapters, and what runs beside them: the relay and its reaction
    table, the workers of their queues and the deadline poller."""
    store = obs.store(adapters.store)
    assert adapters.tournaments is not None
    # the relay first: every use case saves through it; its table once the reactions exist
    relay = Relay(store, adapters.queue("relay"))
    webhooks = platform_webhooks(settings, adapters, obs)
    corr = correspondence_parts(settings, adapters, webhooks, obs)
    service = GameService(
        store, settings, relay=relay, bots=bot_work(settings), away=corr.use_cases.away
    )
    tournaments = Tournaments(
        adapters.tournaments,
        adapters.queue(TOURNAMENTS),
        Lobby(service).create,  # the platform deals the tables' games
        announce=webhooks.announce,
        retry=service.retry,
        quotas=store,
        max_open=settings.quotas.max_open_tournaments,
    )
    # who may read a game of a deal still played at another table: the reads and the archive
    secrecy = Secrecy(store.load, adapters.tournaments.load_tournament, service.seat_or_none)
    archiver = Archiver(
        adapters.queue("archive"),
        adapters.archive,
        secrecy=secrecy,
        poll=settings.archive.interval,
        max_backoff=30.0,
        count=obs.count_job(),
    )
    # games whose clock ran out or that were left idle, on whichever replica sees them first
    deadlines = DeadlinePoller(
        store,
        service.fire_due,
        poll=settings.games.deadline_poll,
        lease=settings.games.deadline_lease,
        metrics=obs.metrics,
    )
    relay.register(
        reaction_table(
            archive=ArchiveReaction(
                store, archiver.queue, wake=archiver.wake, count=obs.count_queued()
            ),
            webhooks=webhooks if webhooks.enabled else None,
            tournaments=TournamentReaction(tournaments.director.record_result),
            deadlines=deadlines,
            metrics=obs.reaction(),
            notices=corr.notices,
        )
    )
    reviews = post_game_reviews(settings, adapters, service, obs)
    kept = (webhooks, deadlines, reviews, tournaments, bulk_pairings(settings, adapters, service))
    return service, Background(
        settings, archiver, relay, service, obs, secrecy, *kept,
        matchmaking=matchmaking(settings, adapters, service, webhooks), correspondence=corr,
    )  # fmt: skip


def matchmaking(
    settings: Settings, adapters: Adapters, service: GameService, webhooks: Webhooks
) -> Matchmaking:
    """The matchmaking tickets and their matchmaker: tables made by the lobby's create (by
    the platform), ratings read from the archive, webhooks queued as the games' are."""
    assert adapters.tickets is not None
    return Matchmaking(
        adapters.tickets,
        adapters.queue(MATCHMAKING),
        Lobby(service).create,
        ratings=adapters.archive.ratings,
        announce=webhooks.announce,
        clock=service.now,
        identities_open=not settings.identity.api_keys and not settings.identity.jwt_configured,
        retry=service.retry,
        quotas=service.store,
    )


class CorrespondenceParts(NamedTuple):
    """Correspondence play, wired (service.correspondence): the use cases, the presence the
    event streams say, the turn notices (a durable reaction) and the push queue's worker."""

    use_cases: Correspondence
    presence: Presence
    notices: TurnNotices
    push_worker: Any  # service.jobs.worker.Worker
    sender: Any  # infra.push_sender.WebPushSender


def correspondence_parts(
    settings: Settings, adapters: Adapters, webhooks: Webhooks, obs: Instruments
) -> CorrespondenceParts:
    from infra.push_sender import WebPushSender  # noqa: PLC0415 - pywebpush only when built

    assert adapters.players is not None
    assert adapters.presence is not None
    corr = settings.correspondence
    use_cases = Correspondence(
        adapters.players,
        Retry(settings.games.act_retries),
        allow_http_loopback=corr.push_allow_http_loopback,
        max_subscriptions=corr.max_push_subscriptions,
        vacation_days=corr.vacation_days,
    )
    sender = WebPushSender(corr.vapid_private_key, corr.vapid_subject)
    queue = adapters.queue(PUSH)
    delivery = PushDelivery(
        queue, adapters.players, sender, use_cases.forget, ttl=corr.push_ttl, tries=corr.push_tries
    )
    worker = delivery.worker(count=obs.count_job())
    notices = TurnNotices(
        adapters.presence,
        adapters.players,
        queue,
        announce=webhooks.announce if webhooks.enabled else None,
        wake=worker.wake,
    )
    return CorrespondenceParts(use_cases, adapters.presence, notices, worker, sender)


def reaction_table(
    *,
    archive: Reaction | None = None,
    webhooks: Reaction | None = None,
    tournaments: Reaction | None = None,
    deadlines: LocalReaction | None = None,
    metrics: LocalReaction | None = None,
    notices: Reaction | None = None,
) -> ReactionTable:
    """What happens when a game changes: each kind of change (every event type of the
    domain, and the record's own facts) -> the reactions it calls for, run in the order the
    table first names them. Durable (marked before the save, at least once): the archive,
    the platform's webhooks (when configured), the tournaments; local (this process's): the
    deadline poller's wake, the metrics (when on). A kind no reaction wants has its row. A
    reaction left out (None: tests list the ones they look at) is in no row."""
    hooks, count = _listed(webhooks), _listed(metrics)
    return {
        GAME_CREATED: count,
        GAME_ENDED: (*_listed(archive), *hooks, *_listed(tournaments), *count),
        DUE_MOVED: _listed(deadlines),
        "game_started": hooks,
        "seat_taken_over": (*hooks, *count),  # a webhook; a resign, counted as an action
        # the first event of an action a seat took: counted by type
        "card_drawn": count,
        "stopped": count,
        "bid_placed": count,
        "bid_passed": count,
        "card_bought": count,
        "buy_declined": count,
        "seat_reclaimed": count,
        # what an action or the clock makes follow: no reaction of its own
        "turn_started": (),
        "auction_started": (),
        "auction_won": (),
        "wild_discarded": (),
        "busted": (),
        "final_buy_started": (),
        "timed_out": (),
        "game_finished": (),  # its end is GAME_ENDED
        # a correspondence game's decision handed to a human seat: tell its player
        TURN_WAITS: _listed(notices),
    }


def _listed(reaction: Reaction | LocalReaction | None) -> tuple[Any, ...]:
    return () if reaction is None else (reaction,)


def platform_webhooks(settings: Settings, adapters: Adapters, obs: Instruments) -> Webhooks:
    """The platform's webhooks (TEN_WEBHOOK_URLS): their outbox and sender when on."""
    outbox = sender = None
    if settings.webhooks.urls:
        from infra.webhook_sender import HttpSender  # noqa: PLC0415 - httpx only when on

        outbox = WebhookOutbox(adapters.queue("webhooks"))
        sender = HttpSender(settings.webhooks.secret or "", timeout=settings.webhooks.timeout)
    return Webhooks(
        outbox,
        settings.webhooks.urls,
        sender,
        metrics=obs.metrics,
        timeout=settings.webhooks.timeout,
        max_backoff=settings.webhooks.max_backoff,
        retention=settings.webhooks.retention,
    )


def post_game_reviews(
    settings: Settings, adapters: Adapters, service: GameService, obs: Instruments
) -> Reviews:
    """The reviews of finished games: computed in the bots' pool, kept in the archive."""
    return Reviews(
        service.store,
        adapters.archive,
        adapters.queue(REVIEWS),
        bot_work(settings, "background"),  # never in a live step's way
        bound=settings.quotas.review_queue,
        quotas=service.store,
        per_caller=settings.quotas.max_pending_reviews,
        poll=settings.archive.interval,
        max_backoff=30.0,
        count=obs.count_job(),
    )


def bot_work(settings: Settings, lane: str = "live") -> BotWork:
    """The bots' steps on this process's pool of worker processes (TEN_BOT_WORKERS); the
    "background" lane (reviews) on a worker of its own (`infra.bot_pool.bot_pool`)."""
    if not settings.runtime.bot_workers:
        return BotWork(None)
    from infra.bot_pool import bot_pool  # noqa: PLC0415 - the pool only when there is one

    workers = settings.runtime.bot_workers if lane == "live" else 1
    return BotWork(bot_pool(workers, lane), limit=settings.runtime.bot_queue)


def refuse_jobs_nobody_works(settings: Settings) -> None:
    if not settings.runtime.job_workers and settings.redis.url is None:
        raise ValueError(
            "TEN_JOB_WORKERS=false needs TEN_REDIS_URL: the embedded store's queues live in "
            "this process, so no other process can work them"
        )


async def work_jobs(settings: Settings, stop: asyncio.Event) -> None:
    """The queues' workers without the HTTP API, until `stop` is set (`python -m service.cli
    work`, beside serving processes started with TEN_JOB_WORKERS=false)."""
    if settings.redis.url is None:
        raise ValueError("the job workers' own process needs TEN_REDIS_URL (the queues)")
    adapters = build_adapters(settings)
    obs = Instruments(settings, adapters.store_system, None)
    service, background = game_service(settings, adapters, obs)
    try:
        await service.store.open()
        await adapters.open()
        background.start_jobs()
        await stop.wait()
    finally:
        await close_all(background, adapters, obs)


async def close_all(background: Background, adapters: Adapters, obs: Instruments) -> None:
    """Stop the background tasks, then close the adapters (bounded: one shutdown in a full
    run never ended, waiting on an unknown step), then the instruments."""
    await background.stop()
    await finish_within(adapters.close(), "closing the adapters", CLOSE_SECONDS)
    obs.shutdown()


def bulk_pairings(settings: Settings, adapters: Adapters, service: GameService) -> BulkPairings:
    """The platform's bulk pairings: scheduled tables of the lobby, started by the leased
    queue's jobs at their time."""
    assert adapters.bulk is not None
    return BulkPairings(
        adapters.bulk,
        Lobby(service),  # the platform's scheduled tables, started by the lobby's start
        adapters.queue(BULK),
        quotas=service.store,
        max_scheduled=settings.quotas.max_scheduled_bulk_pairings,
        retry=service.retry,
    )
