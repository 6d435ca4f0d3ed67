"""Read APIs over the archive: ended games, finished, aborted or abandoned, ranked or not
(also after the live store expired them), event logs, replays, player stats and the
leaderboard (of ranked games by default), players' ratings and a table's forecast."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from litestar import Controller, Request, get
from litestar.params import Parameter

from domain.game.errors import Text
from domain.game.views import PublicView
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.paging import events_handler
from service.entrypoints.api.parameters import PlayerIdParam
from service.entrypoints.api.problems import get_game_part, problem, problems
from service.entrypoints.api.schemas import PLAYER_ID_PATTERN, PlayerId
from service.history.archive import (
    ArchivedGame,
    GameSummary,
    LeaderboardRow,
    PlayerStats,
    RatingChange,
)
from service.history.ratings import MAX_TABLE, MIN_SEATS
from service.history.reads import History, TableForecast

_OUT = {"frozen": True, "kw_only": True}
# An instant: RFC 3339 with an explicit offset, each field in its range (years 0001-9999,
# no leap second, at most microseconds), declared as `format: date-time` too, so that the
# schema accepts exactly what `parse_timestamp` does: a pattern-valid string that is not a
# date of the calendar (February 30) fails the format, and every date-time of the pattern
# is a valid time (one past Python's range, 0001-01-01T00:00:00+01:00, is clamped to it).
# Parsed here, strictly: Litestar would read `0.5` as a Unix time.
_YEAR = "(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_DATE = f"{_YEAR}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
_TIME = "([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(\\.[0-9]{1,6})?"
_OFFSET = "(Z|([+-])([01][0-9]|2[0-3]):([0-5][0-9]))"
TIMESTAMP = f"^{_DATE}T{_TIME}{_OFFSET}$"
_TIMESTAMP = re.compile(TIMESTAMP.removesuffix("$") + "\\Z")  # no newline before the end
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)
Ranked = Literal["true", "all"]


def instant(description: str) -> Any:
    """An RFC 3339 query parameter (`parse_timestamp` reads it)."""
    return Parameter(
        required=False,
        pattern=TIMESTAMP,
        schema_extra={"format": "date-time"},
        description=description,
    )


PlayerFilter = Annotated[
    str | None,
    Parameter(required=False, pattern=PLAYER_ID_PATTERN, min_length=1, max_length=100),
]
Since = Annotated[str | None, instant("Ended at or after (RFC 3339, e.g. 2026-11-29T18:00:00Z).")]
Until = Annotated[str | None, instant("Ended before (RFC 3339).")]


def parse_timestamp(name: str, value: str | None) -> datetime | None:
    """The instant `value` names (aware, UTC), or None without a value. A date the calendar
    does not have is a 400; an instant just past Python's range is clamped to its end (it
    is before or after every archived game alike)."""
    if value is None:
        return None
    found = _TIMESTAMP.match(value)
    if found is None:
        raise problem(
            400,
            "invalid_request",
            Text("{name}: not an RFC 3339 time: {value!r}", name=name, value=value),
        )
    year, month, day, hour, minute, second, fraction, zone, sign, off_h, off_m = found.groups()
    try:
        local = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            int((fraction or ".")[1:].ljust(6, "0")),
        )
    except ValueError:
        raise problem(
            400, "invalid_request", Text("{name}: no such date: {value!r}", name=name, value=value)
        ) from None
    offset = timedelta(0) if zone == "Z" else timedelta(hours=int(off_h), minutes=int(off_m))
    if sign == "-":
        offset = -offset
    try:
        return (local - offset).replace(tzinfo=UTC)
    except OverflowError:
        return _EARLIEST if offset > timedelta(0) else _LATEST


def ranked_only(ranked: Ranked) -> bool:
    return ranked == "true"


MAX_SEQ = 2**31 - 1  # a rating change's seq is a 32-bit INTEGER: PostgreSQL refuses more
ArchivedId = Annotated[str, Parameter(description="An archived game's id.", max_length=64)]
Limit = Annotated[int, Parameter(ge=1, le=200, description="At most this many items.")]
RankedFilter = Annotated[
    Ranked,
    Parameter(
        required=False,
        description="Count ranked games only (`true`, the default) or every finished game "
        "(`all`). A game is ranked when every human seat's identity was verified, at least "
        "two distinct humans played, the deck was the standard shuffled one and it ended "
        "normally. In a ranked game, a seat a bot took over after timeouts (its player did not "
        "resign) does not count for its player; a resigned seat counts, ranked last.",
    ),
]


class ArchivedGamesPage(msgspec.Struct, **_OUT):
    items: list[GameSummary]
    next_cursor: str | None  # pass as `cursor` for the next page; null on the last page


class ReplayOut(msgspec.Struct, **_OUT):
    game_id: str
    states: list[PublicView]  # the public state after each action, in version order
    next_version: int | None  # ask again with from_version=next_version; null at the end


class LeaderboardOut(msgspec.Struct, **_OUT):
    by: Literal["wins", "mean_score", "rating"]
    ranked_only: bool  # counted ranked games only (`ranked=true`, the default), or all
    min_games: int
    offset: int
    rows: list[LeaderboardRow]


class RatingHistoryOut(msgspec.Struct, **_OUT):
    player_id: str
    items: list[RatingChange]  # newest first
    next_before: int | None  # pass as `before` for the next page; null on the last page


def history_of(request: Request) -> History:
    return request.app.state.history  # not injected: see routes.games_of


# the archive's reads of one game: anyone, but a game of a tournament round whose deal is
# still being played elsewhere only by the platform (`service.tournaments.secrecy`)
WHO = [{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}]
SECRET = (
    " A game of a tournament round whose deal is still being played at another table is "
    "403 `game_embargoed` to all but the platform (and left out of the listing)."
)


class ArchiveController(Controller):
    path = "/v1/archive/games"
    tags: ClassVar[list[str]] = ["archive"]

    @get(
        "/",
        operation_id="listArchivedGames",
        summary="List ended games (finished, aborted or abandoned), ranked or not",
        description="Newest first; `next_cursor` fetches the next page." + SECRET,
        responses=problems(401),
        security=WHO,
        before_request=authenticate,
    )
    async def list_games(
        self,
        request: AuthenticatedRequest,
        player_id: PlayerFilter = None,
        since: Since = None,
        until: Until = None,
        status: Annotated[
            Literal["finished", "aborted", "abandoned", "all"],
            Parameter(
                required=False,
                description="Finished games, aborted ones (stopped while live by their host "
                "or the platform), abandoned ones (nobody acted for the idle time), or `all`.",
            ),
        ] = "all",
        ranked: Annotated[
            Literal["true", "false", "all"],
            Parameter(
                required=False,
                description="Ranked games only (`true`), unranked only (`false`), or `all`.",
            ),
        ] = "all",
        cursor: Annotated[str | None, Parameter(required=False, max_length=200)] = None,
        limit: Limit = 50,
    ) -> ArchivedGamesPage:
        history = history_of(request)
        items, next_cursor = await history.list_games(
            request.user,
            player_id=player_id,
            since=parse_timestamp("since", since),
            until=parse_timestamp("until", until),
            status=None if status == "all" else status,
            ranked=None if ranked == "all" else ranked == "true",
            cursor=cursor,
            limit=limit,
        )
        return ArchivedGamesPage(items=items, next_cursor=next_cursor)

    @get_game_part(
        "/{game_id:str}",
        401,
        operation_id="getArchivedGame",
        summary="A finished game's record",
        description="Its seats, results, seed and deck." + SECRET,
        security=WHO,
        before_request=authenticate,
    )
    async def get_game(self, request: AuthenticatedRequest, game_id: ArchivedId) -> ArchivedGame:
        history = history_of(request)
        return await history.game(game_id, request.user)

    events = events_handler(
        ArchivedId,
        lambda request: partial(history_of(request).events, caller=request.user),
        operation_id="listArchivedEvents",
        summary="A finished game's event log",
        description="The game's events with `seq` greater than `after`, oldest first." + SECRET,
        security=WHO,
    )

    @get_game_part(
        "/{game_id:str}/replay",
        401,
        operation_id="replayArchivedGame",
        summary="Every public state of a finished game, rebuilt from its event log",
        description="From `from_version` on, `limit` states a page." + SECRET,
        security=WHO,
        before_request=authenticate,
    )
    async def replay(
        self,
        request: AuthenticatedRequest,
        game_id: ArchivedId,
        from_version: Annotated[int, Parameter(ge=0, le=10**9)] = 0,
        limit: Annotated[int, Parameter(ge=1, le=500)] = 100,
    ) -> ReplayOut:
        history = history_of(request)
        states = await history.replay(game_id, from_version, limit + 1, request.user)
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
    summary="A player's figures over their archived games (ranked ones by default), and "
    "their rating",
    description="`rating` is the player's Weng-Lin rating (openskill's Bradley-Terry model) "
    "over their rated games whatever `ranked` says: a ranked game is rated for the seats "
    "that count and are played by a human with a player id, when two or more remain. "
    "`ordinal` (mu - 3 sigma) is the conservative estimate the leaderboard orders by; a "
    "player never rated has the prior (mu 25, sigma 25/3, games 0).",
    tags=["archive"],
)
async def player_stats(
    request: Request,
    player_id: PlayerIdParam,
    ranked: RankedFilter = "true",
) -> PlayerStats:
    history = history_of(request)
    return await history.player_stats(player_id, ranked_only=ranked_only(ranked))


@get(
    "/v1/leaderboard",
    operation_id="getLeaderboard",
    summary="Players ranked (over ranked games by default)",
    tags=["archive"],
)
async def leaderboard(
    request: Request,
    by: Annotated[
        Literal["wins", "mean_score", "rating"],
        Parameter(
            required=False,
            description="`wins`, `mean_score`, or `rating`: the higher ordinal (mu - 3 sigma) "
            "first, over rated games (always ranked ones: `ranked` is ignored), `min_games` "
            "counting rated games; each row then carries its `rating`.",
        ),
    ] = "wins",
    ranked: RankedFilter = "true",
    min_games: Annotated[int, Parameter(ge=1, le=10**6)] = 1,
    offset: Annotated[int, Parameter(ge=0, le=10**6)] = 0,
    limit: Limit = 50,
) -> LeaderboardOut:
    history = history_of(request)
    only = ranked_only(ranked) or by == "rating"
    rows = await history.leaderboard(by, min_games, offset, limit, ranked_only=only)
    return LeaderboardOut(by=by, ranked_only=only, min_games=min_games, offset=offset, rows=rows)


@get(
    "/v1/players/{player_id:str}/ratings",
    operation_id="getRatingHistory",
    summary="A player's rating history: what each rated game did to it, newest first",
    tags=["archive"],
)
async def rating_history(
    request: Request,
    player_id: PlayerIdParam,
    before: Annotated[
        int,
        Parameter(
            required=False,
            ge=1,
            le=MAX_SEQ,
            description="Only changes before this `seq` (a page's `next_before`; by default "
            "every change). A rebuild of the ratings renumbers them.",
        ),
    ] = MAX_SEQ,  # past every seq; 2**31 was a 500 on PostgreSQL (an INTEGER column)
    limit: Limit = 50,
) -> RatingHistoryOut:
    items, next_before = await history_of(request).rating_history(player_id, before, limit)
    return RatingHistoryOut(player_id=player_id, items=items, next_before=next_before)


@get(
    "/v1/ratings/predict",
    operation_id="predictTable",
    summary="Each seat's chance to win a proposed table, from the players' ratings",
    description="A table of 2 to 5 distinct player ids (`player_id` repeated, in seat "
    "order); a player never rated has the prior. `win`: each seat's chance to win (they sum "
    "to 1); `draw`: the model's chance that the table ends in a draw.",
    tags=["archive"],
    responses=problems(),
)
async def predict_table(
    request: Request,
    player_id: Annotated[
        list[PlayerId],
        Parameter(
            min_items=MIN_SEATS,
            max_items=MAX_TABLE,
            # Litestar leaves the items' constraints out of the schema (it checks them)
            schema_extra={
                "uniqueItems": True,
                "items": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 100,
                    "pattern": PLAYER_ID_PATTERN,
                },
            },
        ),
    ],
) -> TableForecast:
    if len(set(player_id)) != len(player_id):
        # the lobby's words (a 409 there: a body schema cannot say "distinct"; here
        # `uniqueItems` says it, so a repeated id fails the schema: 400)
        raise problem(
            400, "duplicate_player_id", "One player id cannot sit in two seats of a game."
        )
    return await history_of(request).predict(player_id)
