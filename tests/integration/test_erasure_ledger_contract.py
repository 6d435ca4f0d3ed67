"""The erasure ledger's contract (`service.privacy.ports.Ledger`), run against every store
that keeps a copy: the embedded live store, the live store on real Redis, the archive on
real SQLite and PostgreSQL. Each keeps its ledger (the first entry of a digest wins) and
its applied mark (`applied`, `swap_applied`: a compare-and-set, one winner among writers
that expected the same mark). On a Redis Cluster the live store keeps no mark. And the
archive's pages of player ids, a reconciliation's scan of it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from infra.archive import SqlArchive
from infra.archive.models import ratings
from infra.archive.privacy import SqlPlayerData
from infra.memory_privacy import MemoryLiveData
from infra.memory_store import MemoryGameStore
from infra.redis_client import connect
from infra.redis_privacy import APPLIED, LEDGER, RedisLiveData
from service.history.archiving import archive_game
from service.privacy.ports import Erasure
from service.privacy.pseudonyms import ledger_mark
from tests.support.archive import claim_redis_db
from tests.support.archived_games import DIALECTS, migrated_database
from tests.support.player_data import OTHER, game

KINDS = [
    "memory",
    "redis",
    pytest.param("sqlite", marks=pytest.mark.xdist_group("archive-sqlite")),
    pytest.param("postgresql", marks=pytest.mark.xdist_group("archive-postgresql")),
]
A = Erasure(digest="a" * 64, pseudonym="erased-a", at=10.0)
B = Erasure(digest="b" * 64, pseudonym="erased-b", at=5.0)
C = Erasure(digest="c" * 64, pseudonym="erased-c", at=20.0)


def run(kind: str, request: pytest.FixtureRequest, body: Callable[[Any], Awaitable[None]]) -> None:
    """`body(ledger)` on a fresh store of `kind`, in the event loop that store lives in."""
    if kind == "memory":
        asyncio.run(body(MemoryLiveData(MemoryGameStore(), None, None, None, lambda _: None)))
    elif kind == "redis":
        with claim_redis_db(request.getfixturevalue("redis_url")) as (url, raw):
            raw.delete(LEDGER, APPLIED)  # left by an interrupted run

            async def main() -> None:
                client = connect(url)
                try:
                    await body(RedisLiveData(client, lambda _: None))
                finally:
                    await client.aclose()

            try:
                asyncio.run(main())
            finally:
                raw.delete(LEDGER, APPLIED)
    else:
        with migrated_database(kind) as db:
            db.run(lambda archive: body(SqlPlayerData(archive)))


@pytest.mark.parametrize("kind", KINDS)
def test_the_ledger_keeps_the_first_entry_of_each_digest(
    kind: str, request: pytest.FixtureRequest
) -> None:
    async def body(ledger: Any) -> None:
        assert await ledger.erasures() == []
        await ledger.record_erasures([A, B])
        await ledger.record_erasures([Erasure(digest=A.digest, pseudonym="erased-x", at=1.0), C])
        await ledger.record_erasures([])
        assert await ledger.erasures() == [B, A, C]  # oldest first

    run(kind, request, body)


@pytest.mark.parametrize("kind", KINDS)
def test_the_applied_mark_is_written_only_over_the_one_expected(
    kind: str, request: pytest.FixtureRequest
) -> None:
    first, second = ledger_mark([A.digest]), ledger_mark([A.digest, B.digest])

    async def body(ledger: Any) -> None:
        assert await ledger.applied() is None
        assert not await ledger.swap_applied("pass:other", first)  # there is none
        assert await ledger.applied() is None
        assert await ledger.swap_applied(None, "pass:1")
        assert await ledger.applied() == "pass:1"
        assert not await ledger.swap_applied(None, first)  # there is one now
        assert not await ledger.swap_applied("pass:2", first)
        assert await ledger.swap_applied("pass:1", first)
        assert await ledger.applied() == first
        assert await ledger.swap_applied(first, second)
        assert await ledger.applied() == second
        assert await ledger.erasures() == []  # the mark is not an entry

    run(kind, request, body)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("held", [None, "pass:held"])
def test_of_writers_expecting_the_same_mark_one_wins(
    kind: str, held: str | None, request: pytest.FixtureRequest
) -> None:
    async def body(ledger: Any) -> None:
        if held is not None:
            assert await ledger.swap_applied(None, held)
        tokens = [f"pass:{i}" for i in range(6)]
        won = await asyncio.gather(*(ledger.swap_applied(held, t) for t in tokens))
        assert sum(won) == 1, won
        assert await ledger.applied() == tokens[won.index(True)]

    run(kind, request, body)


def test_the_live_store_on_a_redis_cluster_keeps_no_mark(request: pytest.FixtureRequest) -> None:
    """Each node of a Cluster is restored (or failed over) on its own: no key on one node
    can vouch for the others' keys, so the store reports no mark and writes none (each
    reconciliation scans it). Its ledger is kept as on a standalone Redis."""
    with claim_redis_db(request.getfixturevalue("redis_url")) as (url, raw):
        raw.delete(LEDGER, APPLIED)

        async def main() -> None:
            client = connect(url)
            try:
                live = RedisLiveData(client, lambda _: None, cluster=True)
                assert not await live.swap_applied(None, "pass:1")
                assert await live.applied() is None
                await live.record_erasures([A])
                assert await live.erasures() == [A]
            finally:
                await client.aclose()

        try:
            asyncio.run(main())
            assert raw.get(APPLIED) is None
        finally:
            raw.delete(LEDGER, APPLIED)


@pytest.mark.parametrize("kind", DIALECTS)
def test_the_archive_s_player_ids_come_in_pages_in_byte_order(kind: str) -> None:
    """Every distinct player id of the seats and the ratings, once, in byte order (an
    upper-case letter before every lower-case one), `limit` a page, after the keyset."""
    players = ["a0", "B", "b", "A1", "zz", "m-ß", "m"]

    async def body(archive: SqlArchive) -> None:
        for i, player in enumerate(players):
            record, events = game(i, subject=player)
            assert await archive_game(archive, record, events, record.player_ids)
        async with archive.engine.begin() as conn:  # a rating whose seats are gone
            await conn.execute(ratings.insert().values(
                player_id="C-only", mu=25.0, sigma=8.0, ordinal=1.0, games=1,
                updated_at=datetime(2025, 1, 1, tzinfo=UTC)))  # fmt: skip
        data, pages, after = SqlPlayerData(archive), [], None
        while True:
            page = await data.player_ids_page(after, 2)
            pages.append(page)
            if len(page) < 2:
                break
            after = page[-1]
        expected = sorted({*players, OTHER, "C-only"}, key=str.encode)
        assert [i for page in pages for i in page] == expected
        assert all(len(page) == 2 for page in pages[:-1])
        assert await data.player_ids_page(expected[-1], 2) == []

    with migrated_database(kind) as db:
        db.run(body)
