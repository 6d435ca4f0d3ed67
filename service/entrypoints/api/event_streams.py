"""Server-sent event streams: admitting one more, and the response that carries one."""

from __future__ import annotations

from collections.abc import AsyncIterator

from litestar import Request
from litestar.middleware.rate_limit import get_remote_address
from litestar.response import Stream

from infra.watchers import REFUSAL_RETRY_AFTER, Slot, StreamsRefused, Watchers
from service.entrypoints.api.problems import problem


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
