"""Deprecating an operation or a response field (docs/versioning.md).

A deprecation says when it was announced and when the thing goes away. An operation:

    OLD = Deprecation(since=datetime(..., tzinfo=UTC), sunset=datetime(..., tzinfo=UTC))

    @get("/v1/old", deprecated=True, response_headers=[*OLD.headers()])

is marked `deprecated: true` in the OpenAPI document (Litestar's `deprecated=`) and every
success of it (not a problem response) answers with `Deprecation: @<unix seconds>`
(RFC 9745) and `Sunset: <HTTP-date>` (RFC 8594), both documented with the response. A
response field:

    old: Annotated[int | None, OLD.field("What it was; use `new`.")] = None

is marked `deprecated: true` in its schema (msgspec's JSON Schema, which the document's
components are), and the operations whose responses carry it take `response_headers=
[*OLD.headers()]` (the contract tests check that every response that carries a deprecated
field, or answers a deprecated operation, documents both headers)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime

import msgspec
from litestar.datastructures import ResponseHeader

DEPRECATION = "Deprecation"
SUNSET = "Sunset"


@dataclass(frozen=True)
class Deprecation:
    """When a deprecation was announced (`since`) and when the thing stops (`sunset`)."""

    since: datetime
    sunset: datetime

    def __post_init__(self) -> None:
        if self.since.tzinfo is None or self.sunset.tzinfo is None:
            raise ValueError("a deprecation's dates are aware (UTC)")
        if self.sunset <= self.since:
            raise ValueError("a deprecation's sunset comes after its announcement")

    def deprecation_value(self) -> str:
        """RFC 9745: a structured-field date, `@` and the unix seconds."""
        return f"@{int(self.since.timestamp())}"

    def sunset_value(self) -> str:
        """RFC 8594: an HTTP-date (IMF-fixdate, GMT)."""
        return format_datetime(self.sunset, usegmt=True)

    def headers(self) -> list[ResponseHeader]:
        """The two headers, sent with every success of the handler and documented with it."""
        return [
            ResponseHeader(
                name=DEPRECATION,
                value=self.deprecation_value(),
                required=True,
                description="Deprecated since this date (RFC 9745: `@` and unix seconds); "
                "see docs/versioning.md.",
            ),
            ResponseHeader(
                name=SUNSET,
                value=self.sunset_value(),
                required=True,
                description="It stops being served after this date (RFC 8594, an HTTP-date).",
            ),
        ]

    def field(self, description: str) -> msgspec.Meta:
        """A deprecated field's schema: `deprecated: true`, and when it goes away."""
        return msgspec.Meta(
            description=f"Deprecated; removed after {self.sunset_value()}. {description}",
            extra_json_schema={"deprecated": True},
        )
