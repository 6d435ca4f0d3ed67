"""Every game a test archived replays: the archives the suite fills (a migrated throwaway
database of tests/support/archived_games.py, the service processes' databases of
tests/support/archive.py, the test process's own SQLite archive of tests/conftest.py) are
exported as records when they are dropped, and each record is checked with the engine
(`service.history.records.check_record`, as `python -m service.cli records check` does).
A few milliseconds a game (docs/records.md)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import inspect, pool

from infra.archive import SqlArchive, make_engine
from service.entrypoints.record_check import check_one, game_id
from service.history.reads import History


async def bad_records(url: str) -> list[str]:
    """`game id: reason` of each archived game at `url` whose record does not replay (none
    when the database holds no archive)."""
    archive = SqlArchive(make_engine(url, poolclass=pool.NullPool))
    try:
        async with archive.engine.connect() as conn:
            if not await conn.run_sync(lambda sync: inspect(sync).has_table("games")):
                return []
        bad = []
        async for chunk in History(archive).export(page=200):
            for line in chunk.splitlines():
                wrong = check_one(line)
                if wrong is not None:
                    bad.append(f"{game_id(line)}: {wrong}")
        return bad
    finally:
        await archive.close()


def replay_archive(
    url: str, runner: asyncio.Runner | None = None, known: frozenset[str] = frozenset()
) -> None:
    """Fail the test (its teardown) when a game archived at `url` does not replay, but those
    `known` (archived inconsistent on purpose by the test)."""
    found = runner.run(bad_records(url)) if runner is not None else asyncio.run(bad_records(url))
    bad = [line for line in found if line.split(":", 1)[0] not in known]
    if bad:
        pytest.fail("archived games whose record does not replay:\n  " + "\n  ".join(bad[:20]))
