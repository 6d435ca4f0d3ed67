"""The OpenAPI document's configuration: its metadata and description, the security schemes
of the three credentials (seat token, platform API key, player JWT), and the docs page,
whose assets the service serves itself so that it works offline."""

from __future__ import annotations

from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

from service.entrypoints.api.identity import API_KEY_HEADER, PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.info_routes import API_VERSION
from service.entrypoints.api.parameters import SEAT_TOKEN


def openapi_config() -> OpenAPIConfig:
    """The document's metadata, the security schemes (seat token, platform API key, player
    JWT), and the docs page (its assets served by the service itself, so it works offline)."""
    return OpenAPIConfig(
        title="TEN game service",
        version=API_VERSION,
        description="Play TEN, the push-your-luck auction card game, over HTTP.\n\n"
        "Errors are problem details (RFC 9457) whose `title` and `detail` follow the request's "
        "`Accept-Language` (RFC 9110 q-values; `es-MX` is `es`): English `en` (also the default "
        "for any other or unreadable header), Indonesian `id`, Armenian `hy`, Spanish `es`, "
        "Gujarati `gu`, in the rulebook's terms. `Content-Language` names the language used "
        "(with `Vary: Accept-Language`); `code`, `type`, `status` and `errors` are the same in "
        "every language, so a client keys on `code`.",
        path="/schema",
        components=Components(
            security_schemes={
                SEAT_TOKEN: SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="A seat token from createGame's `seats`: "
                    "`Authorization: Bearer <token>`.",
                ),
                PLATFORM_KEY: SecurityScheme(
                    type="apiKey",
                    name=API_KEY_HEADER,
                    security_scheme_in="header",
                    description="The platform's API key (one of `TEN_API_KEYS`), server to "
                    "server: it may create games, seat any `player_id` and manage any table. "
                    "Not with a player JWT in the same request (400 conflicting_credentials).",
                ),
                PLAYER_TOKEN: SecurityScheme(
                    type="http",
                    scheme="bearer",
                    bearer_format="JWT",
                    description="A player JWT signed by the platform: `Authorization: Bearer "
                    "<jwt>`; its `sub` is the player's `player_id`. The issuer and audience "
                    "are checked (see getInfo's `auth`), `exp` is required.",
                ),
            }
        ),
        render_plugins=[
            SwaggerRenderPlugin(
                js_url="/static/swagger-ui/swagger-ui-bundle.js",
                css_url="/static/swagger-ui/swagger-ui.css",
                standalone_preset_js_url="/static/swagger-ui/swagger-ui-standalone-preset.js",
                favicon="",
            )
        ],
    )
