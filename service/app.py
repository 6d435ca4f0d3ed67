"""The composition root: settings -> adapters -> use cases -> Litestar app.

`service.app:app` is the app for `uvicorn service.app:app` / `litestar --app service.app:app run`;
tests build their own with `create_app(settings, store=...)`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.datastructures import State
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.static_files import create_static_files_router

from service.api.history_routes import (
    ArchiveController,
    leaderboard,
    player_stats,
)
from service.api.openapi import finish_openapi, openapi_config
from service.api.problems import internal_error_handler, problem_details_config
from service.api.routes import GamesController, health, ready, rules, score
from service.archive import GameArchive
from service.archiver import Archiver
from service.games import GameService
from service.history import History
from service.observability.logs import RequestContext, configure_logging
from service.ports import ArchiveOutbox, GameStore, StoreUnavailable
from service.runtime import tune_gc
from service.settings import Settings

STATIC = Path(__file__).parent / "static"
UNARCHIVED_SWEEP_SECONDS = 30
log = logging.getLogger("ten")


def build_store(settings: Settings) -> GameStore:
    if settings.redis_url:
        from infra.redis_store import RedisGameStore  # noqa: PLC0415 - only when configured

        return RedisGameStore(settings.redis_url, cluster=settings.redis_cluster)
    from infra.memory_store import MemoryGameStore  # noqa: PLC0415

    return MemoryGameStore()


def build_archive(settings: Settings) -> GameArchive:
    from infra.archive import SqlArchive  # noqa: PLC0415 - SQLAlchemy only when built

    return SqlArchive.from_url(settings.database_url)


def build_outbox(store: GameStore) -> ArchiveOutbox:
    client = getattr(store, "client", None)
    if client is not None:
        from infra.outbox import RedisOutbox  # noqa: PLC0415

        return RedisOutbox(client)  # shared by every replica
    from infra.outbox import MemoryOutbox  # noqa: PLC0415

    return MemoryOutbox()


class Instruments:
    """Metrics and tracing as the settings ask, each off costing nothing per request."""

    def __init__(self, settings: Settings, store: GameStore, tracer_provider: Any) -> None:
        self.metrics = None
        self.tracing = None
        self.embedded = getattr(store, "client", None) is None
        if settings.metrics:
            from service.observability import metrics as m  # noqa: PLC0415 - only when on

            self._m = m
            self.metrics = m.metrics()
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
            system="memory" if self.embedded else "redis",
        )

    def outbox(self, outbox: ArchiveOutbox) -> ArchiveOutbox:
        return outbox if self.metrics is None else self._m.CountingOutbox(outbox)

    @property
    def service_class(self) -> type[GameService]:
        return GameService if self.metrics is None else self._m.MeteredGameService

    def route_handlers(self, store: GameStore) -> list:
        return [] if self.metrics is None else [self._m.metrics_route(store)]

    def plugins(self) -> list:
        plugins: list = []
        if self.metrics is not None:
            plugins.append(self._m.ProblemMetricsPlugin())  # after ProblemDetailsPlugin
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


def create_app(
    settings: Settings | None = None,
    store: GameStore | None = None,
    archive: GameArchive | None = None,
    *,
    tracer_provider: Any = None,
    serving: bool = False,
) -> Litestar:
    """The app; `tracer_provider` (OpenTelemetry) replaces the OTLP exporter when tracing is on.

    `serving`: the app is the process's one app (`service.app:app`), so once it has started it
    also tunes the process's garbage collector (`service.runtime.tune_gc`); apps built by tests
    leave their process alone.
    """
    settings = settings or Settings.from_env()
    # before uvicorn logs that the server started: every line in the configured format
    configure_logging(settings.log_format, settings.log_level, settings.access_log)
    store = store if store is not None else build_store(settings)
    archive = archive if archive is not None else build_archive(settings)
    outbox = build_outbox(store)
    obs = Instruments(settings, store, tracer_provider)
    store, outbox = obs.store(store), obs.outbox(outbox)
    archiver = Archiver(outbox, archive, interval=settings.archive_interval)

    def wake_archiver() -> None:
        archiver.wake.set()

    service = obs.service_class(store, settings, outbox=outbox, on_finished=wake_archiver)
    history = History(archive)
    background: list[asyncio.Task] = []

    async def start_archiver() -> None:
        if settings.run_migrations:
            from infra.archive.migrate import upgrade_async  # noqa: PLC0415

            await upgrade_async(settings.database_url)
        background.append(asyncio.create_task(archiver.run_forever(), name="ten-archiver"))
        background.append(asyncio.create_task(hand_over_forever(), name="ten-unarchived"))
        if obs.metrics is not None:
            flusher = obs.metrics.flush_forever()
            background.append(asyncio.create_task(flusher, name="ten-metrics"))

    async def hand_over_forever() -> None:
        """Finished games a process left without handing them to the archive (it died just
        after the final save, or the outbox failed): looked for every half minute."""
        while True:
            await asyncio.sleep(UNARCHIVED_SWEEP_SECONDS)
            try:
                found = await service.hand_over_unarchived()
            except (StoreUnavailable, OSError) as exc:
                log.warning("looking for unarchived games failed (%s)", exc)
                continue
            except Exception:
                log.exception("looking for unarchived games failed")
                continue
            if found:
                log.warning("%d finished game(s) handed to the archive late", found)

    async def tune_process() -> None:
        tune_gc(settings.gc_threshold)  # last: what startup built is frozen too

    async def close_store() -> None:
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await store.close()
        await archive.close()
        obs.shutdown()

    middleware = []
    stores = {}
    if settings.rate_limit is not None:
        client = getattr(store, "client", None)
        if client is not None:
            # one count per client shared by every replica, on a Redis or a Redis Cluster
            from infra.rate_limit_store import RateLimitStore  # noqa: PLC0415 - only with Redis

            stores["rate_limit"] = RateLimitStore(client, namespace="ten-rate")
        limit, unit = settings.rate_limit
        middleware.append(
            RateLimitConfig(
                rate_limit=(unit, limit),  # type: ignore[arg-type]
                exclude=["/health", "/ready", "/schema", "/static", "/metrics"],
            ).middleware
        )

    app = Litestar(
        route_handlers=[
            GamesController,
            ArchiveController,
            player_stats,
            leaderboard,
            score,
            rules,
            health,
            ready,
            *obs.route_handlers(store),
            create_static_files_router(
                path="/static", directories=[STATIC], include_in_schema=False
            ),
        ],
        state=State(
            {"service": service, "settings": settings, "archive": archive, "history": history}
        ),
        plugins=[ProblemDetailsPlugin(problem_details_config()), *obs.plugins()],
        before_send=obs.before_send(),
        logging_config=None,  # configure_logging above: JSON or text on stdout, request ids
        exception_handlers={Exception: internal_error_handler},
        middleware=middleware,
        stores=stores,
        request_max_body_size=settings.max_body_bytes,
        openapi_config=openapi_config(),
        on_startup=[start_archiver, *([tune_process] if serving else [])],
        on_shutdown=[close_store],
    )
    finish_openapi(app)
    # around Litestar's router and exception handling: every response has a request id and
    # is counted, 404s and 429s included
    app.asgi_handler = RequestContext(
        app.asgi_handler,
        access_log=settings.access_log,
        http_metrics=obs.metrics,
    )
    return app


app = create_app(serving=True)
