"""GET /v1/info: what a client needs to know before it calls: the version, how callers are
identified (open or verified, and by what), and the limits it must stay within."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Literal

import msgspec
from litestar import Request, get

from service.core.settings import Settings
from service.entrypoints.api.identity import Identity

API_VERSION = "1.0.0"
MAX_PLAYERS = 5
_OUT = {"frozen": True, "kw_only": True}


def _doc(text: str) -> msgspec.Meta:
    return msgspec.Meta(description=text)


class AuthInfo(msgspec.Struct, **_OUT):
    """How callers are identified. `open`: nothing is configured, anyone may call and a
    `player_id` is whatever the caller says (unverified, unranked). `verified`: creating a
    game needs the platform's API key (header `X-API-Key`) or a player JWT
    (`Authorization: Bearer <jwt>`, `sub` = player_id), and a `player_id` can be claimed only
    by its own JWT or by the platform. Seat tokens work in both modes."""

    mode: Literal["open", "verified"]
    api_keys: Annotated[bool, _doc("The platform's API key (`X-API-Key`) is accepted.")]
    jwt: Annotated[bool, _doc("Player JWTs (`Authorization: Bearer <jwt>`) are accepted.")]
    issuer: (
        Annotated[str, _doc("The `iss` a player JWT must carry (when `jwt`).")] | msgspec.UnsetType
    ) = msgspec.UNSET
    audience: (
        Annotated[str, _doc("The `aud` a player JWT must carry (when `jwt`).")] | msgspec.UnsetType
    ) = msgspec.UNSET


class RateLimit(msgspec.Struct, **_OUT):
    requests: int
    per: Literal["second", "minute", "hour", "day"]


class Limits(msgspec.Struct, **_OUT):
    max_body_bytes: Annotated[int, _doc("Larger request bodies are answered 413.")]
    max_players: Annotated[int, _doc("Seats of a game, at most.")]
    custom_deck: Annotated[bool, _doc("createGame accepts an explicit `deck`.")]
    rate_limit: Annotated[RateLimit | None, _doc("Requests per client; null: no limit.")]
    finished_ttl: Annotated[
        int, _doc("Seconds a finished game stays readable live (then archived).")
    ]
    idle_ttl: Annotated[int, _doc("Seconds an untouched live game is kept.")]


class InfoOut(msgspec.Struct, **_OUT):
    """The service and how to call it."""

    service: str
    version: Annotated[str, _doc("The service's release.")]
    api_version: Annotated[str, _doc("The version of the OpenAPI document.")]
    auth: AuthInfo
    limits: Limits


def _release() -> str:
    try:
        return version("ten-service")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def service_info(settings: Settings, identity: Identity) -> InfoOut:
    """Built once, when the app is."""
    rate = None
    if settings.http.rate_limit is not None:
        requests, per = settings.http.rate_limit
        rate = RateLimit(requests=requests, per=per)  # type: ignore[arg-type]
    return InfoOut(
        service="ten",
        version=_release(),
        api_version=API_VERSION,
        auth=msgspec.convert(identity.describe(), AuthInfo),
        limits=Limits(
            max_body_bytes=settings.http.max_body_bytes,
            max_players=MAX_PLAYERS,
            custom_deck=settings.games.allow_custom_deck,
            rate_limit=rate,
            finished_ttl=settings.games.finished_ttl,
            idle_ttl=settings.games.idle_ttl,
        ),
    )


@get(
    "/v1/info",
    operation_id="getInfo",
    summary="The service: version, identity mode, limits",
    description="Whether callers are verified (`auth.mode`: `open` on the embedded default, "
    "where identities are unverified; `verified` when API keys or a JWT key are configured), "
    "which credentials are accepted, the JWT issuer and audience, and the limits of requests.",
    tags=["service"],
)
async def info(request: Request) -> InfoOut:
    return request.app.state.info
