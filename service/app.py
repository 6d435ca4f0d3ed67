"""The composition root: settings -> adapters -> use cases -> Litestar app.

`service.app:app` is the app for `uvicorn service.app:app` / `litestar --app service.app:app run`;
tests build their own with `create_app(settings, store=...)`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.static_files import create_static_files_router

from service.api.openapi import finish_openapi
from service.api.problems import internal_error_handler, problem_details_config
from service.api.routes import GamesController, health, provide_service, ready, rules, score
from service.games import GameService
from service.ports import GameStore
from service.settings import Settings

STATIC = Path(__file__).parent / "static"
API_VERSION = "1.0.0"
log = logging.getLogger("ten")


def build_store(settings: Settings) -> GameStore:
    if settings.redis_url:
        from infra.redis_store import RedisGameStore  # noqa: PLC0415 - only when configured

        return RedisGameStore(settings.redis_url, cluster=settings.redis_cluster)
    from infra.memory_store import MemoryGameStore  # noqa: PLC0415

    return MemoryGameStore()


def create_app(settings: Settings | None = None, store: GameStore | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    store = store if store is not None else build_store(settings)
    service = GameService(store, settings)

    async def close_store() -> None:
        await store.close()

    middleware = []
    stores = {}
    if settings.rate_limit is not None:
        client = getattr(store, "client", None)
        if client is not None and not settings.redis_cluster:
            # one count per client shared by every replica (Litestar's store is typed for Redis,
            # not RedisCluster: on a cluster each replica counts alone)
            from litestar.stores.redis import RedisStore  # noqa: PLC0415 - only with Redis

            stores["rate_limit"] = RedisStore(client, namespace="ten-rate")
        limit, unit = settings.rate_limit
        middleware.append(
            RateLimitConfig(
                rate_limit=(unit, limit),  # type: ignore[arg-type]
                exclude=["/health", "/ready", "/schema", "/static"],
            ).middleware
        )

    app = Litestar(
        route_handlers=[
            GamesController,
            score,
            rules,
            health,
            ready,
            create_static_files_router(
                path="/static", directories=[STATIC], include_in_schema=False
            ),
        ],
        dependencies={"service": Provide(provide_service)},
        state=State({"service": service, "settings": settings}),
        plugins=[ProblemDetailsPlugin(problem_details_config())],
        exception_handlers={Exception: internal_error_handler},
        middleware=middleware,
        stores=stores,
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="TEN game service",
            version=API_VERSION,
            description="Play TEN, the push-your-luck auction card game, over HTTP.",
            path="/schema",
            render_plugins=[
                SwaggerRenderPlugin(
                    js_url="/static/swagger-ui/swagger-ui-bundle.js",
                    css_url="/static/swagger-ui/swagger-ui.css",
                    standalone_preset_js_url="/static/swagger-ui/swagger-ui-standalone-preset.js",
                    favicon="",
                )
            ],
        ),
        on_shutdown=[close_store],
    )
    finish_openapi(app)
    return app


app = create_app()
