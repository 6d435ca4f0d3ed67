"""Every error as RFC 9457 problem details with a stable `code`, mapped in this one place.

The `title` and `detail` follow the request's `Accept-Language` (`service.entrypoints.api.i18n`): a problem
keeps its message as a `Text` (an English template and its parameters) and renders it when it
becomes a response, with `Content-Language` and `Vary: Accept-Language`. The `code`, `type`,
`status` and any `errors` list are the same in every language.
"""

from __future__ import annotations

import logging
import re
from http import HTTPStatus
from typing import Any

from litestar import Request, Response, get
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException

from domain.game.errors import Joined, RuleError, Text
from infra.http_protocol import TYPE_BASE  # the protocol's own answers share it
from service.core.errors import ServiceError
from service.core.ports import StoreUnavailable
from service.entrypoints.api.i18n import localize, negotiate, title
from service.entrypoints.api.schemas import Problem
from service.history.archive import InvalidCursor

log = logging.getLogger("ten.api")

RETRY_AFTER_SECONDS = "1"

SERVICE_STATUS = {
    "game_not_found": 404,
    "unauthorized": 401,
    "forbidden": 403,
    "version_mismatch": 412,
    "idempotency_key_reused": 409,
    "custom_deck_not_allowed": 400,
    "duplicate_player_id": 409,  # schema-valid (JSON Schema cannot say "unique ids"): a conflict
    "archived_game_not_found": 404,
    "concurrent_update": 409,
    "store_unavailable": 503,
    "bots_busy": 503,
    "invalid_table": 400,
    "game_not_open": 409,
    "game_not_started": 409,
    "game_over": 409,
    "game_not_reviewable": 409,
    "review_failed": 500,  # the service's failure for good (until requeued): not polled again
    "table_full": 409,
    "seat_unavailable": 409,
    "seat_not_found": 404,
    "already_seated": 409,
    "invite_required": 403,
    "not_host": 403,
    "not_your_seat": 403,
    "player_id_not_yours": 403,
    "no_players": 409,
    "invalid_cursor": 400,
    "invalid_text": 400,
    "authentication_required": 401,
    "invalid_api_key": 401,
    "invalid_token": 401,
    "conflicting_credentials": 400,  # both credentials are whole: which one is meant is unclear
    "identity_unavailable": 503,
    "too_many_streams": 503,  # this process is full: another replica may have room
    "too_many_streams_from_client": 429,
    "too_many_open_tables": 429,
    "too_many_open_tournaments": 429,
    "too_many_pending_reviews": 429,
    "too_many_reviews": 429,
    "tournament_not_found": 404,
    "not_organiser": 403,
    "tournament_not_registering": 409,
    "tournament_not_running": 409,
    "tournament_not_paused": 409,
    "tournament_over": 409,
    "tournament_full": 409,
    "not_invited": 403,
    "invalid_tournament": 400,
    "game_embargoed": 403,  # readable later: not a 404, the game exists and its id is public
    "ticket_not_found": 404,
    "ticket_exists": 409,
    "ticket_already_matched": 409,
    "not_your_ticket": 403,
    "invalid_ticket": 400,
    "too_many_tickets": 429,
    # correspondence (service.correspondence)
    "player_id_required": 401,  # no identity to take the player from: say who
    "push_endpoint_refused": 403,  # a URL the service will not post to (this network's)
    "invalid_push_keys": 400,
    "too_many_push_subscriptions": 429,
    "push_subscription_not_found": 404,
    "vacation_allowance_spent": 409,
    "party_too_large": 409,  # schema-valid (JSON Schema cannot relate the party to the sizes)
    "bulk_pairing_not_found": 404,
    "platform_only": 403,
    "invalid_bulk_pairing": 400,
    "bulk_pairing_cancelled": 409,
    "too_many_bulk_pairings": 429,
}
# the `WWW-Authenticate` challenge of a 401 (RFC 6750 for bearer tokens; the API key, which
# has no registered scheme, is named as `ApiKey`); `problem` sends a plain Bearer one otherwise
CHALLENGE = 'Bearer realm="ten"'
CHALLENGES = {
    "invalid_token": 'Bearer realm="ten", error="invalid_token"',
    "invalid_api_key": 'ApiKey realm="ten", header="X-API-Key"',
    "authentication_required": 'Bearer realm="ten", ApiKey realm="ten", header="X-API-Key"',
}
RULE_STATUS = {
    "invalid_game": 400,
    "unknown_card": 400,
    "too_many_copies": 400,
}  # setup errors are bad requests
HTTP_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    412: "version_mismatch",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    500: "internal_error",
    503: "store_unavailable",
}
PROBLEM_JSON = "application/problem+json"
# what every operation may answer, whatever it does (added to each by service.entrypoints.api.openapi:
# Litestar 2 has no layer-wide `responses`)
COMMON_STATUSES = (400, 429, 500, 503)
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


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    """A handler's `responses=`: the error statuses of its own, each a problem document (the
    common ones and the headers some carry are added in `service.entrypoints.api.openapi`)."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            description=DESCRIPTIONS[status],
            media_type=PROBLEM_JSON,
            generate_examples=False,
        )
        for status in statuses
    }


def get_game_part(path: str, *statuses: int, **route: Any) -> Any:
    """`@get` for a read of one game (live or archived) or a part of it: 404 if there is no
    such game, 403 `game_embargoed` while it is a secret of a tournament round
    (`service.tournaments.secrecy`), and the other `statuses` it answers."""
    return get(path, responses=problems(403, 404, *statuses), **route)


class LocalizedProblem(ProblemDetailsException):
    """A problem whose `title` and `detail` are rendered in the request's language when it
    becomes a response (`detail` and `title` hold the English until then)."""

    def __init__(self, text: Text, **problem: Any) -> None:
        super().__init__(detail=str(text), **problem)
        self.text = text

    def to_response(self, request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
        language = negotiate(request.headers.get("accept-language"))
        self.title = title(self.status_code, language)
        self.detail = localize(self.text, language)
        headers = dict(self.headers or {})
        vary = headers.get("Vary")
        headers["Vary"] = f"{vary}, Accept-Language" if vary else "Accept-Language"
        headers["Content-Language"] = language
        self.headers = headers
        return super().to_response(request)


def problem(
    status: int, code: str, detail: str | Text, headers: dict[str, str] | None = None, **extra
) -> ProblemDetailsException:
    """The problem to raise or render. `detail` is a template without parameters (looked up in
    the catalogs as it is) or a Text; a message that is not ours goes through `foreign`."""
    if status == 401:
        headers = {"WWW-Authenticate": CHALLENGES.get(code, CHALLENGE), **(headers or {})}
    return LocalizedProblem(
        detail if isinstance(detail, Text) else Text(detail),
        status_code=status,
        type_=TYPE_BASE + code,
        title=HTTPStatus(status).phrase,
        headers=headers,
        extra={"code": code, **extra},
    )


# messages of the libraries under the API (Litestar's HTTP errors, msgspec's validation), as
# templates that `foreign` recognizes and the catalogs translate; the values they name (types,
# fields, paths) are kept as they are. A message matching none is passed on verbatim.
FOREIGN_TEMPLATES = (
    "Expected `{expected}` of length >= {bound}",
    "Expected `{expected}` of length <= {bound}",
    "Expected `{expected}` matching regex {regex}",
    "Expected `{expected}`, got `{got}`",
    "Expected `{expected}` >= {bound}",
    "Expected `{expected}` <= {bound}",
    "Expected `{expected}` > {bound}",
    "Expected `{expected}` < {bound}",
    "Object contains unknown field `{field}`",
    "Object missing required field `{field}`",
    "Invalid enum value {value}",
    "Invalid value {value}",
    "JSON is malformed: {reason}",
    "Input data was truncated",
    "Validation failed for {method} {path}",
    "not a cursor of this listing",
)
FOREIGN_LONGEST = 2000
_AT_PATH = re.compile(r"(?P<message>.+) - at `(?P<path>[^`]*)`", re.DOTALL)


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)  # literal, name, literal, name, ..., literal
    return re.compile(
        "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts)),
        re.DOTALL,
    )


_FOREIGN = tuple((_pattern(t), t) for t in FOREIGN_TEMPLATES)


def foreign(message: str) -> Text:
    """A library's message as a Text: a known template with the values it names, a status's
    reason phrase, or else the message itself, verbatim in every language (so too one longer
    than `FOREIGN_LONGEST`, which may quote much of a hostile body: never matched)."""
    if len(message) > FOREIGN_LONGEST:
        return Text("{message}", message=message)
    at = _AT_PATH.fullmatch(message)
    if at is not None:
        return Text("{message} - at `{path}`", message=foreign(at["message"]), path=at["path"])
    for pattern, template in _FOREIGN:
        found = pattern.fullmatch(message)
        if found is not None:
            return Text(template, **found.groupdict())
    if message in _PHRASES:
        return Text(message)
    return Text("{message}", message=message)


# the statuses this API answers with: their reason phrases are the titles the catalogs translate
STATUSES = frozenset({*HTTP_CODES, *SERVICE_STATUS.values(), *RULE_STATUS.values(), 409})
_PHRASES = frozenset(HTTPStatus(status).phrase for status in STATUSES)


def from_rule_error(exc: RuleError) -> ProblemDetailsException:
    return problem(RULE_STATUS.get(exc.code, 409), exc.code, exc.text)


def from_service_error(exc: ServiceError) -> ProblemDetailsException:
    status = SERVICE_STATUS[exc.code]
    headers = None
    if exc.retry_after is not None:
        headers = {"Retry-After": str(exc.retry_after)}
    elif status == 503:
        headers = {"Retry-After": RETRY_AFTER_SECONDS}
    return problem(status, exc.code, exc.text, headers, **(exc.members or {}))


def from_store_unavailable(exc: StoreUnavailable) -> ProblemDetailsException:
    log.warning("store unavailable: %s", exc)
    return problem(
        503,
        "store_unavailable",
        "The game store cannot be reached; retry shortly. An action cut off this way may"
        " or may not have been applied: send it again with the same Idempotency-Key (it is"
        " applied at most once) or read the game first.",
        {"Retry-After": RETRY_AFTER_SECONDS},
    )


def from_http_exception(exc: HTTPException) -> ProblemDetailsException:
    status = exc.status_code
    code = HTTP_CODES.get(status, "http_error")
    if isinstance(exc, ValidationException):
        errors = exc.extra if isinstance(exc.extra, list) else []
        found = [_located(e) for e in errors if isinstance(e, dict)]
        listed = "; ".join(str(text) for text in found)  # the English, as it always was
        detail = Joined("; ", found) if listed else foreign(str(exc.detail))
        return problem(400, "invalid_request", Text("{errors}", errors=detail), errors=errors)
    headers = dict(exc.headers or {})
    if status == 429:
        # the window's reset (RateLimit-Reset, seconds) is when a retry can succeed
        headers.setdefault("Retry-After", str(headers.get("RateLimit-Reset", RETRY_AFTER_SECONDS)))
    return problem(status, code, foreign(str(exc.detail)), headers or None)


def _located(error: dict[str, Any]) -> Text:
    """One of Litestar's validation errors: its message, and where."""
    message = foreign(str(error.get("message", "")))
    if error.get("key"):
        return Text("{message} (at {key})", message=message, key=error["key"])
    return message


def from_recursion_error(exc: RecursionError) -> ProblemDetailsException:
    """msgspec stops decoding JSON nested deeper than it can recurse ("maximum recursion depth
    exceeded while deserializing"): a client's body, so a 400 (a few KB of `[[[...` would
    otherwise be a 500). Any other RecursionError is the service's own fault."""
    if "deserializ" in str(exc):
        return problem(400, "invalid_request", "The JSON body is nested too deeply.")
    log.error("recursion error", exc_info=exc)
    return problem(500, "internal_error", "An unexpected error occurred.")


def internal_error_handler(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem(500, "internal_error", "An unexpected error occurred.").to_response(request)


def from_invalid_cursor(exc: InvalidCursor) -> ProblemDetailsException:
    return problem(400, "invalid_request", Text("cursor: {reason}", reason=foreign(str(exc))))


_PROBLEM_OF: dict[type[Exception], Any] = {
    HTTPException: from_http_exception,
    RuleError: from_rule_error,
    ServiceError: from_service_error,
    StoreUnavailable: from_store_unavailable,
    InvalidCursor: from_invalid_cursor,
    RecursionError: from_recursion_error,
}


def problem_details_config() -> ProblemDetailsConfig:
    return ProblemDetailsConfig(
        enable_for_all_http_exceptions=True, exception_to_problem_detail_map=_PROBLEM_OF
    )


def problem_fields(request: Request, exc: Exception) -> dict[str, Any]:
    """The fields of the problem response `exc` would have been (`type`, `title`, `status`,
    `detail`, `code`, in the request's language), for a failure once a response started
    (a streamed export's trailer: `service.entrypoints.api.ndjson`). An unexpected error is
    logged with its traceback and is `internal_error`, as a response would be."""
    for kind in type(exc).__mro__:
        make = _PROBLEM_OF.get(kind)  # type: ignore[call-overload]
        if make is not None:
            found = make(exc)
            break
    else:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        found = problem(500, "internal_error", "An unexpected error occurred.")
    content = found.to_response(request).content
    return dict(content) if isinstance(content, dict) else {}
