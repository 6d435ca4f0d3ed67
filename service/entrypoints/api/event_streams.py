"""Server-sent event streams: admitting one more, and the response that carries one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from litestar import Request
from litestar.middleware.rate_limit import get_remote_address
from litestar.response import Stream

from infra.watchers import (
    KEEPALIVE,
    OPENING,
    REFUSAL_RETRY_AFTER,
    RETRY_MS,
    Slot,
    StreamsRefused,
    Watchers,
    reconnect,
)
from service.core.errors import ServiceError
from service.core.ports import StoreUnavailable
from service.entrypoints.api.problems import problem
from service.tournaments.feeds import TournamentFeeds


def admit(watchers: Watchers, request: Request) -> Slot:
    """A slot for one more stream, or the refusal (503 or 429 with Retry-After) before the
    stream starts: the process, or the client (its address, as the rate limit counts
    clients), holds as many streams as allowed."""
    try:
        return watchers.admit(get_remote_address(request))
    except StreamsRefused as refused:
        retry = {"Retry-After": str(REFUSAL_RETRY_AFTER)}
        if refused.per_client:
            raise problem(
                429,
                "too_many_streams_from_client",
                "This client holds as many event streams as it may; close one or retry later.",
                retry,
            ) from None
        raise problem(
            503,
            "too_many_streams",
            "This server holds as many event streams as it may; retry later.",
            retry,
        ) from None


def follow(
    watchers: Watchers, game_id: str, after: int, slot: Slot, seat: int | None = None
) -> Stream:
    """The stream, served by the process's one reader (`infra.watchers`). Its blocks are
    encoded once per event for every stream, and sent together when several are due: hence
    Litestar's `Stream` with the headers of its `ServerSentEvent`, which would encode every
    message again for each stream and send each alone. `seat`: the caller's seat (its
    player watches the game while the stream is open)."""
    return sse(watchers.stream(game_id, after, slot, seat))


def sse(body: AsyncIterator[bytes]) -> Stream:
    """A server-sent events response of these blocks (a game's stream, a tournament's)."""
    return Stream(
        body,
        media_type="text/event-stream",
        headers={
            "Cache-Control": "no-cache",
            "Connection": "keep-alive",
            "X-Accel-Buffering": "no",
        },
    )


async def record_changes(
    feeds: TournamentFeeds[Any],
    record_id: str,
    after: int,
    slot: Slot,
    keepalive: float,
    event: bytes,
    render: Callable[[Any], bytes | None],
) -> AsyncIterator[bytes]:
    """The SSE body of a versioned record's stream (a tournament's, a ticket's): `event`
    with `render(record)` each time the record's version passed `after` (None: nothing this
    reader would see changed, nothing sent), read by the process's one feed of it
    (`service.tournaments.feeds`: once a second for all its streams); comment lines keep
    the connection alive; it ends once the record ended, or with a `reconnect` event when
    the store fails. The stream's slot is released however it ends."""
    try:
        yield OPENING
        async with feeds.follow(record_id) as feed:
            while True:
                try:
                    record = await feed.after(after, keepalive)
                except StoreUnavailable:
                    yield reconnect("store_unavailable", RETRY_MS, 3 * RETRY_MS)
                    return
                except ServiceError:  # gone
                    return
                if record is None:
                    yield KEEPALIVE
                    continue
                if record.version > after:
                    after = record.version
                    data = render(record)
                    if data is not None:
                        yield b"id: %d\r\nevent: %s\r\ndata: %s\r\n\r\n" % (after, event, data)
                if record.ended:
                    return
    finally:
        slot.release()
