"""Finishing the generated OpenAPI document once, when the app is built.

Litestar builds the paths from the handlers; this edits the cached schema dict that
`/schema/openapi.json` serves (and `python -m service.openapi_export` commits):
- the component schemas are msgspec's own (`msgspec.json.schema_components`): the bodies are
  decoded by msgspec, so its schema is exactly what is accepted. Litestar's rendering loses
  constraints (`ge=0` vanishes, a variadic tuple becomes `oneOf [items, {}]`, i.e. anything);
- `createGame`'s cross-field rule (`starting_seat` names one of the `players`) as `if`/`then`;
- optional header and query parameters as plain strings/integers (no `oneOf [.., null]`:
  a header is absent or a string);
- every error status of every operation as application/problem+json (`Problem`);
- the headers and body that getGame and act read themselves (for speed) instead of taking as
  handler parameters, declared as Litestar would declare them;
- the bearer security scheme (seat tokens); `act`'s `Authorization` marked required (the
  handler takes it as optional only to answer 401 itself, not a generic 400);
- response `links` that chain createGame -> getGame -> act -> act ..., so a client (and the
  stateful contract test) can play a game by following them (`x-schemathesis.merge_body`
  tells Schemathesis to send a linked body as it is; other tools ignore `x-` keys);
- a `discriminator` on the `type` tag of the action and event unions.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin  # the plugin that serves /schema

from domain.model import Action
from service.api.history_routes import ArchivedGamesPage, LeaderboardOut, ReplayOut
from service.api.routes import (
    AUTHORIZATION_DESCRIPTION,
    IDEMPOTENCY_KEY_DESCRIPTION,
    IDEMPOTENCY_KEY_MAX,
    IF_MATCH_DESCRIPTION,
    IF_MATCH_PATTERN,
)
from service.api.schemas import (
    ActedOut,
    CreatedGameOut,
    CreateGameIn,
    EventsOut,
    GameOut,
    Health,
    Problem,
    RulesOut,
    ScoreIn,
    ScoreOut,
)
from service.archive import ArchivedGame, PlayerStats

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
)
REF = "#/components/schemas/{name}"


def _header(name: str, description: str, *, required: bool, **schema: Any) -> dict[str, Any]:
    """A header parameter as Litestar renders a declared one (the handlers that read their
    headers themselves, for speed, declare them here)."""
    return {
        "deprecated": False,
        "description": description,
        "in": "header",
        "name": name,
        "required": required,
        "schema": {"description": description, **schema, "type": "string"},
    }


def _act_headers() -> list[dict[str, Any]]:
    return [
        # required: the handler answers 401 without it (not a generic 400)
        _header("Authorization", AUTHORIZATION_DESCRIPTION, required=True),
        _header("If-Match", IF_MATCH_DESCRIPTION, required=False, pattern=IF_MATCH_PATTERN),
        _header(
            "Idempotency-Key",
            IDEMPOTENCY_KEY_DESCRIPTION,
            required=False,
            maxLength=IDEMPOTENCY_KEY_MAX,
            minLength=1,
        ),
    ]


def _action_body() -> dict[str, Any]:
    """act's body: one of the action Structs (the discriminator is added with the others')."""
    members = [{"$ref": REF.format(name=kind.__name__)} for kind in Action.__args__]
    return {"content": {"application/json": {"schema": {"oneOf": members}}}, "required": True}


MAX_PLAYERS = 5

COMMON_ERRORS = (400, 429, 500, 503)
ERRORS: dict[str, tuple[int, ...]] = {
    "createGame": (409, 413),
    "getGame": (401, 403, 404),
    "act": (401, 403, 404, 409, 412, 413),
    "listEvents": (404,),
    "streamEvents": (404,),
    "scoreCollection": (413,),
    "getRules": (),
    "health": (),
    "ready": (),
    "listArchivedGames": (),
    "getArchivedGame": (404,),
    "listArchivedEvents": (404,),
    "replayArchivedGame": (404,),
    "getPlayerStats": (),
    "getLeaderboard": (),
}
DESCRIPTIONS = {
    400: "Malformed request or values that fail the schema.",
    401: "No or bad credentials.",
    403: "Credentials that do not allow this (a token of another game).",
    404: "Unknown game.",
    409: "A well-formed action that the rules do not allow now, an `Idempotency-Key` reused "
    "with another body, or a game that changed too often to apply the action (see `code`).",
    412: "If-Match names a version that is not the current one.",
    413: "Request body too large.",
    429: "Rate-limited.",
    500: "Unexpected server error.",
    503: "The game store is unavailable; retry after `Retry-After` seconds.",
}
ETAG_HEADER = {
    "ETag": {"description": 'The game version, quoted: `"7"`.', "schema": {"type": "string"}}
}
# a link's body taken as it is (not merged field by field into a generated one)
WHOLE_BODY = {"x-schemathesis": {"merge_body": False}}
GAME_ID = {"game_id": "$response.body#/id"}
SEAT0_TOKEN = {"header.Authorization": "Bearer {$response.body#/seats/0/token}"}
SAME_TOKEN = {"header.Authorization": "{$request.header.Authorization}"}


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
    schema = app.plugins.get(OpenAPIPlugin).provide_openapi_schema()
    components = schema.setdefault("components", {})
    _, schemas = msgspec.json.schema_components(API_TYPES, ref_template=REF)
    components["schemas"] = schemas
    _constrain_starting_seat(schemas["CreateGameIn"])
    problem_ref = {"$ref": REF.format(name="Problem")}
    components.setdefault("securitySchemes", {})["seatToken"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "A seat token from createGame's `seats`: `Authorization: Bearer <token>`.",
    }
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            op_id = operation["operationId"]
            for parameter in operation.get("parameters", []):
                parameter["schema"] = _not_null(parameter["schema"])
            responses = operation.setdefault("responses", {})
            for status in (*COMMON_ERRORS, *ERRORS.get(op_id, ())):
                response: dict[str, Any] = {
                    "description": DESCRIPTIONS[status],
                    "content": {"application/problem+json": {"schema": problem_ref}},
                }
                if status == 503:
                    response["headers"] = {
                        "Retry-After": {"schema": {"type": "string"}, "description": "Seconds."}
                    }
                if status == 401:
                    response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
                responses[str(status)] = response
            if op_id in ("getGame", "act", "createGame"):
                ok = responses["201" if op_id == "createGame" else "200"]
                ok.setdefault("headers", {}).update(ETAG_HEADER)
            if op_id == "createGame":
                responses["201"].setdefault("headers", {})["Location"] = {
                    "description": "The new game's URL.",
                    "schema": {"type": "string"},
                }
                responses["201"]["links"] = _links_after_create()
            if op_id in ("getGame", "act"):
                responses["200"]["links"] = _links_after_read(op_id)
            if op_id == "act":  # the body and headers are read by the handler itself
                operation["requestBody"] = _action_body()
                operation["security"] = [{"seatToken": []}]
                operation.setdefault("parameters", []).extend(_act_headers())
            if op_id == "getGame":
                operation["security"] = [{}, {"seatToken": []}]
                # read by the handler from the request itself (`routes.header_value`)
                operation.setdefault("parameters", []).append(
                    _header("Authorization", AUTHORIZATION_DESCRIPTION, required=False)
                )
    _add_discriminators(schema)
    return schema


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


def _tag_of(target: dict[str, Any]) -> Any:
    prop = target.get("properties", {}).get("type", {})
    if "const" in prop:
        return prop["const"]
    enum = prop.get("enum")
    return enum[0] if isinstance(enum, list) and len(enum) == 1 else None


def _add_discriminators(schema: dict[str, Any]) -> None:
    """Every oneOf/anyOf whose members are all tagged Structs gets a discriminator on `type`."""
    schemas = schema["components"]["schemas"]

    def visit(node: Any) -> None:
        if isinstance(node, dict):
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
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(schema)
