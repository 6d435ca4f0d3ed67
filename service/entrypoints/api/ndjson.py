"""Streamed NDJSON exports (the archive's records, a player's data) over HTTP: each line as
the use case hands it over, then its trailer (`service.core.exports.End`). Once the
response started, a failure cannot be a problem response any more: the trailer says the
export is incomplete and carries the problem's fields (`problem_fields`, logged here), then
the response ends cleanly, so a client tells a truncated export from a whole one."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from litestar import Request
from litestar.response import Stream

from service.core.exports import End
from service.entrypoints.api.problems import problem_fields

NDJSON = "application/x-ndjson"
log = logging.getLogger("ten.api")


def ndjson_stream(
    request: Request, items: AsyncIterator[bytes | End], headers: dict[str, str]
) -> Stream:
    return Stream(_lines(request, items), media_type=NDJSON, headers=headers)


async def _lines(request: Request, items: AsyncIterator[bytes | End]) -> AsyncIterator[bytes]:
    async for item in items:
        if not isinstance(item, End):
            yield item
        elif item.failure is None:
            yield item.line()
        else:
            log.warning(
                "export %s cut short (%s): %s", request.url.path, dict(item.fields), item.failure
            )
            yield item.line(problem_fields(request, item.failure))
            return
