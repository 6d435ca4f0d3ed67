"""A database failing under a streamed export (tests/integration/test_records_http.py,
test_player_data.py): the archive's `games` table renamed away mid-way, so the next read
fails in the database itself, and put back afterwards; and what the export's incomplete
trailer must then say."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from infra.archive import SqlArchive

CUT = "games_cut"
# the problem each dialect's failure is: SQLite's lost table is an OperationalError (the
# archive unavailable), PostgreSQL's an error the service does not expect
PROBLEMS = {"sqlite": (503, "store_unavailable"), "postgresql": (500, "internal_error")}


async def lose_games(archive: SqlArchive) -> None:
    await _rename(archive, "games", CUT)


async def restore_games(archive: SqlArchive) -> None:
    await _rename(archive, CUT, "games")


async def _rename(archive: SqlArchive, old: str, new: str) -> None:
    async with archive.engine.begin() as conn:
        await conn.execute(text(f"ALTER TABLE {old} RENAME TO {new}"))


def check_cut(error: dict[str, Any], dialect: str, body: str) -> None:
    """The trailer's `error` is the problem the failure would have been answered with, in
    full; the body holds no traceback and none of the database's message (it is logged)."""
    status, code = PROBLEMS[dialect]
    assert (error["status"], error["code"]) == (status, code)
    assert error["type"].endswith(code)
    assert error["title"]
    assert error["detail"]
    assert "Traceback" not in body
    assert CUT not in body
