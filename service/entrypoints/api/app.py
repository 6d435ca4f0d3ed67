"""The HTTP app: the routes, the middleware (rate limit, strict numbers), CORS, problem
details, OpenAPI, and the use cases of the composition root (`service.bootstrap`) in its
state. `service.app:app` is the app the server runs; tests build their own with
`create_app(settings, store=...)`.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.static_files import create_static_files_router

from infra.observability.logs import RequestContext, configure_logging
from infra.runtime import refuse_several_embedded_workers, tune_gc

# what a browser client may send and read across origins (TEN_CORS_ORIGINS)
from service.bootstrap import (
    Adapters,
    Background,
    Instruments,
    build_adapters,
    close_all,
    game_service,
    refuse_jobs_nobody_works,
)
from service.core.ports import GameStore
from service.core.settings import Settings
from service.entrypoints.api.bulk_routes import BULK_ROUTES
from service.entrypoints.api.health_routes import health, ready
from service.entrypoints.api.history_routes import (
    ArchiveController,
    leaderboard,
    player_stats,
    predict_table,
    rating_history,
)
from service.entrypoints.api.identity import Identity
from service.entrypoints.api.info_routes import info, service_info
from service.entrypoints.api.lobby_routes import LobbyController
from service.entrypoints.api.matchmaking_routes import MATCHMAKING_ROUTES
from service.entrypoints.api.numbers import strict_numbers
from service.entrypoints.api.odds_routes import odds
from service.entrypoints.api.openapi import finish_openapi
from service.entrypoints.api.openapi_config import openapi_config
from service.entrypoints.api.player_routes import PLAYER_ROUTES
from service.entrypoints.api.privacy_routes import PRIVACY_ROUTES
from service.entrypoints.api.problems import internal_error_handler, problem_details_config
from service.entrypoints.api.push_routes import PUSH_ROUTES
from service.entrypoints.api.rate_limit import EXEMPT, AtomicRateLimitConfig
from service.entrypoints.api.record_routes import RECORD_ROUTES
from service.entrypoints.api.routes import GamesController, allow_every_method
from service.entrypoints.api.rules_routes import rules, score
from service.entrypoints.api.static_files import LocalFiles
from service.entrypoints.api.tournament_routes import TOURNAMENT_ROUTES
from service.entrypoints.api.web_routes import REVALIDATE, STATIC, web_client
from service.games.use_cases import GameService
from service.history.archive import GameArchive
from service.history.reads import History
from service.lobby.use_cases import Lobby
from service.tournaments.feeds import TournamentFeeds

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


def _not_a_preflight(request: Request) -> bool:
    return request.method != "OPTIONS"


def rate_limiting(settings: Settings, adapters: Adapters) -> list:
    """The rate-limit middleware as `TEN_RATE_LIMIT` asks (none unset), counting on the
    adapters' counter (Redis: shared by every replica; embedded: this process)."""
    if settings.http.rate_limit is None:
        return []
    limit, unit = settings.http.rate_limit
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
    if not settings.http.cors_origins:
        return None
    return CORSConfig(
        allow_origins=list(settings.http.cors_origins),
        allow_methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=CORS_REQUEST_HEADERS,
        expose_headers=CORS_RESPONSE_HEADERS,
        allow_credentials=False,
        max_age=600,
    )


def identity_state(settings: Settings) -> dict[str, Any]:
    """Who is calling (`service.entrypoints.api.auth.authenticated` asks `identity`) and what
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
        *RECORD_ROUTES,
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
        *PUSH_ROUTES,
        *PLAYER_ROUTES,
        *PRIVACY_ROUTES,
        web_client,
        create_static_files_router(
            path="/static",
            directories=[STATIC],
            file_system=LocalFiles(),  # a path no file can have is a 404, not a 500
            include_in_schema=False,
            cache_control=REVALIDATE,
        ),
        *MATCHMAKING_ROUTES,
        *BULK_ROUTES,
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
    history = History(archive)
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
            "matchmaking": background.matchmaking,
            "ticket_feeds": TournamentFeeds(background.matchmaking.load)
            if background.matchmaking is not None
            else None,
            **correspondence_state(background, who),
            "bulk": background.bulk.served(identities_open=who["identity"].open),
            **who,
        }
    )


def correspondence_state(background: Background, who: dict[str, Any]) -> dict[str, Any]:
    """Correspondence's use cases (push subscriptions, vacations), told who may name whom,
    and the service's Web Push key."""
    corr = background.correspondence
    if corr is None:
        return {}
    corr.use_cases.identities_open = who["identity"].open
    return {"correspondence": corr.use_cases, "push_key": corr.sender.public_key}


def privacy(background: Background, state: State) -> None:
    """A player's export and erasure in the app state (`player_data`), told who may name
    whom."""
    data = state["player_data"] = background.privacy
    if data is not None:
        data.identities_open = state["identity"].open


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
    process's garbage collector (`infra.runtime.tune_gc`); apps built by tests leave their
    process alone.
    """
    settings = settings or Settings.from_env()
    if serving:
        refuse_several_embedded_workers(settings.redis.url)
    refuse_jobs_nobody_works(settings, serving=serving)
    # before uvicorn logs that the server started: every line in the configured format
    logs = settings.observability
    configure_logging(logs.log_format, logs.log_level, logs.access_log)
    who = identity_state(settings)  # before any adapter: a bad key fails first
    adapters = build_adapters(settings, store, archive)
    obs = Instruments(settings, adapters.store_system, tracer_provider)
    service, background = game_service(settings, adapters, obs)
    background.open_adapters = adapters.open
    store = service.store

    async def tune_process() -> None:
        tune_gc(settings.runtime.gc_threshold)  # last: what startup built is frozen too

    async def shut_down() -> None:
        await close_all(background, adapters, obs)

    middleware = [*rate_limiting(settings, adapters), strict_numbers]
    state = use_cases(service, adapters.archive, who, background)
    privacy(background, state)
    app = Litestar(
        route_handlers=[*routes(), *obs.route_handlers(store)],
        state=state,
        plugins=[ProblemDetailsPlugin(problem_details_config()), *obs.plugins()],
        before_send=obs.before_send(),
        logging_config=None,  # configure_logging above: JSON or text on stdout, request ids
        exception_handlers={Exception: internal_error_handler},
        middleware=middleware,
        cors_config=cors(settings),
        request_max_body_size=settings.http.max_body_bytes,
        openapi_config=openapi_config(),
        on_startup=[background.start, service.bots.warm, *([tune_process] if serving else [])],
        on_shutdown=[shut_down],
    )
    finish_openapi(app)
    allow_every_method(app)
    # around Litestar's router and exception handling: every response has a request id and
    # is counted, 404s and 429s included
    app.asgi_handler = RequestContext(
        app.asgi_handler, access_log=settings.observability.access_log, http_metrics=obs.metrics
    )
    return app
