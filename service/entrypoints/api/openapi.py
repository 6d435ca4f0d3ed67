"""The OpenAPI document: its configuration, and its finishing once the app is built.

The handlers declare their parameters, bodies, error statuses (`problems.problems`),
response headers and security; Litestar builds the document from them. What cannot be
declared is done here, on the generated document that `/schema/openapi.json` serves (and
`python -m service.entrypoints.openapi_export` commits):
- the component schemas are msgspec's own (`msgspec.json.schema_components`): the bodies are
  decoded by msgspec, so its schema is exactly what is accepted. Litestar's rendering loses
  constraints (`ge=0` vanishes, a variadic tuple becomes `oneOf [items, {}]`, i.e. anything);
- no description for `PublicView` (the domain's docstring is about building it);
- `createGame`'s cross-field rule (`starting_seat` names one of the `players`) as `if`/`then`;
- optional header and query parameters as plain strings/integers (no `oneOf [.., null]`:
  a header is absent or a string);
- the error statuses every operation may answer (`problems.COMMON_STATUSES`: Litestar 2 has
  no layer-wide `responses`), and the headers of problem responses (`ResponseSpec` has
  none): `WWW-Authenticate` on 401, `Retry-After` on 503;
- response `links` that chain createGame -> getGame -> act -> act ..., so a client (and the
  stateful contract test) can play a game by following them (`x-schemathesis.merge_body`
  tells Schemathesis to send a linked body as it is; other tools ignore `x-` keys);
- a `discriminator` on the `type` tag of the action and event unions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from litestar import Litestar
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

from domain.game.cards import COPIES
from domain.game.model import Action
from service.entrypoints.api.history_routes import (
    ArchivedGamesPage,
    LeaderboardOut,
    RatingHistoryOut,
    ReplayOut,
)
from service.entrypoints.api.identity import API_KEY_HEADER, PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.info_routes import API_VERSION, MAX_PLAYERS, InfoOut
from service.entrypoints.api.odds_routes import OddsOut
from service.entrypoints.api.problems import COMMON_STATUSES, DESCRIPTIONS, PROBLEM_JSON
from service.entrypoints.api.routes import SEAT_TOKEN
from service.entrypoints.api.schemas import (
    ActedOut,
    CreatedGameOut,
    CreatedTableOut,
    CreateGameIn,
    EventsOut,
    GameOut,
    GamesPage,
    Health,
    JoinedOut,
    JoinIn,
    NextTableOut,
    Problem,
    RegistrationIn,
    ReviewPending,
    RoundsOut,
    RulesOut,
    ScoreIn,
    ScoreOut,
    SeatToken,
    StandingsOut,
    TableOut,
    TournamentIn,
    TournamentOut,
    TournamentsPage,
)
from service.history.archive import ArchivedGame, PlayerStats
from service.history.reads import TableForecast
from service.history.reviews import ReviewOut
from service.reactions.webhook_payloads import WEBHOOK_PAYLOADS

# every type a handler decodes or encodes: their components replace Litestar's
API_TYPES = (
    CreateGameIn,
    ScoreIn,
    Action,
    GameOut,
    CreatedGameOut,
    ActedOut,
    EventsOut,
    ScoreOut,
    RulesOut,
    Health,
    Problem,
    ArchivedGamesPage,
    ArchivedGame,
    ReplayOut,
    PlayerStats,
    LeaderboardOut,
    RatingHistoryOut,
    TableForecast,
    OddsOut,
    InfoOut,
    CreatedTableOut,
    TableOut,
    JoinIn,
    JoinedOut,
    GamesPage,
    SeatToken,
    ReviewOut,
    ReviewPending,
    TournamentIn,
    RegistrationIn,
    TournamentOut,
    TournamentsPage,
    StandingsOut,
    RoundsOut,
    NextTableOut,
    *WEBHOOK_PAYLOADS.values(),
)
REF = "#/components/schemas/{name}"
# the headers of every webhook delivery (Standard Webhooks)
WEBHOOK_HEADERS = {
    "webhook-id": "The message's id: the same on every delivery of one message (de-duplicate on it).",
    "webhook-timestamp": "When this delivery was signed (unix seconds): refuse old ones (replays).",
    "webhook-signature": "`v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>` with TEN_WEBHOOK_SECRET.",
}
PROBLEM_HEADERS = {
    "401": {"WWW-Authenticate": {"schema": {"type": "string"}}},
    "503": {"Retry-After": {"schema": {"type": "string"}, "description": "Seconds."}},
}
REVIEW_FAILED = (
    f"{DESCRIPTIONS[500]} `review_failed`: the review could not be computed and was set "
    "aside for the operators; no `Retry-After`, stop asking (it stays so until requeued)."
)
RETRY_AFTER_HEADER = {
    "required": True,
    "schema": {"type": "string"},
    "description": "Seconds to wait before asking again.",
}
# a link's body taken as it is (not merged field by field into a generated one)
WHOLE_BODY = {"x-schemathesis": {"merge_body": False}}
GAME_ID = {"game_id": "$response.body#/id"}
SEAT0_TOKEN = {"header.Authorization": "Bearer {$response.body#/seats/0/token}"}
SAME_TOKEN = {"header.Authorization": "{$request.header.Authorization}"}
# operations whose caller (service.entrypoints.api.auth, from `Authorization`) decides what they answer:
# documented here as a header parameter too (besides the security schemes), so that links can
# pass a seat token on (`$request.header.Authorization`); True where it is required
READS_AUTHORIZATION = {"getGame": False, "act": True}
AUTHORIZATION_DESCRIPTION = (
    "`Bearer <seat token>` (as createGame or joinGame returned it) or `Bearer <player JWT>`."
)
JOINED_TOKEN = {"header.Authorization": "Bearer {$response.body#/token}"}


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


def served_document(app: Litestar) -> dict[str, Any]:
    """The document as `/schema/openapi.json` serves it (built on first use, then cached).

    Litestar's OpenAPI plugin has no public import (it lives in `litestar._openapi`), so it
    is found by name in the app's plugins."""
    return app.plugins.get("OpenAPIPlugin").provide_openapi_schema()


def _links_after_create() -> dict[str, Any]:
    return {
        "GetGame": {
            "operationId": "getGame",
            "parameters": GAME_ID,
            "description": "The game as everyone sees it.",
        },
        "GetGameAsSeat": {
            "operationId": "getGame",
            "parameters": {**GAME_ID, **SEAT0_TOKEN},
            "description": "The game with the legal actions of the first human seat.",
        },
        "Act": {
            "operationId": "act",
            "parameters": {**GAME_ID, **SEAT0_TOKEN},
            "requestBody": {"type": "draw"},
            "description": "Draw (every turn starts with a draw) as the first human seat, with "
            "its token from `seats`.",
            **WHOLE_BODY,
        },
        "ListEvents": {
            "operationId": "listEvents",
            "parameters": GAME_ID,
            "description": "The game's event log.",
        },
    }


REQUEST_EXAMPLES: dict[str, dict[str, Any]] = {
    "createGame": {
        "game": {
            "summary": "A game dealt at once: a human and a bot",
            "value": {"players": [{"name": "Ann"}, {"name": "Bo", "bot": "basic"}]},
        },
    },
    "joinGame": {
        "open": {"summary": "Take the first open seat", "value": {"name": "Bob"}},
        "invited": {
            "summary": "Join a private table",
            "value": {"name": "Cy", "invite": "the invite_code from createGame"},
        },
    },
}


def _links_of_the_lobby() -> dict[str, Any]:
    """createGame -> joinGame (an open table) -> getGame / leaveGame / act with the seat's
    token; the host starts it (startGame) with its host token."""
    return {
        "JoinTable": {
            "operationId": "joinGame",
            "parameters": GAME_ID,
            "description": "Take a seat at the table just created (status `open`).",
        },
        "StartTable": {
            "operationId": "startGame",
            "parameters": {
                **GAME_ID,
                "header.Authorization": "Bearer {$response.body#/host_token}",
            },
            "description": "Start it now as its (anonymous) host: empty seats become bots.",
        },
    }


def _links_after_join() -> dict[str, Any]:
    game_id = {"game_id": "$request.path.game_id"}
    return {
        "GetGameAsSeat": {
            "operationId": "getGame",
            "parameters": {**game_id, **JOINED_TOKEN},
            "description": "The table (or the game it started) with this seat's token.",
        },
        "LeaveTable": {
            "operationId": "leaveGame",
            "parameters": {**game_id, "seat": "$response.body#/seat", **JOINED_TOKEN},
            "description": "Give the seat back before the start.",
        },
        "ReissueToken": {
            "operationId": "reissueSeatToken",
            "parameters": {**game_id, "seat": "$response.body#/seat", **JOINED_TOKEN},
            "description": "A fresh token for this seat (the one just issued stops working).",
        },
    }


def _links_after_read(op_id: str) -> dict[str, Any]:
    """From a game read with a seat token (getGame, act): play on with that token."""
    return {
        "PlayLegalAction": {
            "operationId": "act",
            "parameters": {**GAME_ID, **SAME_TOKEN, "header.If-Match": "$response.header.ETag"},
            "requestBody": "$response.body#/legal_actions/0",
            "description": "Post the first of the seat's legal actions, on the version just read.",
            **WHOLE_BODY,
        },
        **(
            {
                "GetGame": {
                    "operationId": "getGame",
                    "parameters": {**GAME_ID, **SAME_TOKEN},
                    "description": "The game after this action.",
                },
                "ListEvents": {
                    "operationId": "listEvents",
                    "parameters": GAME_ID,
                    "description": "The game's event log.",
                },
            }
            if op_id == "act"
            else {}
        ),
    }


def finish_openapi(app: Litestar) -> dict[str, Any]:
    schema = served_document(app)
    components = schema.setdefault("components", {})
    _, schemas = msgspec.json.schema_components(API_TYPES, ref_template=REF)
    components["schemas"] = schemas
    # its docstring tells how the engine builds it, nothing a client needs
    schemas["PublicView"].pop("description", None)
    _constrain_starting_seat(schemas["CreateGameIn"])
    _constrain_seats(schemas["PlayerIn"])
    _limit_copies(schemas)
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            op_id = operation["operationId"]
            if op_id in READS_AUTHORIZATION:
                operation.setdefault("parameters", []).append(
                    {
                        "name": "Authorization",
                        "in": "header",
                        "required": READS_AUTHORIZATION[op_id],
                        "description": AUTHORIZATION_DESCRIPTION,
                        "schema": {"type": "string", "description": AUTHORIZATION_DESCRIPTION},
                    }
                )
            for parameter in operation.get("parameters", []):
                parameter["schema"] = _not_null(parameter["schema"])
            responses = operation.setdefault("responses", {})
            for status in COMMON_STATUSES:  # replacing Litestar's own 400 (its error shape)
                responses[str(status)] = _problem_response(status)
            for status, headers in PROBLEM_HEADERS.items():
                if status in responses:
                    responses[status]["headers"] = headers
            if op_id in REQUEST_EXAMPLES:
                content = operation["requestBody"]["content"]["application/json"]
                content["examples"] = REQUEST_EXAMPLES[op_id]
            if op_id == "createGame":
                responses["201"]["links"] = {**_links_after_create(), **_links_of_the_lobby()}
            if op_id == "getGameReview":  # Litestar documents headers on the 200 only
                responses["202"]["headers"] = {"Retry-After": RETRY_AFTER_HEADER}
                responses["500"]["description"] = REVIEW_FAILED
            if op_id == "joinGame":
                responses["201"]["links"] = _links_after_join()
            if op_id in ("getGame", "act"):
                responses["200"]["links"] = _links_after_read(op_id)
    schema["webhooks"] = _webhooks()
    _add_discriminators(schema)
    _published_names(schema)
    return schema


# The component names of the types whose class name another API type shares: msgspec names
# them by their module's path, and the contract keeps the names they were published under,
# wherever the code that holds them moves.
PUBLISHED_NAMES = {
    "service.history.archive.ColorScore": "service.archive.ColorScore",
    "domain.game.scoring.ColorScore": "domain.scoring.ColorScore",
}


def _published_names(schema: dict[str, Any]) -> None:
    schemas = schema["components"]["schemas"]
    refs = {REF.format(name=old): REF.format(name=new) for old, new in PUBLISHED_NAMES.items()}
    for old, new in PUBLISHED_NAMES.items():
        if old in schemas:
            schemas[new] = schemas.pop(old)

    def rename(node: dict[str, Any]) -> None:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in refs:
            node["$ref"] = refs[ref]

    _each_object(schema, rename)


def _webhooks() -> dict[str, Any]:
    """OpenAPI 3.1 `webhooks`: what the service POSTs to the platform's TEN_WEBHOOK_URLS."""
    found = {}
    headers = [
        {"name": header, "in": "header", "required": True, "description": text,
         "schema": {"type": "string"}}
        for header, text in WEBHOOK_HEADERS.items()
    ]  # fmt: skip
    for name, kind in WEBHOOK_PAYLOADS.items():
        found[name] = {
            "post": {
                "operationId": f"webhook_{name}",
                "summary": (kind.__doc__ or name).splitlines()[0],
                "description": "Signed per Standard Webhooks; delivered at least once (retried "
                "with exponential backoff until a 2xx answer).",
                "parameters": headers,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": REF.format(name=kind.__name__)}}
                    },
                },
                "responses": {
                    "2XX": {"description": "Received: this message is not sent again."},
                    "default": {"description": "Not received: sent again later."},
                },
            }
        }
    return found


def _problem_response(status: int) -> dict[str, Any]:
    """A problem response as Litestar renders a `problems.problems` one."""
    return {
        "description": DESCRIPTIONS[status],
        "content": {PROBLEM_JSON: {"schema": {"$ref": REF.format(name="Problem")}}},
    }


def _not_null(node: dict[str, Any]) -> dict[str, Any]:
    """`{"oneOf": [X, {"type": "null"}], ...}` (Litestar's optional parameter) -> `{...X, ...}`."""
    members = node.get("oneOf")
    if not isinstance(members, list):
        return node
    kept = [m for m in members if m != {"type": "null"}]
    if len(kept) != 1 or len(kept) == len(members):
        return node
    rest = {k: v for k, v in node.items() if k != "oneOf"}
    return {**kept[0], **rest}


def _constrain_starting_seat(create: dict[str, Any]) -> None:
    """`starting_seat` must name a seat: `starting_seat >= k` needs at least k + 1 players."""
    create["allOf"] = [
        {
            "if": {
                "properties": {"starting_seat": {"type": "integer", "minimum": k}},
                "required": ["starting_seat"],
            },
            "then": {"properties": {"players": {"minItems": k + 1}}},
        }
        for k in range(1, MAX_PLAYERS)
    ]
    create["description"] = (
        "A new game. `starting_seat`, when given, must be one of the seats (below the number of "
        "`players`); without it the service draws the starting seat."
    )


def _constrain_seats(seat: dict[str, Any]) -> None:
    """A seat says what it is: a name (a human seated now), a bot, a player_id (reserved) or
    `open: true` (`invalid_table` otherwise)."""
    seat["anyOf"] = [
        {"required": ["name"], "properties": {"name": {"type": "string"}}},
        {"required": ["bot"], "properties": {"bot": {"type": "string"}}},
        {"required": ["player_id"], "properties": {"player_id": {"type": "string"}}},
        {"required": ["open"], "properties": {"open": {"const": True}}},
    ]


def _limit_copies(schemas: dict[str, Any]) -> None:
    """A deck or a scored collection holds a card at most as many times as the 129-card game
    has it (`too_many_copies` otherwise): one `contains` + `maxContains` per card code on
    createGame's `deck` and scoreCollection's `cards`, so that a schema-valid list is
    accepted."""
    limits = [
        {"contains": {"const": code}, "minContains": 0, "maxContains": copies}
        for code, copies in COPIES.items()
    ]
    deck = schemas["CreateGameIn"]["properties"]["deck"]
    arrays = [m for m in deck.get("anyOf", [deck]) if m.get("type") == "array"]
    for array in [*arrays, schemas["ScoreIn"]["properties"]["cards"]]:
        array["allOf"] = list(limits)


def _tag_of(target: dict[str, Any]) -> Any:
    prop = target.get("properties", {}).get("type", {})
    if "const" in prop:
        return prop["const"]
    enum = prop.get("enum")
    return enum[0] if isinstance(enum, list) and len(enum) == 1 else None


def _add_discriminators(schema: dict[str, Any]) -> None:
    """Every oneOf/anyOf whose members are all tagged Structs gets a discriminator on `type`."""
    schemas = schema["components"]["schemas"]

    def discriminate(node: dict[str, Any]) -> None:
        for keyword in ("oneOf", "anyOf"):
            members = node.get(keyword)
            if not isinstance(members, list) or not members or "discriminator" in node:
                continue
            mapping = {}
            for member in members:
                ref = member.get("$ref", "") if isinstance(member, dict) else ""
                tag = _tag_of(schemas.get(ref.rsplit("/", 1)[-1], {})) if ref else None
                if tag is None:
                    mapping = {}
                    break
                mapping[tag] = ref
            if mapping:
                node["discriminator"] = {"propertyName": "type", "mapping": mapping}

    _each_object(schema, discriminate)


def _each_object(node: Any, change: Callable[[dict[str, Any]], None]) -> None:
    """`change` applied to every JSON object of a document, the outer ones first."""
    if isinstance(node, dict):
        change(node)
        for value in node.values():
            _each_object(value, change)
    elif isinstance(node, list):
        for value in node:
            _each_object(value, change)
