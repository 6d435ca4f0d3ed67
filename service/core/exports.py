"""The end of a bulk NDJSON export (the archive's records, a player's data): its last line,
the trailer, says whether everything was sent. A response streams as it is read, so a
failure after the first line can no longer be a problem response: the export ends instead
with a trailer saying it is incomplete (`"complete": false`) and why (`error`, the problem
the failure would have been: `service.entrypoints.api.ndjson`). A client that finds no
trailer, or an incomplete one, holds a truncated export (docs/records.md, docs/privacy.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

_json = msgspec.json.Encoder()


@dataclass(frozen=True)
class End:
    """The trailer of an export: its own `fields` (what it counted), and the failure that cut
    the export short (None: it is complete)."""

    fields: Mapping[str, Any]
    failure: Exception | None = None

    @property
    def complete(self) -> bool:
        return self.failure is None

    def line(self, error: Mapping[str, Any] | None = None) -> bytes:
        """The trailer as the export's last line: `fields`, `complete`, and for an
        incomplete export the `error` (the problem's fields) it was cut by."""
        body: dict[str, Any] = {**self.fields, "complete": self.complete}
        if not self.complete:
            body["error"] = dict(error or {})
        return _json.encode(body) + b"\n"


async def ended(
    lines: AsyncIterator[bytes], trailer: Callable[[int], Mapping[str, Any]]
) -> AsyncIterator[bytes | End]:
    """`lines` (chunks of whole NDJSON lines) as they come, then their End, whose fields are
    `trailer(n)` of the n lines sent: complete when `lines` ran out, else the failure that
    stopped them (the export stops there: nothing is read after a failure). A client gone
    (the task cancelled) is no failure: nothing more is sent to it."""
    count = 0
    try:
        async for chunk in lines:
            yield chunk
            count += chunk.count(b"\n")
    except Exception as exc:  # any failure once the response started ends it with its trailer
        yield End(trailer(count), exc)
        return
    yield End(trailer(count))
