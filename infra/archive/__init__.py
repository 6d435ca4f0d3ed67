"""The SQL archive of finished games (PostgreSQL, or a SQLite file by default).

`upgrade(url)` migrates the database to head (idempotent, safe from several processes);
`SqlArchive(make_engine(url))` is the `GameArchive` port (`service.history.archive`) on it.
"""

from __future__ import annotations

from service.history.archive import (
    ArchivedGame,
    ArchivedResult,
    ArchivedSeat,
    ColorScore,
    GameArchive,
    GameSummary,
    InvalidCursor,
    LeaderboardRow,
    PlayerStats,
    SeatSummary,
)

from .database import DEFAULT_URL, database_url, make_engine
from .migrate import downgrade, upgrade, upgrade_async
from .repository import SqlArchive

__all__ = [
    "DEFAULT_URL",
    "ArchivedGame",
    "ArchivedResult",
    "ArchivedSeat",
    "ColorScore",
    "GameArchive",
    "GameSummary",
    "InvalidCursor",
    "LeaderboardRow",
    "PlayerStats",
    "SeatSummary",
    "SqlArchive",
    "database_url",
    "downgrade",
    "make_engine",
    "upgrade",
    "upgrade_async",
]
