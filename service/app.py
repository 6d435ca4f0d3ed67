"""The composition root: settings -> adapters -> use cases -> Litestar app.

`service.app:app` is the app for `uvicorn service.app:app` / `litestar --app service.app:app run`;
tests build their own with `create_app(settings, store=...)`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from litestar import Litestar, Request
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.static_files import create_static_files_router

from service.api.history_routes import (
    ArchiveController,
    leaderboard,
    player_stats,
    predict_table,
    rating_history,
)
from service.api.info_routes import info, service_info
from service.api.lobby_routes import LobbyController
from service.api.numbers import strict_numbers
from service.api.odds_routes import odds
from service.api.openapi import finish_openapi, openapi_config
from service.api.problems import internal_error_handler, problem_details_config
from service.api.rate_limit import EXEMPT, AtomicRateLimitConfig
from service.api.routes import GamesController, allow_every_method, health, ready, rules, score
from service.api.static_files import LocalFiles
from service.api.tournament_routes import TOURNAMENT_ROUTES
from service.api.web_routes import REVALIDATE, STATIC, web_client
from service.archive import GameArchive
from service.archiver import Archiver
from service.bot_work import BotWork
from service.callers import Caller
from service.cancellation import finish_within, stop_tasks
from service.deadlines import DeadlinePoller
from service.games import GameService
from service.history import History
from service.identity import Identity
from service.jobs import LeasedQueue, registered
from service.lobby import Lobby
from service.model import GameRecord
from service.observability.logs import RequestContext, configure_logging
from service.ports import Fired, GameStore, TournamentStore
from service.relay import ArchiveReaction, LocalReaction, Relay
from service.reviews import QUEUE as REVIEWS
from service.reviews import Reviews
from service.runtime import refuse_several_embedded_workers, tune_gc
from service.secrecy import Secrecy
from service.settings import Settings
from service.tournament_feeds import TournamentFeeds
from service.tournaments import QUEUE as TOURNAMENTS
from service.tournaments import TournamentReaction, Tournaments
from service.watchers import Watchers
from service.webhooks import WebhookOutbox, Webhooks

# what a browser client may send and read across origins (TEN_CORS_ORIGINS)
CORS_REQUEST_HEADERS = [
    "Authorization",
    "X-API-Key",
    "If-Match",
    "Idempotency-Key",
    "Last-Event-ID",
    "Content-Type",
    "X-Request-ID",
]
CORS_RESPONSE_HEADERS = [
    "ETag",
    "Location",
    "Idempotent-Replayed",
    "Retry-After",
    "WWW-Authenticate",
    "X-Request-ID",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "RateLimit-Policy",
]
log = logging.getLogger("ten")
STOP_SECONDS = 10.0  # the background tasks' time to stop at shutdown (then left behind)
CLOSE_SECONDS = 10.0  # the adapters' time to close at shutdown (then left behind)


class Adapters(NamedTuple):
    """The adapters the app runs on, all chosen from the settings here: Redis when
    `TEN_REDIS_URL` is set, else the embedded ones (one process)."""

    store: GameStore
    queue: Callable[[str], LeasedQueue]  # the leased queue of that name (service.jobs)
    archive: GameArchive
    rate_counter: Any  # the rate limit's counts (service.api.rate_limit.RateCounter)
    store_system: str  # for metrics and traces: "redis" or "memory"
    close: Callable[[], Awaitable[None]]
    redis: Any = None  # the small shared client (outboxes, rate limits); None when embedded
    open: Callable[[], Awaitable[None]] | None = None  # before the first request
    tournaments: TournamentStore | None = None  # the tournaments' store (service.tournaments)


def build_adapters(
    settings: Settings, store: GameStore | None = None, archive: GameArchive | None = None
) -> Adapters:
    """`store` and `archive`, when given (tests), replace the ones the settings name."""
    if archive is None:
        from infra.archive import SqlArchive  # noqa: PLC0415 - SQLAlchemy only when built

        archive = SqlArchive.from_url(settings.database_url)
    if settings.redis_url is None:
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
        )
    return _redis_adapters(settings, store, archive)


def _redis_adapters(settings: Settings, store: GameStore | None, archive: GameArchive) -> Adapters:
    """The adapters on Redis (TEN_REDIS_URL): the game store, the queues and the rate-limit
    counts, shared by every replica."""
    assert settings.redis_url is not None
    from infra import queues as redis_queues  # noqa: PLC0415 - redis-py only when configured
    from infra.rate_limit_store import RedisRateCounter  # noqa: PLC0415
    from infra.redis_store import RedisGameStore, connect  # noqa: PLC0415
    from infra.redis_tournaments import RedisTournamentStore  # noqa: PLC0415

    where = {
        "cluster": settings.redis_cluster,
        "sentinels": settings.redis_sentinels,
        "master": settings.redis_sentinel_master,
    }
    if store is None:
        store = RedisGameStore(
            settings.redis_url,
            wait_replicas=settings.redis_wait_replicas,
            wait_timeout=settings.redis_wait_timeout,
            **where,
        )
    # the outbox (shared by every replica), the tournaments and the rate-limit counts: a
    # small pool of their own; the tournaments' writes are acknowledged on WAIT as the games'
    wait = (settings.redis_wait_replicas, int(settings.redis_wait_timeout * 1000))
    client = connect(settings.redis_url, max_connections=50, **where)
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
        RedisTournamentStore(client, wait=wait),
    )  # fmt: skip


class Instruments:
    """Metrics and tracing as the settings ask, each off costing nothing per request. The
    app's one `Metrics` (`metrics`, None: off) is made here and handed to whatever counts."""

    def __init__(self, settings: Settings, store_system: str, tracer_provider: Any) -> None:
        self.metrics = None
        self.tracing = None
        self.store_system = store_system
        if settings.metrics:
            from service.observability import metrics as m  # noqa: PLC0415 - only when on

            self._m = m
            self.metrics = m.Metrics()
        if settings.tracing:
            from service.observability.tracing import Tracing  # noqa: PLC0415 - optional

            self.tracing = Tracing(tracer_provider)

    def store(self, store: GameStore) -> GameStore:
        if self.metrics is None and self.tracing is None:
            return store
        from service.instrumented_store import InstrumentedStore  # noqa: PLC0415

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

    def reactions(self) -> list[LocalReaction]:
        """The metrics' reaction to every save (actions, games created and finished)."""
        return [] if self.metrics is None else [self._m.GameMetrics(self.metrics)]

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
    ) -> None:
        self.settings, self.archiver, self.service, self.obs = settings, archiver, service, obs
        self.reviews = reviews
        self.secrecy = secrecy
        self.tournaments = tournaments
        self.director = tournaments.worker(count=obs.count_job())
        self.relay = relay
        self.open_adapters: Callable[[], Awaitable[None]] | None = None
        self.relayer = relay.worker(count=obs.count_job())
        self.webhooks = webhooks
        self.deadlines = deadlines
        self.tasks: list[asyncio.Task] = []
        # every event stream of the process, served by one reader of the store
        self.watchers = Watchers(
            service.store,
            max_streams=settings.sse_max_streams,
            max_per_client=settings.sse_max_per_client,
            buffer=settings.sse_buffer,
            keepalive=settings.sse_keepalive,
        )

    async def start(self) -> None:
        await self.service.store.open()
        if self.settings.run_migrations:
            from infra.archive.migrate import upgrade_async  # noqa: PLC0415

            await upgrade_async(self.settings.database_url)
        if self.open_adapters is not None:
            await self.open_adapters()
        if self.settings.job_workers:
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
        if self.webhooks.enabled:
            self._run(self.webhooks.run_forever(), "ten-webhooks")

    def _run(self, coroutine: Any, name: str) -> None:
        self.tasks.append(asyncio.create_task(coroutine, name=name))

    async def stop(self) -> None:
        await stop_tasks(self.tasks, STOP_SECONDS)
        await self.webhooks.close()


def _not_a_preflight(request: Request) -> bool:
    return request.method != "OPTIONS"


def rate_limiting(settings: Settings, adapters: Adapters) -> list:
    """The rate-limit middleware as `TEN_RATE_LIMIT` asks (none unset), counting on the
    adapters' counter (Redis: shared by every replica; embedded: this process)."""
    if settings.rate_limit is None:
        return []
    limit, unit = settings.rate_limit
    config = AtomicRateLimitConfig(
        rate_limit=(unit, limit),  # type: ignore[arg-type]
        exclude=EXEMPT,
        check_throttle_handler=_not_a_preflight,  # a browser's CORS preflight is no call
        counter=adapters.rate_counter,
    )
    return [config.middleware]


def cors(settings: Settings) -> CORSConfig | None:
    """Browsers on `TEN_CORS_ORIGINS` may call the API (unset: no CORS headers at all).
    No cookies are used, so no credentials mode: callers send their headers themselves."""
    if not settings.cors_origins:
        return None
    return CORSConfig(
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=CORS_REQUEST_HEADERS,
        expose_headers=CORS_RESPONSE_HEADERS,
        allow_credentials=False,
        max_age=600,
    )


def identity_state(settings: Settings) -> dict[str, Any]:
    """Who is calling (`service.api.auth.authenticated` asks `identity`) and what
    /v1/info says; the start's one line on the identity mode (a WARNING when open)."""
    identity = Identity.from_settings(settings)
    identity.announce()
    return {"identity": identity, "info": service_info(settings, identity)}


def routes() -> list:
    return [
        GamesController,
        LobbyController,
        *TOURNAMENT_ROUTES,
        ArchiveController,
        player_stats,
        rating_history,
        leaderboard,
        predict_table,
        score,
        odds,
        rules,
        info,
        health,
        ready,
        web_client,
        create_static_files_router(
            path="/static",
            directories=[STATIC],
            file_system=LocalFiles(),  # a path no file can have is a 404, not a 500
            include_in_schema=False,
            cache_control=REVALIDATE,
        ),
    ]


def use_cases(
    service: GameService, archive: GameArchive, who: dict[str, Any], background: Background
) -> State:
    """What the handlers call, in the app state: the games, the lobby, the history, who is
    calling (`identity_state`), the deadline poller (`deadlines`), the event streams
    (`watchers`; the tournaments' `tournament_feeds`) and the post-game reviews
    (`reviews`)."""
    lobby = Lobby(service, identities_open=who["identity"].open)
    tournaments = background.tournaments
    secrecy = background.secrecy
    history = History(archive, secrecy)
    deadlines, watchers = background.deadlines, background.watchers
    return State(
        {
            "service": service,
            "lobby": lobby,
            "history": history,
            "deadlines": deadlines,
            "watchers": watchers,
            "reviews": background.reviews,
            "tournaments": tournaments,
            "tournament_feeds": TournamentFeeds(tournaments.get),
            "secrecy": secrecy,
            **who,
        }
    )


def game_service(
    settings: Settings, adapters: Adapters, obs: Instruments
) -> tuple[GameService, Background]:
    """The game use cases on the adapters, and what runs beside them: the relay and its
    reactions (the archive queue, the platform's webhooks: TEN_WEBHOOK_URLS), the workers of
    their queues and the deadline poller."""
    store = obs.store(adapters.store)
    assert adapters.tournaments is not None
    secrecy = deal_secrecy(store, adapters.tournaments, lambda: service)  # made below
    archiver = Archiver(
        adapters.queue("archive"),
        adapters.archive,
        secrecy=secrecy,
        poll=settings.archive_interval,
        max_backoff=30.0,
        count=obs.count_job(),
    )
    webhooks = platform_webhooks(settings, adapters, obs)
    archive_reaction = ArchiveReaction(
        store, archiver.queue, wake=archiver.wake, count=obs.count_queued()
    )

    async def fire(game_id: str) -> Fired:
        # the poller and the service need each other (the service's saves tell the poller
        # of their dues): the service, made below, is looked up when a game is due
        return await service.fire_due(game_id)

    # games whose clock ran out or that were left idle, on whichever replica sees them
    # first; told of every due this process's saves set (a local reaction: the embedded
    # store's timer)
    deadlines = DeadlinePoller(
        store,
        fire,
        poll=settings.deadline_poll,
        lease=settings.deadline_lease,
        metrics=obs.metrics,
    )

    # every reaction to a change, in one place: to add one, list it here. Durable (marked,
    # at least once): the archive, the webhooks, the tournaments; local (this process's):
    # the deadline poller's wake, the metrics
    tournament_reaction, director = tournament_director(adapters, webhooks)
    reactions = [archive_reaction, webhooks, tournament_reaction, deadlines, *obs.reactions()]
    relay = Relay(store, adapters.queue("relay"), reactions)
    service = GameService(store, settings, relay=relay, bots=bot_work(settings))
    reviews = post_game_reviews(settings, adapters, service, obs)
    kept = (webhooks, deadlines, reviews, director(service))
    return service, Background(settings, archiver, relay, service, obs, secrecy, *kept)


def platform_webhooks(settings: Settings, adapters: Adapters, obs: Instruments) -> Webhooks:
    """The platform's webhooks (TEN_WEBHOOK_URLS): their outbox and sender when on."""
    outbox = sender = None
    if settings.webhook_urls:
        from infra.webhook_sender import HttpSender  # noqa: PLC0415 - httpx only when on

        outbox = WebhookOutbox(adapters.queue("webhooks"))
        sender = HttpSender(settings.webhook_secret or "", timeout=settings.webhook_timeout)
    return Webhooks(
        outbox,
        settings.webhook_urls,
        sender,
        metrics=obs.metrics,
        timeout=settings.webhook_timeout,
        max_backoff=settings.webhook_max_backoff,
        retention=settings.webhook_retention,
    )


def deal_secrecy(
    store: GameStore, tournaments: TournamentStore, service: Callable[[], GameService]
) -> Secrecy:
    """Who may read a game of a deal still played at another table: the reads' policy, and
    the archive's (which holds such a game until its deal is played everywhere)."""

    async def seat_of(record: GameRecord, caller: Caller) -> int | None:
        return await service().seat_or_none(record, caller)

    return Secrecy(store.load, tournaments.load_tournament, seat_of)


def tournament_director(
    adapters: Adapters, webhooks: Webhooks
) -> tuple[TournamentReaction, Callable[[GameService], Tournaments]]:
    """The relay's reaction to a tournament game's end, and what makes the tournaments'
    use case once the game service (which the relay's reactions are made before) is made:
    the reaction looks the use case up when a game ends."""
    made: list[Tournaments] = []

    async def record_result(record: GameRecord) -> None:
        await made[0].record_result(record)

    def make(service: GameService) -> Tournaments:
        assert adapters.tournaments is not None
        made.append(
            Tournaments(
                adapters.tournaments,
                adapters.queue(TOURNAMENTS),
                Lobby(service).create,  # the platform deals the tables' games
                announce=webhooks.announce,
                retry=service.retry,
                quotas=service.store,
                max_open=service.settings.max_open_tournaments,
            )
        )
        return made[0]

    return TournamentReaction(record_result), make


def post_game_reviews(
    settings: Settings, adapters: Adapters, service: GameService, obs: Instruments
) -> Reviews:
    """The reviews of finished games: computed in the bots' pool, kept in the archive."""
    return Reviews(
        service.store,
        adapters.archive,
        adapters.queue(REVIEWS),
        bot_work(settings, "background"),  # never in a live step's way
        bound=settings.review_queue,
        quotas=service.store,
        per_caller=settings.max_pending_reviews,
        poll=settings.archive_interval,
        max_backoff=30.0,
        count=obs.count_job(),
    )


def bot_work(settings: Settings, lane: str = "live") -> BotWork:
    """The bots' steps on this process's pool of worker processes (TEN_BOT_WORKERS); the
    "background" lane (reviews) on a worker of its own (`infra.bot_pool.bot_pool`)."""
    if not settings.bot_workers:
        return BotWork(None)
    from infra.bot_pool import bot_pool  # noqa: PLC0415 - the pool only when there is one

    workers = settings.bot_workers if lane == "live" else 1
    return BotWork(bot_pool(workers, lane), limit=settings.bot_queue)


def refuse_jobs_nobody_works(settings: Settings) -> None:
    if not settings.job_workers and settings.redis_url is None:
        raise ValueError(
            "TEN_JOB_WORKERS=false needs TEN_REDIS_URL: the embedded store's queues live in "
            "this process, so no other process can work them"
        )


async def work_jobs(settings: Settings, stop: asyncio.Event) -> None:
    """The queues' workers without the HTTP API, until `stop` is set (`python -m service.cli
    work`, beside serving processes started with TEN_JOB_WORKERS=false)."""
    if settings.redis_url is None:
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
        await background.stop()
        await finish_within(adapters.close(), "closing the adapters", CLOSE_SECONDS)
        obs.shutdown()


def create_app(
    settings: Settings | None = None,
    store: GameStore | None = None,
    archive: GameArchive | None = None,
    *,
    tracer_provider: Any = None,
    serving: bool = False,
) -> Litestar:
    """The app; `tracer_provider` (OpenTelemetry) replaces the OTLP exporter when tracing is on.

    `serving`: the app is the process's one app (`service.app:app`): it refuses to start in
    several uvicorn workers on the embedded store, and once it has started it tunes the
    process's garbage collector (`service.runtime.tune_gc`); apps built by tests leave their
    process alone.
    """
    settings = settings or Settings.from_env()
    if serving:
        refuse_several_embedded_workers(settings.redis_url)
    refuse_jobs_nobody_works(settings)
    # before uvicorn logs that the server started: every line in the configured format
    configure_logging(settings.log_format, settings.log_level, settings.access_log)
    who = identity_state(settings)  # before any adapter: a bad key fails first
    adapters = build_adapters(settings, store, archive)
    obs = Instruments(settings, adapters.store_system, tracer_provider)
    service, background = game_service(settings, adapters, obs)
    background.open_adapters = adapters.open
    store = service.store

    async def tune_process() -> None:
        tune_gc(settings.gc_threshold)  # last: what startup built is frozen too

    async def shut_down() -> None:
        await background.stop()
        # bounded: one shutdown in a full run never ended, waiting on an unknown step
        await finish_within(adapters.close(), "closing the adapters", CLOSE_SECONDS)
        obs.shutdown()

    middleware = [*rate_limiting(settings, adapters), strict_numbers]
    app = Litestar(
        route_handlers=[*routes(), *obs.route_handlers(store)],
        state=use_cases(service, adapters.archive, who, background),
        plugins=[ProblemDetailsPlugin(problem_details_config()), *obs.plugins()],
        before_send=obs.before_send(),
        logging_config=None,  # configure_logging above: JSON or text on stdout, request ids
        exception_handlers={Exception: internal_error_handler},
        middleware=middleware,
        cors_config=cors(settings),
        request_max_body_size=settings.max_body_bytes,
        openapi_config=openapi_config(),
        on_startup=[background.start, service.bots.warm, *([tune_process] if serving else [])],
        on_shutdown=[shut_down],
    )
    finish_openapi(app)
    allow_every_method(app)
    # around Litestar's router and exception handling: every response has a request id and
    # is counted, 404s and 429s included
    app.asgi_handler = RequestContext(
        app.asgi_handler, access_log=settings.access_log, http_metrics=obs.metrics
    )
    return app


app = create_app(serving=True)
