"""Finishing the generated OpenAPI document once, when the app is built.

Litestar documents errors with its own JSON shape and cannot express links or
discriminators from handler arguments; this adds them to the cached schema dict that
`/schema/openapi.json` serves:
- every error status of every operation as application/problem+json (`Problem`);
- the bearer security scheme (seat tokens);
- response `links` from createGame to getGame, act and listEvents;
- a `discriminator` on the `type` tag of the action and event unions.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin  # the plugin that serves /schema

from service.api.schemas import Problem

COMMON_ERRORS = (400, 429, 500, 503)
ERRORS: dict[str, tuple[int, ...]] = {
    "createGame": (413,),
    "getGame": (401, 403, 404),
    "act": (401, 403, 404, 409, 412, 413),
    "listEvents": (404,),
    "streamEvents": (404,),
    "scoreCollection": (413,),
    "getRules": (),
    "health": (),
    "ready": (),
}
DESCRIPTIONS = {
    400: "Malformed request or values that fail the schema.",
    401: "No or bad credentials.",
    403: "Credentials that do not allow this (a token of another game).",
    404: "Unknown game.",
    409: "A well-formed action that the rules do not allow now (see `code`).",
    412: "If-Match names a version that is not the current one.",
    413: "Request body too large.",
    429: "Rate-limited.",
    500: "Unexpected server error.",
    503: "The game store is unavailable; retry after `Retry-After` seconds.",
}
ETAG_HEADER = {
    "ETag": {"description": 'The game version, quoted: `"7"`.', "schema": {"type": "string"}}
}
# request bodies decoded with forbid_unknown_fields: unknown fields are a 400
CLOSED_OBJECTS = (
    "CreateGameIn",
    "PlayerIn",
    "Rules",
    "ScoreIn",
    "Payment",
    "TokenPayment",
    "Draw",
    "Stop",
    "Bid",
    "Pass",
    "Buy",
    "Decline",
)
LINK_GAME_ID = {"game_id": "$response.body#/id"}


def finish_openapi(app: Litestar) -> dict[str, Any]:
    schema = app.plugins.get(OpenAPIPlugin).provide_openapi_schema()
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    _, defs = msgspec.json.schema_components([Problem], ref_template="#/components/schemas/{name}")
    schemas.update(defs)
    problem_ref = {"$ref": "#/components/schemas/Problem"}
    components.setdefault("securitySchemes", {})["seatToken"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "A seat token from createGame's `seats`.",
    }
    for path_item in schema.get("paths", {}).values():
        for method, operation in path_item.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            op_id = operation["operationId"]
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
                responses["201"]["links"] = {
                    "GetGame": {"operationId": "getGame", "parameters": LINK_GAME_ID},
                    "Act": {
                        "operationId": "act",
                        "parameters": {
                            **LINK_GAME_ID,
                            "header.Authorization": "Bearer {$response.body#/seats/0/token}",
                        },
                    },
                    "ListEvents": {"operationId": "listEvents", "parameters": LINK_GAME_ID},
                }
            if op_id == "act":
                operation["security"] = [{"seatToken": []}]
            if op_id == "getGame":
                operation["security"] = [{}, {"seatToken": []}]
            _ = method
    _add_discriminators(schema)
    for name in CLOSED_OBJECTS:
        if name in schemas:
            schemas[name]["additionalProperties"] = False
    return schema


def _add_discriminators(schema: dict[str, Any]) -> None:
    """Every oneOf whose members are all tagged Structs gets a discriminator on `type`."""
    schemas = schema["components"]["schemas"]

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            members = node.get("oneOf")
            if isinstance(members, list) and members and "discriminator" not in node:
                mapping = {}
                for member in members:
                    ref = member.get("$ref", "") if isinstance(member, dict) else ""
                    target = schemas.get(ref.rsplit("/", 1)[-1], {})
                    tag = target.get("properties", {}).get("type", {}).get("const")
                    if not ref or tag is None:
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
