"""A player's data through the real HTTP app, on the embedded store with a SQLite archive
and on Redis with a PostgreSQL archive: the export holds every kind of thing kept and no
secret; the erasure leaves no trace of the player's id or names in any store (every Redis
key and value, every text column of the archive, the queues), the other player's results
and ratings unchanged; a backup of the archive taken before the erasure, restored after it,
is erased again by the reconciliation of the ledger."""

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
from tests.support.api import bearer
from tests.support.archive import claim_redis_db
from tests.support.archived_games import migrated_database
from tests.support.platform_server import API_KEY, AUDIENCE, ISSUER, SECRET, player_token
from tests.support.player_data import (
    OTHER,
    SUBJECT,
    SUBJECT_NAME,
    archive_hits,
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
    with stack(kind, request) as (db, redis_url, raw):
        archive_games(db)
        before = others(db)
        backup = take_backup(db, tmp_path)
        app = create_app(settings(redis_url, db.url), archive=SqlArchive(make_engine(db.url)))
        with TestClient(app) as client:
            seed_live(client)
            check_export(client)
            check_refusals(client)
            held = traces(db, raw, client)  # the searches find the player where they are
            assert {"seats.name", "seats.player_id", "events.data", "ratings.player_id"} <= set(
                held
            )
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
            restore_backup(db, backup)
            assert traces(db, raw) != []  # the backup brought the player back
            found = client.blocking_portal.call(client.app.state.player_data.reconcile)
            assert found == 1
            assert traces(db, raw, client) == []
            assert others(db) == before


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_restored_live_store_is_erased_again_and_a_stale_ticket_save_is_refused(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with stack(kind, request) as (db, redis_url, raw):
        archive_games(db)
        app = create_app(settings(redis_url, db.url), archive=SqlArchive(make_engine(db.url)))
        with TestClient(app) as client:
            seed_live(client)
            data, portal = client.app.state.player_data, client.blocking_portal
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
            # a restore of the live store alone, without the games: the player's record, a
            # ticket and a queued message come back
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
            assert traces(db, raw, client) != []
            assert portal.call(data.reconcile) == 1
            assert traces(db, raw, client) == []


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
    assert got[-1]["lines"] == len(got) - 2
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
