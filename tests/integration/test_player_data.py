"""A player's data through the real HTTP app, on the embedded store with a SQLite archive
and on Redis with a PostgreSQL archive: the export holds every kind of thing kept and no
secret; the erasure leaves no trace of the player's id or names in any store (every Redis
key and value, every text column of the archive, the queues), the other player's results
and ratings unchanged; a backup of the archive or of the live store taken before the
erasure, or between its ledger write and its application, restored after it, is erased
again by the reconciliation of the ledger, which scans the restored store alone, and scans
nothing once both stores hold the ledger's mark (counted by `Counting` ports)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient
from sqlalchemy import select, text
from sqlalchemy.engine import make_url

from domain.tournaments.rules import Settings as TournamentSettings
from infra.archive import SqlArchive, make_engine
from infra.archive.models import metadata, rating_history, ratings, results
from service.core.model import TournamentRecord
from service.core.ports import TournamentConflict
from service.core.settings import Settings
from service.correspondence.records import Away, PlayerRecord, PushKeys, PushSubscription
from service.entrypoints.api.app import create_app
from service.history.archiving import archive_game
from service.matchmaking.records import PartyMember, PartySeat, TicketConflict, TicketRecord
from service.privacy.ports import Erasure
from service.privacy.pseudonyms import ledger_digest, new_pseudonym
from service.privacy.use_cases import PlayerData
from tests.support.api import bearer
from tests.support.archive import CLAIM_KEY, claim_redis_db
from tests.support.archived_games import migrated_database
from tests.support.cut_exports import check_cut, lose_games, restore_games
from tests.support.platform_server import API_KEY, AUDIENCE, ISSUER, SECRET, player_token
from tests.support.player_data import (
    OTHER,
    SUBJECT,
    SUBJECT_NAME,
    Counting,
    archive_hits,
    first_run,
    game,
    memory_hits,
    redis_hits,
)

PLATFORM = {"X-API-Key": API_KEY}
NEEDLES = (SUBJECT, SUBJECT_NAME)
ARCHIVED = 5
NOW = time.time()
TICKET = "l0123456789abcdef012"
PARTY_SEAT_TOKEN = "g0.1.a-party-seat-token-never-exported"


def settings(redis_url: str | None, database_url: str) -> Settings:
    env = {"TEN_API_KEYS": API_KEY, "TEN_JWT_SECRET": SECRET, "TEN_JWT_ISSUER": ISSUER,
           "TEN_JWT_AUDIENCE": AUDIENCE, "TEN_DATABASE_URL": database_url,
           "TEN_PRIVACY_KEY": "a-privacy-key-for-the-tests", "TEN_ARCHIVE_INTERVAL": "0.05"}  # fmt: skip
    if redis_url is not None:
        env["TEN_REDIS_URL"] = redis_url
    return Settings.from_env(env)


@contextlib.contextmanager
def stack(kind: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any, Any]]:
    """(the archive's Db, the Redis URL or None, a raw Redis client or None)."""
    dialect = "sqlite" if kind == "memory" else "postgresql"
    with migrated_database(dialect) as db, contextlib.ExitStack() as more:
        if kind == "memory":
            yield db, None, None
            return
        url, raw = more.enter_context(claim_redis_db(request.getfixturevalue("redis_url")))
        try:
            yield db, url, raw
        finally:
            left = list(raw.scan_iter(count=1000))
            if left:
                raw.delete(*left)


@contextlib.contextmanager
def seeded(kind: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any, TestClient]]:
    """(the archive's Db, a raw Redis client or None, the app's client): the games archived,
    the app started (its first reconciliation run: nothing to do yet), the live stores
    seeded (`seed_live`)."""
    with stack(kind, request) as (db, redis_url, raw):
        archive_games(db)
        app = create_app(settings(redis_url, db.url), archive=SqlArchive(make_engine(db.url)))
        started = first_run(app.state.player_data)
        with TestClient(app) as client:
            assert started.wait(30)
            seed_live(client)
            yield db, raw, client


def archive_games(db) -> None:
    async def body(archive: SqlArchive) -> None:
        for i in range(ARCHIVED):
            record, events = game(i)
            assert await archive_game(archive, record, events, record.player_ids)
        record, events = game(
            99, subject="third-party", name="Third Party"
        )  # a game without the subject
        assert await archive_game(archive, record, events, record.player_ids)

    db.run(body)


def others(db) -> dict[str, Any]:
    """The other players' results, ratings and rating history, as stored."""

    async def body(archive: SqlArchive) -> dict[str, Any]:
        async with archive.engine.connect() as conn:
            out = {}
            for table in (results, ratings, rating_history):
                rows = await conn.execute(select(table).where(table.c.player_id != SUBJECT))
                kept = [tuple(r) for r in rows if not str(r.player_id).startswith("erased-")]
                out[table.name] = sorted(map(repr, kept))
            return out

    return db.run(body)


def lines(response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text[:500]
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


def seed_live(client: TestClient) -> None:
    """A live game and an ended one not expired yet, the player's push subscription and
    vacation, a webhook message queued about them, their ticket, a tournament they entered
    and organise."""
    data = client.app.state.player_data
    live, events = game(200, finished=False)
    ended, ended_events = game(201)
    portal = client.blocking_portal
    portal.call(data.store.create, live, events, 3600)
    portal.call(data.store.create, ended, ended_events, 3600)
    sub = PushSubscription(id="s1", endpoint="https://push.example/x",
                           keys=PushKeys(p256dh="k", auth="a"), created_at=1.0)  # fmt: skip
    record = PlayerRecord(player_id=SUBJECT, version=1, subscriptions=(sub,), away=(Away(1.0),))
    portal.call(data.players.save_player, record)
    message = json.dumps({"type": "game.finished", "data": {"seats": [
        {"seat": 0, "name": SUBJECT_NAME, "player_id": SUBJECT}]}}).encode()  # fmt: skip
    portal.call(data.live.queue("webhooks").put, "hook-1", message, 1e12)
    tickets = data.tickets
    # a party's ticket, with the seat open mode hands its holder for the party's member
    member = "party-member"
    ticket = TicketRecord(
        id=TICKET, mode="live", rated=True, sizes=(2,), player_id=SUBJECT,
        name=SUBJECT_NAME, created_at=NOW, expires_at=NOW + 600, updated_at=NOW,
        owner=f"player:{SUBJECT}", party=(PartyMember(player_id=member, name="Member"),),
        party_seats=(PartySeat(player_id=member, seat=1, seat_token=PARTY_SEAT_TOKEN),),
    )  # fmt: skip
    assert portal.call(tickets.create_ticket, ticket, NOW) is None
    cup = TournamentRecord(
        id="t" * 20, name="Cup", organiser=f"player:{SUBJECT}", settings=TournamentSettings(),
        places=4, registered=(SUBJECT, OTHER), created_at=NOW, updated_at=NOW, version=1,
    )  # fmt: skip
    assert portal.call(data.tournaments.create_tournament, cup) is None


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_export_then_erasure_leaves_no_trace_and_a_restored_backup_is_erased_again(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    with seeded(kind, request) as (db, raw, client):
        before = others(db)
        backup = take_backup(db, tmp_path)
        check_export(client)
        check_refusals(client)
        held = traces(db, raw, client)  # the searches find the player where they are
        assert {"seats.name", "seats.player_id", "events.data", "ratings.player_id"} <= set(held)
        assert len(held) >= 10, held  # the live stores: games, tickets, the queue...
        erased = client.delete(f"/v1/players/{SUBJECT}/data", headers=PLATFORM)
        assert erased.status_code == 200, erased.text
        pseudonym = erased.json()["pseudonym"]
        assert pseudonym.startswith("erased-")
        again = client.delete(f"/v1/players/{SUBJECT}/data", headers=PLATFORM)
        assert again.json()["pseudonym"] == pseudonym  # idempotent
        assert traces(db, raw, client) == []
        assert others(db) == before
        kept = lines(client.get(f"/v1/players/{pseudonym}/data", headers=PLATFORM))
        assert sum(1 for line in kept if line["kind"] == "archived_game") == ARCHIVED
        portal, (later, live, archived) = client.blocking_portal, reconciler(client)
        assert portal.call(later.reconcile) == 0  # each store scanned once, then marked
        assert scans(live, archived) == (1, 1)
        assert portal.call(later.reconcile) == 0
        assert scans(live, archived) == (1, 1)  # the steady state: nothing scanned
        restore_backup(db, backup)
        assert traces(db, raw) != []  # the backup brought the player back
        assert portal.call(later.reconcile) == 1
        assert scans(live, archived) == (1, 2)  # the archive alone
        assert traces(db, raw, client) == []
        assert others(db) == before
        assert portal.call(later.reconcile) == 0
        assert scans(live, archived) == (1, 2)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_an_export_cut_by_the_database_ends_with_an_incomplete_end(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """The archive's `games` table lost once the export streams (after the `player` line and
    the live games): no traceback, no 500; the lines sent, then an `end` saying the export
    is incomplete, with the problem the failure would have been."""
    with stack(kind, request) as (db, redis_url, _raw):
        archive_games(db)
        app = create_app(settings(redis_url, db.url), archive=SqlArchive(make_engine(db.url)))
        with TestClient(app) as client:
            seed_live(client)
            path = f"/v1/players/{SUBJECT}/data"
            whole = [line["kind"] for line in lines(client.get(path, headers=PLATFORM))]
            db.run(lose_games)
            try:
                response = client.get(path, headers=PLATFORM)
            finally:
                db.run(restore_games)
    got = lines(response)
    assert [line["kind"] for line in got[:-1]] == whole[: whole.index("archived_game")]
    end = got[-1]
    error = end.pop("error")
    assert end == {"kind": "end", "lines": len(got) - 2, "complete": False}
    check_cut(error, db.kind, response.text)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_restored_live_store_is_erased_again_and_a_stale_ticket_save_is_refused(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with seeded(kind, request) as (db, raw, client):
        data, portal = client.app.state.player_data, client.blocking_portal
        backup = take_live_backup(raw, client)  # before the erasure
        held = portal.call(data.tickets.load_ticket, TICKET)  # a matchmaker's copy
        cup = portal.call(data.tournaments.load_tournament, "t" * 20)  # a director's
        erased = client.delete(f"/v1/players/{SUBJECT}/data", headers=PLATFORM)
        assert erased.status_code == 200, erased.text
        stale = msgspec.structs.replace(held, status="expired", version=held.version + 1)
        with pytest.raises(TicketConflict):  # the erasure moved the ticket's version on
            portal.call(data.tickets.save_tickets, [stale])
        with pytest.raises(TournamentConflict):
            portal.call(data.tournaments.save_tournament,
                        msgspec.structs.replace(cup, version=cup.version + 1))  # fmt: skip
        assert traces(db, raw, client) == []
        later, live, archived = reconciler(client)
        assert portal.call(later.reconcile) == 0
        assert portal.call(later.reconcile) == 0
        assert scans(live, archived) == (1, 1)  # once, then nothing
        restore_live_backup(raw, client, backup)
        assert traces(db, raw, client) != []
        assert portal.call(later.reconcile) == 1
        assert scans(live, archived) == (2, 1)  # the live store alone
        assert traces(db, raw, client) == []
        assert portal.call(later.reconcile) == 0
        assert scans(live, archived) == (2, 1)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_backups_taken_between_an_erasures_ledger_write_and_its_application_are_erased_again(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The ledger holds the erasure, the stores the player and the marks of the ledger
    before it: restored after the erasure was applied and marked, the backups are scanned
    (the archive's; Redis's too: both hold the entry) and erased again."""
    with seeded(kind, request) as (db, raw, client):
        data, portal = client.app.state.player_data, client.blocking_portal
        third = client.delete("/v1/players/third-party/data", headers=PLATFORM)
        assert third.status_code == 200, third.text  # an earlier erasure, reconciled
        later, live, archived = reconciler(client)
        assert portal.call(later.reconcile) == 0
        old = portal.call(data.archived.applied)
        assert old is not None
        assert portal.call(data.live.applied) == old
        entry = Erasure(digest=ledger_digest(data.key, SUBJECT), pseudonym=new_pseudonym(),
                        at=time.time())  # fmt: skip
        portal.call(data.live.record_erasures, [entry])  # the ledger written...
        portal.call(data.archived.record_erasures, [entry])
        archive_backup = take_backup(db, tmp_path)  # ...the backups taken...
        live_backup = take_live_backup(raw, client)
        erased = client.delete(f"/v1/players/{SUBJECT}/data", headers=PLATFORM)
        assert erased.json()["pseudonym"] == entry.pseudonym  # ...then the application
        assert traces(db, raw, client) == []
        assert portal.call(later.reconcile) == 0
        assert portal.call(later.reconcile) == 0
        assert scans(live, archived) == (2, 2)  # once after each erasure
        assert portal.call(data.archived.applied) not in (None, old)
        restore_backup(db, archive_backup)
        if raw is not None:  # both from backups that hold the entry
            restore_live_backup(raw, client, live_backup)
        assert portal.call(data.archived.applied) == old
        assert traces(db, raw, client) != []
        assert portal.call(later.reconcile) == 1
        assert scans(live, archived) == (2 + (raw is not None), 3)
        assert traces(db, raw, client) == []
        assert portal.call(later.reconcile) == 0
        assert scans(live, archived) == (2 + (raw is not None), 3)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_an_id_equal_to_an_enum_value_erases_only_that_player(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """A player id `live` (a ticket's mode) or `basic` (a bot level): the other players'
    tickets and queued messages keep their modes and levels; the erasure answers 200."""
    with stack(kind, request) as (db, redis_url, _raw):
        app = create_app(settings(redis_url, db.url), archive=SqlArchive(make_engine(db.url)))
        with TestClient(app) as client:
            seed_live(client)  # SUBJECT's ticket: mode "live", bot "basic"
            data, portal = client.app.state.player_data, client.blocking_portal
            ticket = portal.call(data.tickets.load_ticket, TICKET)
            hook = json.dumps({"type": "seat_taken_over", "data": {"game_id": "g", "seat": 1,
                "player_id": OTHER, "bot": "basic", "reason": "timeouts"}}).encode()  # fmt: skip
            queue = data.live.queue("webhooks")
            portal.call(queue.put, "hook-2", hook, 1e12)
            for player_id in ("live", "basic", "timeouts"):
                erased = client.delete(f"/v1/players/{player_id}/data", headers=PLATFORM)
                assert erased.status_code == 200, erased.text
            assert portal.call(data.tickets.load_ticket, TICKET) == ticket
            claimed = portal.call(queue.claim, 1e12 + 1, 60.0, 10)
            assert hook in [job.payload for job in claimed]


def check_export(client: TestClient) -> None:
    got = lines(client.get(f"/v1/players/{SUBJECT}/data", headers=PLATFORM))
    kinds = [line["kind"] for line in got]
    assert kinds[0] == "player"
    assert kinds[-1] == "end"
    assert got[-1] == {"kind": "end", "lines": len(got) - 2, "complete": True}
    assert kinds.count("archived_game") == ARCHIVED
    # both games the live store holds, the ended one too (the erasure's set: `games_of`)
    assert sorted(line["status"] for line in got if line["kind"] == "live_game") == [
        "active", "finished"]  # fmt: skip
    for kind in (
        "rating",
        "rating_change",
        "push_subscription",
        "vacation",
        "ticket",
        "tournament",
    ):
        assert kind in kinds, kind
    assert kinds.count("rating_change") == ARCHIVED
    for line in got:
        if line["kind"] == "archived_game":  # its whole log, in order, as archived
            seqs = [event["seq"] for event in line["events"]]
            assert seqs == list(range(1, line["event_count"] + 1))
            assert line["events"][0]["type"] == "game_started"
            assert line["seats"][0]["player_id"] == SUBJECT
    body = json.dumps(got)
    assert PARTY_SEAT_TOKEN not in body  # a seat's token is no data of a player's
    (ticket,) = [line for line in got if line["kind"] == "ticket"]
    assert ticket["party_seats"] == [{"player_id": "party-member", "seat": 1}]
    assert '"draw_pile"' not in body
    assert '"seed"' not in body
    assert '"deck"' not in body
    mine = lines(client.get(f"/v1/players/{SUBJECT}/data",
                            headers=bearer(player_token(SUBJECT))))  # fmt: skip
    assert [line["kind"] for line in mine] == kinds
    nobody = lines(client.get("/v1/players/nobody-at-all/data", headers=PLATFORM))
    assert [line["kind"] for line in nobody] == ["player", "end"]


def check_refusals(client: TestClient) -> None:
    for method in ("GET", "DELETE"):
        path = f"/v1/players/{SUBJECT}/data"
        other = client.request(method, path, headers=bearer(player_token(OTHER)))
        assert other.status_code == 403, other.text
        assert other.headers["content-type"].startswith("application/problem+json")
        assert other.json()["code"] == "player_id_not_yours"
        anonymous = client.request(method, path)
        assert anonymous.status_code == 401, anonymous.text
        assert anonymous.json()["code"] == "authentication_required"
        too_long = client.request(method, f"/v1/players/{'x' * 101}/data", headers=PLATFORM)
        assert too_long.status_code == 400, too_long.text
        assert too_long.headers["content-type"].startswith("application/problem+json")


def traces(db, raw, client: TestClient | None = None) -> list[str]:
    """Where the player's id or names are still found: the archive, and Redis or the
    embedded stores."""
    found = db.run(lambda archive: archive_hits(archive.engine, NEEDLES))
    if raw is not None:
        found += redis_hits(raw, NEEDLES)
    elif client is not None:
        found += memory_hits(client.app.state.player_data.live, NEEDLES)
    return found


def take_backup(db, tmp_path: Path) -> Any:
    """SQLite: a copy of the file (VACUUM INTO: whole, whatever its WAL holds); PostgreSQL:
    every table copied into a schema of its own."""
    if db.kind == "sqlite":
        copy = tmp_path / "backup.sqlite3"
        sqlite_copy(make_url(db.url).database, copy)
        return copy

    async def body(archive: SqlArchive) -> Any:
        async with archive.engine.connect() as conn:
            await conn.execute(text("CREATE SCHEMA backup"))
            for table in metadata.sorted_tables:
                await conn.execute(
                    text(f'CREATE TABLE backup."{table.name}" AS TABLE "{table.name}"')
                )
            await conn.commit()
            return "backup"

    return db.run(body)


def restore_backup(db, backup: Any) -> None:
    """The archive as the backup has it (the live store is left as it is)."""
    if db.kind == "sqlite":
        sqlite_copy(backup, make_url(db.url).database)
        return

    async def body(archive: SqlArchive) -> None:
        names = [t.name for t in reversed(metadata.sorted_tables)]
        async with archive.engine.connect() as conn:
            for name in names:
                await conn.execute(text(f'DELETE FROM "{name}"'))
            for name in reversed(names):
                await conn.execute(text(f'INSERT INTO "{name}" SELECT * FROM backup."{name}"'))
            await conn.commit()

    db.run(body)


def sqlite_copy(source: Any, target: Any) -> None:
    """One SQLite file copied onto another whole (SQLite's online backup: its WAL included)."""
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def reconciler(client: TestClient) -> tuple[PlayerData, Counting, Counting]:
    """A reconciliation over the app's stores, run as if twice its settle time later (every
    erasure so far settled: vouched for), whose candidate scans are counted: the live
    store's (`player_ids`) and the archive's pages of ids (`player_ids_page`)."""
    data = client.app.state.player_data
    live = Counting(data.live, "player_ids")
    archived = Counting(data.archived, "player_ids_page")
    later = PlayerData(
        data.store, live, data.archive, archived, data.tournaments, data.players,
        data.tickets, key=data.key, retry=data.retry,
        clock=lambda: time.time() + 2 * data.settle,
    )  # fmt: skip
    return later, live, archived


def scans(live: Counting, archived: Counting) -> tuple[int, int]:
    return live.calls["player_ids"], archived.calls["player_ids_page"]


def take_live_backup(raw, client: TestClient) -> Any:
    """Redis: every key dumped with its expiry (an RDB's worth); the embedded store, whose
    memory no backup restores, its applied mark alone."""
    if raw is None:
        return client.blocking_portal.call(client.app.state.player_data.live.applied)
    keys = [k for k in raw.scan_iter(count=1000) if k != CLAIM_KEY.encode()]
    return [(key, raw.pttl(key), raw.dump(key)) for key in keys]


def restore_live_backup(raw, client: TestClient, backup: Any) -> None:
    """Redis: every key as the backup has it, the others gone (the ledger and the mark
    too). The embedded store: the player's record, and a ticket put back
    (what a restore of the stores would bring back), and the mark as it was."""
    if raw is not None:
        for key in raw.scan_iter(count=1000):
            if key != CLAIM_KEY.encode():
                raw.delete(key)
        for key, ttl, dumped in backup:
            if dumped is not None:
                raw.restore(key, max(ttl, 0), dumped, replace=True)
        return
    data, portal = client.app.state.player_data, client.blocking_portal
    sub = PushSubscription(id="s1", endpoint="https://push.example/x",
                           keys=PushKeys(p256dh="k", auth="a"), created_at=1.0)  # fmt: skip
    portal.call(data.players.save_player, PlayerRecord(
        player_id=SUBJECT, version=1, subscriptions=(sub,), away=(Away(1.0),)))  # fmt: skip
    ticket = TicketRecord(
        id="c0123456789abcdef012", mode="correspondence", rated=True, sizes=(2,),
        player_id=SUBJECT, name=SUBJECT_NAME, created_at=NOW, expires_at=NOW + 600,
        updated_at=NOW, owner=f"player:{SUBJECT}",
    )  # fmt: skip
    assert portal.call(data.tickets.create_ticket, ticket, NOW) is None
    data.live._applied = backup
