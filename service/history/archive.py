"""What the archive keeps and returns, and the port the service programs against.

Plain msgspec Structs (no SQLAlchemy rows, no domain types), ready to encode as JSON.
`GameArchive` is the port; `infra.archive.SqlArchive` implements it. Its writes go through
a unit of work (`ArchiveUnit`, from `GameArchive.unit()`): one transaction, kept only when
committed; the use cases that write (`service.history.archiving`) decide what is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Literal, Protocol, get_args

import msgspec

from service.core.ports import StoredEvent
from service.core.ranking import SeatUnrankedReason, UnrankedReason
from service.history.ratings import RatedSeat, Rating, SeatFacts, SeatOutcome

_RECORD = {"frozen": True, "kw_only": True}

LeaderboardOrder = Literal["wins", "mean_score", "rating"]
# aborted: stopped while live by its host or the platform; abandoned: ended by the service
# after nobody acted for TEN_IDLE_TTL; both stop mid-game, without results, never ranked
ArchivedStatus = Literal["finished", "aborted", "abandoned"]
ARCHIVED_STATUSES: tuple[ArchivedStatus, ...] = get_args(ArchivedStatus)
ID_LENGTH = 64  # characters of an archived game's id at most
PLAYER_ID_LENGTH = 200  # characters of an archived player id at most


class InvalidCursor(ValueError):
    """A pagination cursor that this archive did not hand out (or that was altered)."""


class ColorScore(msgspec.Struct, **_RECORD):
    points: int
    run: tuple[str, ...]


class ArchivedSeat(msgspec.Struct, **_RECORD):
    seat: int
    name: str
    bot: str | None
    player_id: str | None
    # the seat's result counts for its player's stats and the leaderboard: the game is
    # ranked and the seat has no reason of its own not to count (`service.core.ranking`)
    ranked: bool
    unranked_reason: SeatUnrankedReason | None  # the seat's own reason; null when none


class ArchivedResult(msgspec.Struct, **_RECORD):
    seat: int
    score: int
    colors: dict[str, ColorScore]
    rank: int
    winner: bool  # a shared win is a win
    currency: int
    bust: int  # bust tokens held at the end
    cards: int
    resigned: bool  # the player resigned (a bot played on): ranked below every seat that did not
    perfect_colors: int  # colours with a run of all nine
    busts: int  # how many times the seat busted


class ArchivedTable(msgspec.Struct, **_RECORD):
    """The tournament table a game was."""

    id: str  # the tournament's
    round: int
    table: int


class ArchivedGame(msgspec.Struct, **_RECORD):
    id: str
    status: ArchivedStatus = "finished"
    ranked: bool  # counted by stats and the leaderboard (`service.core.ranking`)
    unranked_reason: UnrankedReason | None  # the primary reason; null when ranked
    unranked_reasons: tuple[UnrankedReason, ...]  # every reason that applies, primary first
    player_count: int
    rules: dict[str, Any]
    seed: str
    deck: tuple[str, ...]  # the draw pile as it was dealt, top card first
    schema_version: int
    created_at: datetime
    finished_at: datetime  # when it ended (finished, aborted or abandoned)
    version: int
    event_count: int
    seats: tuple[ArchivedSeat, ...]
    results: tuple[ArchivedResult, ...]  # empty for an aborted or abandoned game
    # the time control it was played under (a `TimeControl`'s JSON); null: none, or archived
    # before the archive kept it
    clock: dict[str, Any] | None = None
    # the tournament table it was; null: none, or archived before the archive kept it
    tournament: ArchivedTable | None = None


class SeatSummary(msgspec.Struct, **_RECORD):
    seat: int
    name: str
    bot: str | None
    player_id: str | None
    ranked: bool  # as `ArchivedSeat`: the seat's result counts
    unranked_reason: SeatUnrankedReason | None
    score: int | None  # the final result; null in an aborted or abandoned game
    rank: int | None
    winner: bool | None


class GameSummary(msgspec.Struct, **_RECORD):
    """One line of a game listing."""

    id: str
    status: ArchivedStatus = "finished"
    ranked: bool
    unranked_reason: UnrankedReason | None
    unranked_reasons: tuple[UnrankedReason, ...]
    player_count: int
    created_at: datetime
    finished_at: datetime  # when it ended
    version: int
    event_count: int
    seats: tuple[SeatSummary, ...]


class PlayerStats(msgspec.Struct, **_RECORD):
    player_id: str
    # counted ranked games only (the default: the seats of theirs that count), or every
    # finished game
    ranked_only: bool
    games: int
    wins: int  # shared wins included
    mean_score: float | None  # None without games
    best_score: int | None
    busts: int
    bust_rate: float | None  # busts per game
    perfect_colors: int  # in total
    # the player's rating (always over ranked games: `service.history.ratings`); the prior, with
    # games 0, for a player never rated
    rating: Rating


class RatingChange(msgspec.Struct, **_RECORD):
    """What one rated game did to a player's rating."""

    seq: int  # the game's place in the rating order (renumbered by a rebuild)
    game_id: str
    finished_at: datetime
    rank: int  # the player's place among the rated seats (1: first; equal ranks: a tie)
    rated_seats: int  # how many seats of the game were rated
    mu_before: float
    sigma_before: float
    mu: float
    sigma: float
    ordinal: float
    games: int  # rated games so far, this one included


class LeaderboardRow(msgspec.Struct, **_RECORD):
    position: int  # 1-based place in the whole ordering (offset included)
    player_id: str
    games: int
    wins: int
    mean_score: float
    rating: Rating | None = None  # by="rating" only


class ArchivedEvent(msgspec.Struct, **_RECORD):
    """One event of an archived log: its JSON exactly as it was published."""

    seq: int
    type: str  # the event's tag
    data: str


class Archival(msgspec.Struct, **_RECORD):
    """What the archive keeps of one ended game (`service.history.archiving.archival`): the game
    with its seats and results as `GameArchive.get_game` returns it, its whole log, and
    the seats its ratings are updated from (empty: the game is not rated)."""

    game: ArchivedGame
    events: tuple[ArchivedEvent, ...]
    rated: tuple[RatedSeat, ...]


class GameRating(msgspec.Struct, **_RECORD):
    """What one rated game did to its players' ratings (`service.history.ratings.rate`)."""

    game_id: str
    finished_at: datetime
    outcomes: tuple[SeatOutcome, ...]


class RankedGame(msgspec.Struct, **_RECORD):
    """An archived ranked game as a rebuild of the ratings reads it: its seats in seat
    order, each with its result's rank (None: no result)."""

    game_id: str
    finished_at: datetime
    seats: tuple[SeatFacts, ...]


# a game of the bulk export: the game and its whole log
ExportedGame = tuple[ArchivedGame, list[StoredEvent]]


class ExportFilter(msgspec.Struct, **_RECORD):
    """Which games the bulk export reads: `player_id` sat in them, `since <= finished_at <
    until`, among `game_ids` (None: any of each)."""

    player_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    game_ids: tuple[str, ...] | None = None


class ArchiveUnit(Protocol):
    """One transaction on the archive (a unit of work): what it wrote is kept when
    `commit()` is called, and dropped when the unit ends without it. Two units that write
    the same game, or rate a player in common, are serialized: the second one sees what
    the first committed."""

    async def add_game(self, archival: Archival) -> bool:
        """Write the game, its seats, results and log; False (nothing written) when it is
        archived already."""

    async def ratings_of(self, player_ids: Sequence[str]) -> dict[str, Rating]:
        """The current rating of each of `player_ids` that has one, held until the unit
        ends so that no other unit rates them meanwhile."""

    async def save_ratings(self, rated: GameRating) -> None:
        """Store a rated game's new ratings and history; the game takes the next place in
        the rating order."""

    async def is_rated(self, game_id: str) -> bool:
        """Whether the game has its place in the rating order (it was rated); asked after
        its players' ratings are held (`ratings_of`), so no other unit rates it meanwhile."""

    async def ranked_games(self) -> list[RankedGame]:
        """Every archived ranked game in rating order: those rated so far in the order they
        were, after those archived before ratings existed (by their end, then id). Holds
        the ratings until the unit ends (nothing is rated meanwhile)."""

    async def replace_ratings(
        self, rated: Sequence[GameRating], ratings: Mapping[str, Rating]
    ) -> None:
        """Replace every rating, the whole history and the rating order by `rated` (their
        order renumbered from 1) and `ratings` (each player's after the last of them)."""

    async def commit(self) -> None: ...


class ArchiveUnits(Protocol):
    """Where the archive's writers (`service.history.archiving`) get their units of work."""

    def unit(self) -> AbstractAsyncContextManager[ArchiveUnit]:
        """A new unit of work (a transaction) on the archive."""


class GameArchive(ArchiveUnits, Protocol):
    """The port: ended games (finished, aborted or abandoned) kept for good, their logs,
    and per-player figures (of the seats that count in ranked games unless told
    otherwise). Written through units of work (`service.history.archiving.archive_game`,
    `rebuild_ratings`)."""

    async def list_games(
        self,
        *,
        player_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        status: str | None = None,
        ranked: bool | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> tuple[list[GameSummary], str | None]:
        """Newest first; the second item is the cursor of the next page (None: last page).
        `status` and `ranked` filter (None: any)."""

    async def get_game(self, game_id: str) -> ArchivedGame | None: ...

    async def export_page(
        self, which: ExportFilter, after: tuple[datetime, str] | None, limit: int
    ) -> list[ExportedGame]:
        """Up to `limit` whole games of `which`, oldest first by (finished_at, id), those
        after the key `after` (a page's last game's): the bulk export's keyset pages."""

    async def events(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]: ...

    async def player_stats(self, player_id: str, *, ranked_only: bool = True) -> PlayerStats: ...

    async def leaderboard(
        self,
        by: LeaderboardOrder = "wins",
        *,
        ranked_only: bool = True,
        min_games: int = 1,
        offset: int = 0,
        limit: int = 50,
    ) -> list[LeaderboardRow]: ...

    async def ratings(self, player_ids: Sequence[str]) -> dict[str, Rating]:
        """The current rating of each player id that has one."""

    async def rating_history(
        self, player_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[RatingChange]:
        """A player's rating changes, newest first: those with seq < `before` (None: all)."""

    async def get_review(self, game_id: str) -> bytes | None:
        """A finished game's post-game review as it was kept (JSON), or None."""

    async def save_review(self, game_id: str, review: bytes, at: datetime) -> bool:
        """Keep a finished game's review (JSON, `service.history.reviews`): written once; False when
        one is kept already (nothing changed)."""

    async def ping(self) -> None: ...

    async def close(self) -> None: ...
