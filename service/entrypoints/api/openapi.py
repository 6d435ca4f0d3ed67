"""The OpenAPI document finished once the app is built.

The handlers declare their parameters, bodies, error statuses (`problems.problems`),
response headers and security; Litestar builds the document from them. What cannot be
declared is done on the generated document that `/schema/openapi.json` serves (and
`python -m service.entrypoints.openapi_export` commits); here, what the operations take and
answer:
- optional header and query parameters as plain strings/integers (no `oneOf [.., null]`:
  a header is absent or a string);
- the error statuses every operation may answer (`problems.COMMON_STATUSES`: Litestar 2 has
  no layer-wide `responses`), and the headers of problem responses (`ResponseSpec` has
  none): `WWW-Authenticate` on 401, `Retry-After` on 503;
- the `webhooks` the service sends.
Elsewhere: the configuration (`openapi_config`), the component schemas (`openapi_schemas`:
msgspec's own, the constraints it cannot state, the discriminators, the published names),
the links and request examples (`openapi_links`).
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar

from service.entrypoints.api.openapi_links import (
    REQUEST_EXAMPLES,
    links_after_create,
    links_after_join,
    links_after_read,
    links_of_the_lobby,
)
from service.entrypoints.api.openapi_schemas import REF, component_schemas, finish_components
from service.entrypoints.api.problems import COMMON_STATUSES, DESCRIPTIONS, PROBLEM_JSON
from service.reactions.webhook_payloads import WEBHOOK_PAYLOADS

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
# operations whose caller (service.entrypoints.api.auth, from `Authorization`) decides what they answer:
# documented here as a header parameter too (besides the security schemes), so that links can
# pass a seat token on (`$request.header.Authorization`); True where it is required
READS_AUTHORIZATION = {"getGame": False, "act": True}
AUTHORIZATION_DESCRIPTION = (
    "`Bearer <seat token>` (as createGame or joinGame returned it) or `Bearer <player JWT>`."
)


def served_document(app: Litestar) -> dict[str, Any]:
    """The document as `/schema/openapi.json` serves it (built on first use, then cached).

    Litestar's OpenAPI plugin has no public import (it lives in `litestar._openapi`), so it
    is found by name in the app's plugins."""
    return app.plugins.get("OpenAPIPlugin").provide_openapi_schema()


def finish_openapi(app: Litestar) -> dict[str, Any]:
    """The served document finished (see the module docstring), in place; returned."""
    schema = served_document(app)
    components = schema.setdefault("components", {})
    components["schemas"] = component_schemas()
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
                responses["201"]["links"] = {**links_after_create(), **links_of_the_lobby()}
            if op_id == "getGameReview":  # Litestar documents headers on the 200 only
                responses["202"]["headers"] = {"Retry-After": RETRY_AFTER_HEADER}
                responses["500"]["description"] = REVIEW_FAILED
            if op_id == "joinGame":
                responses["201"]["links"] = links_after_join()
            if op_id in ("getGame", "act"):
                responses["200"]["links"] = links_after_read(op_id)
    schema["webhooks"] = _webhooks()
    finish_components(schema)
    return schema


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
