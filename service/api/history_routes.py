"""Read APIs over the archive: finished games (also after the live store expired them),
event logs, replays, player stats and the leaderboard."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

import msgspec
from litestar import Controller, Request, get
from litestar.params import Parameter

from domain.views import PublicView
from service.api.paging import events_handler
from service.api.problems import get_game_part, problem, problems
from service.api.schemas import PLAYER_ID_PATTERN
from service.archive import ArchivedGame, GameSummary, LeaderboardRow, PlayerStats
from service.history import History

_OUT = {"frozen": True, "kw_only": True}
# RFC 3339 with an explicit offset, or empty (no bound). Parsed here, strictly: Litestar
# would read `0.5` as a Unix time, and a nullable parameter would let `?since=null` in.
TIMESTAMP = r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2}))?$"


def parse_timestamp(name: str, value: str) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).astimezone(UTC)
    except (ValueError, OverflowError):
        raise problem(400, "invalid_request", f"{name}: not a valid time: {value!r}") from None


ArchivedId = Annotated[str, Parameter(description="An archived game's id.", max_length=64)]
Limit = Annotated[int, Parameter(ge=1, le=200, description="At most this many items.")]


class ArchivedGamesPage(msgspec.Struct, **_OUT):
    items: list[GameSummary]
    next_cursor: str | None  # pass as `cursor` for the next page; null on the last page


class ReplayOut(msgspec.Struct, **_OUT):
    game_id: str
    states: list[PublicView]  # the public state after each action, in version order
    next_version: int | None  # ask again with from_version=next_version; null at the end


class LeaderboardOut(msgspec.Struct, **_OUT):
    by: Literal["wins", "mean_score"]
    min_games: int
    offset: int
    rows: list[LeaderboardRow]


def history_of(request: Request) -> History:
    return request.app.state.history  # not injected: see routes.games_of


class ArchiveController(Controller):
    path = "/v1/archive/games"
    tags: ClassVar[list[str]] = ["archive"]

    @get("/", operation_id="listArchivedGames", summary="List finished games", responses=problems())
    async def list_games(
        self,
        request: Request,
        player_id: Annotated[
            str | None,
            Parameter(required=False, pattern=PLAYER_ID_PATTERN, min_length=1, max_length=100),
        ] = None,
        since: Annotated[
            str,
            Parameter(
                required=False,
                pattern=TIMESTAMP,
                description="Finished at or after (RFC 3339, e.g. 2026-11-29T18:00:00Z).",
            ),
        ] = "",
        until: Annotated[
            str,
            Parameter(required=False, pattern=TIMESTAMP, description="Finished before (RFC 3339)."),
        ] = "",
        status: Annotated[
            Literal["finished"],
            Parameter(required=False, description="The archive holds finished games only."),
        ] = "finished",
        cursor: Annotated[str | None, Parameter(required=False, max_length=200)] = None,
        limit: Limit = 50,
    ) -> ArchivedGamesPage:
        history = history_of(request)
        items, next_cursor = await history.list_games(
            player_id=player_id,
            since=parse_timestamp("since", since),
            until=parse_timestamp("until", until),
            cursor=cursor,
            limit=limit,
        )
        _ = status
        return ArchivedGamesPage(items=items, next_cursor=next_cursor)

    @get_game_part(
        "/{game_id:str}",
        operation_id="getArchivedGame",
        summary="A finished game's record",
    )
    async def get_game(self, request: Request, game_id: ArchivedId) -> ArchivedGame:
        history = history_of(request)
        return await history.game(game_id)

    events = events_handler(
        ArchivedId,
        lambda request: history_of(request).events,
        operation_id="listArchivedEvents",
        summary="A finished game's event log",
    )

    @get_game_part(
        "/{game_id:str}/replay",
        operation_id="replayArchivedGame",
        summary="Every public state of a finished game, rebuilt from its event log",
    )
    async def replay(
        self,
        request: Request,
        game_id: ArchivedId,
        from_version: Annotated[int, Parameter(ge=0, le=10**9)] = 0,
        limit: Annotated[int, Parameter(ge=1, le=500)] = 100,
    ) -> ReplayOut:
        history = history_of(request)
        states = await history.replay(game_id, from_version, limit + 1)
        more = len(states) > limit
        states = states[:limit]
        return ReplayOut(
            game_id=game_id,
            states=states,
            next_version=states[-1].version + 1 if more else None,
        )


@get(
    "/v1/players/{player_id:str}/stats",
    operation_id="getPlayerStats",
    summary="A player's figures over their archived games",
    tags=["archive"],
)
async def player_stats(
    request: Request,
    player_id: Annotated[str, Parameter(pattern=PLAYER_ID_PATTERN, min_length=1, max_length=100)],
) -> PlayerStats:
    history = history_of(request)
    return await history.player_stats(player_id)


@get("/v1/leaderboard", operation_id="getLeaderboard", summary="Players ranked", tags=["archive"])
async def leaderboard(
    request: Request,
    by: Annotated[Literal["wins", "mean_score"], Parameter(required=False)] = "wins",
    min_games: Annotated[int, Parameter(ge=1, le=10**6)] = 1,
    offset: Annotated[int, Parameter(ge=0, le=10**6)] = 0,
    limit: Limit = 50,
) -> LeaderboardOut:
    history = history_of(request)
    rows = await history.leaderboard(by, min_games, offset, limit)
    return LeaderboardOut(by=by, min_games=min_games, offset=offset, rows=rows)
