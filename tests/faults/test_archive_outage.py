"""The archive while PostgreSQL stops and starts: every failure a reader sees is
StoreUnavailable (the API's 503 with Retry-After), never another error (a 500), and the
readers are served again once it is back.

Found by the soak (`GET /v1/leaderboard?by=rating` answered 500 as PostgreSQL stopped): a
session PostgreSQL ends in the middle of a query can leave asyncpg's protocol mid-way, and
the next step on that connection fails as asyncpg's InternalClientError, which SQLAlchemy
raises as an InternalError with no SQLSTATE (but `connection_invalidated`)."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from sqlalchemy import exc as sa_exc

from infra.archive import SqlArchive, make_engine
from infra.archive.errors import translate_errors
from infra.archive.migrate import upgrade_async
from service.core.ports import StoreUnavailable
from tests.servers import PostgresServer

CYCLES = 4  # stops and starts; the race shows in about one cycle in two


def test_readers_see_only_unavailable_while_postgres_stops_and_starts(
    private_postgres: PostgresServer,
) -> None:
    pg = private_postgres
    outcomes: Counter[str] = Counter()
    others: list[BaseException] = []

    async def body() -> int:
        await upgrade_async(pg.url)
        archive = SqlArchive(make_engine(pg.url))
        stop = asyncio.Event()

        async def reader(read: str) -> None:
            while not stop.is_set():
                try:
                    if read == "stats":
                        await archive.player_stats("alice")
                    else:
                        await archive.leaderboard(read)  # type: ignore[arg-type]
                    outcomes["served"] += 1
                except StoreUnavailable:
                    outcomes["unavailable"] += 1
                    await asyncio.sleep(0.005)
                except Exception as exc:  # what the test is about: nothing else escapes
                    others.append(exc)
                    await asyncio.sleep(0.005)

        try:
            readers = [
                asyncio.create_task(reader(read)) for read in ("rating", "wins", "stats") * 3
            ]
            for _ in range(CYCLES):
                await asyncio.sleep(0.4)
                await asyncio.to_thread(pg.stop, "fast")
                await asyncio.sleep(0.3)
                await asyncio.to_thread(pg.start)
            served_before = outcomes["served"]
            await asyncio.sleep(0.5)
            stop.set()
            await asyncio.gather(*readers)
            return outcomes["served"] - served_before
        finally:
            await archive.close()

    served_after = asyncio.run(body())
    assert others == [], [f"{type(e).__name__}: {e}" for e in others[:3]]
    assert outcomes["unavailable"] > 0, "no reader was running while PostgreSQL was down"
    assert served_after > 0, "the readers were not served again after the last start"


def invalidated_error(invalidated: bool) -> sa_exc.InternalError:
    orig = Exception("cannot switch to state 12; another operation (2) is in progress")
    return sa_exc.InternalError("SELECT 1", {}, orig, connection_invalidated=invalidated)


def test_an_error_on_an_invalidated_connection_is_unavailable() -> None:
    with pytest.raises(StoreUnavailable), translate_errors():
        raise invalidated_error(True)


def test_an_error_on_a_sound_connection_is_not_hidden() -> None:
    """A query the database refuses for its own sake (a defect of ours) stays what it is:
    a 503 would hide it behind retries."""
    with pytest.raises(sa_exc.InternalError), translate_errors():
        raise invalidated_error(False)
