"""The event log's paging, shared by the live (`listEvents`, `streamEvents`) and archived
(`listArchivedEvents`) games: its query parameters and the handler that reads a page.

No `from __future__ import annotations` here: `events_handler` gives its handler the
annotation it was handed (the live or the archived game id), so annotations are objects."""

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from litestar import Request, Response
from litestar.handlers import HTTPRouteHandler
from litestar.params import Parameter

from domain.game.errors import Text
from service.core.numbers import ascii_number
from service.core.ports import StoredEvent
from service.entrypoints.api.auth import authenticate
from service.entrypoints.api.problems import get_game_part, problem
from service.entrypoints.api.schemas import EventsOut, events_page

MAX_CURSOR = 10**9  # the largest seq or version a client may name
After = Annotated[int, Parameter(ge=0, le=MAX_CURSOR, description="Only events after this seq.")]
EventLimit = Annotated[int, Parameter(ge=1, le=1000, description="At most this many events.")]
ReadEvents = Callable[[str, int, int], Awaitable[list[StoredEvent]]]


def number_in(
    name: str, value: str, *, high: int = MAX_CURSOR, low: int = 0, spaces: bool = True
) -> int:
    """A number of a request: ASCII digits from `low` to `high` (`service.core.numbers`), else
    400. A handler reads its own from a header (`Last-Event-ID`, `If-Match`: spaces and
    tabs around them allowed as in any header); the declared integer parameters of a path
    or a query are read so without `spaces` (`service.entrypoints.api.numbers`)."""
    try:
        return ascii_number(value.strip(" \t") if spaces else value, low=low, high=high)
    except ValueError:
        raise problem(
            400,
            "invalid_request",
            Text(
                "{name} must be a number from {low} to {high}, in ASCII digits.",
                name=name,
                low=low,
                high=high,
            ),
        ) from None


def events_handler(
    game_id_type: Any, reader: Callable[[Request], ReadEvents], **route: Any
) -> HTTPRouteHandler:
    """A controller's `GET {game_id}/events`: the events after `after`, at most `limit`, read
    with `reader(request)` (asked for one more, to tell whether another page follows), for
    the caller `authenticate` found (`request.user`: who may read a tournament's secret
    game, `service.tournaments.secrecy`)."""

    async def list_events(
        self: Any,
        game_id: game_id_type,
        request: Request,
        after: After = 0,
        limit: EventLimit = 1000,
    ) -> Response[EventsOut]:
        stored = await reader(request)(game_id, after, limit + 1)
        return Response(events_page(game_id, stored, after, limit))

    return get_game_part("/{game_id:str}/events", 401, before_request=authenticate, **route)(
        list_events
    )
