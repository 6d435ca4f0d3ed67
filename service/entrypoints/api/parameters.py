"""The request parameters and response headers the routes share, as the OpenAPI document
states them, and the reading of `If-Match`."""

from __future__ import annotations

from typing import Annotated

from litestar.datastructures import ResponseHeader
from litestar.params import HeaderParameter, Parameter, QueryParameter

from service.entrypoints.api.paging import number_in
from service.entrypoints.api.schemas import PLAYER_ID_PATTERN

JSON = "application/json"
GameId = Annotated[
    str, Parameter(description="The game's id, as returned by createGame.", max_length=64)
]
IfMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-Match",
        required=False,
        # one strong entity tag naming a version (`"7"`; the bare `7` is accepted too) or `*`
        pattern=r'^(\*|[0-9]{1,12}|"[0-9]{1,12}")$',
        description='The version the action was chosen on, as the ETag gave it (`"7"`; a bare '
        "`7` is accepted too); 412 if the game moved on. `*` matches any version.",
    ),
]
LastEventId = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        # 0 to 1000000000 in ASCII digits, as the schema can say it (the handler reads it
        # again: service.core.numbers)
        pattern=r"^([0-9]{1,9}|1000000000)(?!\n)$",
        description="The `id` of the last event received: the stream resumes after it. ASCII "
        "digits, 0 to 1000000000 (else 400).",
    ),
]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description="A retry with the same key and the same request (its decoded body) returns "
        "the first response with `Idempotent-Replayed: true`, at once, even after a store "
        "failure or a crash cut the first one off (its effect was stored with its answer, or "
        "nothing was: a retry is never told the first is still in progress, a defect fixed); "
        "the same key with another request is 409 `idempotency_key_reused`.",
    ),
]


def sent_header(name: str, description: str, *, always: bool = True) -> ResponseHeader:
    """A response header the handler sets itself, documented (as a string: `value=""`)."""
    return ResponseHeader(
        name=name, description=description, documentation_only=True, value="", required=always
    )


ETAG = sent_header("ETag", 'The game version, quoted: `"7"`.')
LOCATION = sent_header("Location", "The new game's URL.")
REPLAYED = sent_header(
    "Idempotent-Replayed",
    "`true` when this is the first response to an earlier request with the same "
    "`Idempotency-Key`, sent again (nothing was done again).",
    always=False,
)
SEAT_TOKEN = "seatToken"  # the seat tokens' security scheme (defined in api.openapi_config)


def parse_if_match(value: str | None) -> int | None:
    """The version an `If-Match` names (its pattern checked already): `"7"` or 7; `*`, any."""
    if value is None:
        return None
    text = value.strip(" \t")
    return None if text == "*" else number_in("If-Match", text.strip('"'), high=10**12 - 1)


def player_query(description: str) -> QueryParameter:
    """A `player_id` named in a query, held to the pattern and length of every player id
    (a path's, a body's: `schemas.PlayerId`)."""
    return QueryParameter(
        pattern=PLAYER_ID_PATTERN, min_length=1, max_length=100, description=description
    )


# a player id in a path, held to the pattern and length of every player id
PlayerIdParam = Annotated[str, Parameter(pattern=PLAYER_ID_PATTERN, min_length=1, max_length=100)]
