"""The event log's paging, shared by the live (`listEvents`, `streamEvents`) and archived
(`listArchivedEvents`) games: its query parameters and the handler that reads a page.

No `from __future__ import annotations` here: `events_handler` gives its handler the
annotation it was handed (the live or the archived game id), so annotations are objects."""

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from litestar import Request, Response
from litestar.handlers import HTTPRouteHandler
from litestar.params import Parameter

from service.api.problems import get_game_part
from service.api.schemas import EventsOut, events_page
from service.ports import StoredEvent

After = Annotated[int, Parameter(ge=0, le=10**9, description="Only events after this seq.")]
EventLimit = Annotated[int, Parameter(ge=1, le=1000, description="At most this many events.")]
ReadEvents = Callable[[str, int, int], Awaitable[list[StoredEvent]]]


def events_handler(
    game_id_type: Any, reader: Callable[[Request], ReadEvents], **route: Any
) -> HTTPRouteHandler:
    """A controller's `GET {game_id}/events`: the events after `after`, at most `limit`, read
    with `reader(request)` (asked for one more, to tell whether another page follows)."""

    async def list_events(
        self: Any,
        game_id: game_id_type,
        request: Request,
        after: After = 0,
        limit: EventLimit = 1000,
    ) -> Response[EventsOut]:
        stored = await reader(request)(game_id, after, limit + 1)
        return Response(events_page(game_id, stored, after, limit))

    return get_game_part("/{game_id:str}/events", **route)(list_events)
