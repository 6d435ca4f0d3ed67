"""What the archive returns, and the port the service programs against.

Plain msgspec Structs (no SQLAlchemy rows, no domain types), ready to encode as JSON.
`GameArchive` is the port; `infra.archive.SqlArchive` implements it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, get_args

import msgspec

from service.model import GameRecord
from service.ports import StoredEvent
from service.ranking import SeatUnrankedReason, UnrankedReason
from service.ratings import Rating

_RECORD = {"frozen": True, "kw_only": True}

LeaderboardOrder = Literal["wins", "mean_score", "rating"]
# aborted: stopped while live by its host or the platform; abandoned: ended by the service
# after nobody acted for TEN_IDLE_TTL; both stop mid-game, without results, never ranked
ArchivedStatus = Literal["finished", "aborted", "abandoned"]
ARCHIVED_STATUSES: tuple[ArchivedStatus, ...] = get_args(ArchivedStatus)


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
    # ranked and the seat has no reason of its own not to count (`service.ranking`)
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


class ArchivedGame(msgspec.Struct, **_RECORD):
    id: str
    status: ArchivedStatus = "finished"
    ranked: bool  # counted by stats and the leaderboard (`service.ranking`)
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
    # the player's rating (always over ranked games: `service.ratings`); the prior, with
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


class GameArchive(Protocol):
    """The port: ended games (finished, aborted or abandoned) kept for good, their logs,
    and per-player figures (of the seats that count in ranked games unless told
    otherwise)."""

    async def archive(
        self,
        record: GameRecord,
        events: Sequence[StoredEvent],
        player_ids: Sequence[str | None],
    ) -> bool:
        """Store an ended game once, ranked or not (`service.ranking.ranking`), and rate it
        in the same transaction when `service.ratings.rated_table` says so; False when it
        was already archived (nothing changes)."""

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

    async def rebuild_ratings(self) -> int:
        """Recompute every rating from the archived games in rating order; the number of
        games rated."""

    async def ping(self) -> None: ...

    async def close(self) -> None: ...
