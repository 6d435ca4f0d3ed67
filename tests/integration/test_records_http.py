"""Game records over HTTP on a real archive, PostgreSQL and SQLite: one game's record, the
bulk export (NDJSON, keyset pages, filters, who may call it, bad filters) and the schema
route; every exported record replays (`service.history.records.check_record`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
import msgspec
import pytest
from litestar.testing import TestClient

from infra.archive import SqlArchive, make_engine
from service.core.settings import ArchiveSettings, IdentitySettings, Settings
from service.entrypoints.api.app import create_app
from service.entrypoints.record_check import check_one
from service.history.archiving import archive_game
from service.history.reads import History
from service.history.records import RecordContext, RecordTournament, schema
from tests.support.archived_games import DIALECTS, Db, migrated_database
from tests.support.cut_exports import check_cut, lose_games, restore_games
from tests.support.ended_games import BASE, Played, aborted_game, dataset

API_KEY = "platform-key-for-the-records-0123"
SECRET = "jwt-secret-for-the-records-tests-0123456789"
PLATFORM = {"X-API-Key": API_KEY}
NDJSON = "application/x-ndjson"


def player(sub: str) -> dict[str, str]:
    claims = {"sub": sub, "iss": "platform", "aud": "ten", "exp": int(time.time()) + 3600}
    return {"Authorization": f"Bearer {jwt.encode(claims, SECRET, algorithm='HS256')}"}


def played() -> list[Played]:
    return [*dataset()[:24], aborted_game(7)]


@pytest.fixture(scope="module", params=DIALECTS)
def filled(request: pytest.FixtureRequest) -> Iterator[Db]:
    with migrated_database(request.param) as db:

        async def fill(archive: SqlArchive) -> None:
            for p in played():
                assert await archive_game(archive, p.record, p.stored, p.player_ids)

        db.run(fill)
        yield db


@pytest.fixture(scope="module")
def client(filled: Db) -> Iterator[TestClient]:
    settings = Settings(
        archive=ArchiveSettings(database_url=filled.url, migrate_on_start=False),
        identity=IdentitySettings(
            api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer="platform", jwt_audience="ten"
        ),
    )
    with TestClient(create_app(settings)) as client:
        yield client


def in_order(games: list[Played]) -> list[str]:
    """Oldest first by end, then id: the export's order."""
    return [p.id for p in sorted(games, key=lambda p: (p.finished_at, p.id))]


def lines(response: Any) -> list[dict[str, Any]]:
    """The records of a whole export: the lines before its complete trailer, which counts
    them."""
    assert response.status_code == 200, response.text[:500]
    assert response.headers["content-type"].startswith(NDJSON)
    assert response.content.endswith(b"\n")
    *records, end = [msgspec.json.decode(line) for line in response.content.splitlines()]
    assert end == {"type": "end", "count": len(records), "complete": True}
    return records


def problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


def test_the_export_holds_every_game_in_order_and_each_record_replays(client: TestClient) -> None:
    response = client.get("/v1/archive/export", headers=PLATFORM)
    records = lines(response)
    assert [r["id"] for r in records] == in_order(played())
    for line in response.content.splitlines()[:-1]:
        assert check_one(line) is None
    statuses = {r["status"] for r in records}
    assert statuses == {"finished", "aborted"}


def test_one_record_is_the_exported_line(client: TestClient) -> None:
    exported = {r["id"]: r for r in lines(client.get("/v1/archive/export", headers=PLATFORM))}
    for p in played()[::6]:
        response = client.get(f"/v1/archive/games/{p.id}/record")
        assert response.status_code == 200
        assert check_one(response.content) is None
        record = response.json()
        assert record == exported[p.id]
        assert record["fairness"]["seed"] == p.record.state.seed
        fair = json.loads(p.stored[0].data).get("fairness")  # game_started's
        assert record["fairness"]["verifiable"] is (fair is not None)
        assert record["fairness"]["commitment"] == (fair and fair["commitment"])
        assert record["seats"][0]["player_id"] == p.player_ids[0]
    problem(client.get("/v1/archive/games/0123456789/record"), 404, "archived_game_not_found")


@pytest.mark.parametrize("who", ["ann", "Zed"])
def test_export_by_player_and_time(client: TestClient, who: str) -> None:
    games = played()
    theirs = [p for p in games if who in p.player_ids]
    by_player = lines(client.get("/v1/archive/export", params={"player_id": who}, headers=PLATFORM))
    assert [r["id"] for r in by_player] == in_order(theirs)
    since, until = BASE + timedelta(hours=2), BASE + timedelta(hours=5)
    window = {"since": since.isoformat(), "until": until.isoformat().replace("+00:00", "Z")}
    timed = lines(client.get("/v1/archive/export", params=window, headers=PLATFORM))
    assert [r["id"] for r in timed] == in_order(
        [p for p in games if since <= p.finished_at < until]
    )
    both = lines(
        client.get("/v1/archive/export", params={**window, "player_id": who}, headers=PLATFORM)
    )
    assert [r["id"] for r in both] == in_order(
        [p for p in theirs if since <= p.finished_at < until]
    )


def test_a_player_exports_their_own_games_only(client: TestClient) -> None:
    own = lines(
        client.get("/v1/archive/export", params={"player_id": "bob"}, headers=player("bob"))
    )
    assert [r["id"] for r in own] == in_order([p for p in played() if "bob" in p.player_ids])
    refused = client.get("/v1/archive/export", params={"player_id": "ann"}, headers=player("bob"))
    problem(refused, 403, "platform_only")
    problem(client.get("/v1/archive/export", headers=player("bob")), 403, "platform_only")
    problem(client.get("/v1/archive/export"), 401, "authentication_required")


@pytest.mark.parametrize(
    "params",
    [
        {"since": "yesterday"},
        {"until": "2026-02-30T00:00:00Z"},
        {"player_id": "no spaces"},
        {"player_id": ""},
    ],
)
def test_bad_filters_are_problems(client: TestClient, params: dict[str, str]) -> None:
    response = client.get("/v1/archive/export", params=params, headers=PLATFORM)
    assert response.status_code == 400, response.text[:300]
    assert response.headers["content-type"].startswith("application/problem+json")


def test_an_unknown_tournament_is_a_problem(client: TestClient) -> None:
    response = client.get("/v1/archive/export", params={"tournament_id": "nope"}, headers=PLATFORM)
    problem(response, 404, "tournament_not_found")


def test_the_schema_route_serves_the_committed_schema(client: TestClient) -> None:
    response = client.get("/v1/schemas/game-record")
    assert response.status_code == 200
    assert response.json() == msgspec.json.decode(msgspec.json.encode(schema()))


def test_keyset_pages_cover_every_game_once_with_the_context_given(filled: Db) -> None:
    """Pages smaller than a run of games ending at one instant (three share each end here):
    every game once, in order; a game given a context carries it, the others none."""
    games = played()
    chosen = {p.id for p in games[::4]}
    table = RecordContext(
        tournament=RecordTournament(id="t1", round=1, table=0), clock={"type": "bank"}
    )

    async def export(archive: SqlArchive, contexts: Any) -> list[list[bytes]]:
        chunks = History(archive).export(contexts=contexts, page=2)
        return [chunk.splitlines() async for chunk in chunks]

    pages = filled.run(lambda archive: export(archive, None))
    assert all(len(page) <= 2 for page in pages)
    ids = [msgspec.json.decode(line)["id"] for page in pages for line in page]
    assert ids == in_order(games)
    pages = filled.run(lambda archive: export(archive, dict.fromkeys(chosen, table)))
    records = [msgspec.json.decode(line) for page in pages for line in page]
    assert [r["id"] for r in records] == in_order([p for p in games if p.id in chosen])
    assert {(r["tournament"]["id"], r["clock"]["type"]) for r in records} == {("t1", "bank")}


def test_an_empty_window_exports_nothing(client: TestClient) -> None:
    later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    response = client.get("/v1/archive/export", params={"since": later}, headers=PLATFORM)
    assert response.status_code == 200
    assert response.content == b'{"type":"end","count":0,"complete":true}\n'


class CutAfterFirstPage:
    """The archive on `db`, whose bulk export loses the `games` table after its first page:
    the next page's query fails in the database itself (the table is put back afterwards).
    Every other read is the archive's own."""

    def __init__(self, db: Db) -> None:
        self.archive = SqlArchive(make_engine(db.url))
        self.pages = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.archive, name)

    async def export_page(self, which: Any, after: Any, limit: int) -> Any:
        self.pages += 1
        if self.pages == 2:
            await lose_games(self.archive)
        return await self.archive.export_page(which, after, limit)


def test_an_export_cut_by_the_database_ends_with_an_incomplete_trailer(filled: Db) -> None:
    """A failure once the records stream: no traceback, no 500; the lines sent, then a
    trailer saying the export is incomplete, with the problem the failure would have been."""
    cut = CutAfterFirstPage(filled)
    settings = Settings(
        archive=ArchiveSettings(database_url=filled.url, migrate_on_start=False),
        identity=IdentitySettings(api_keys=(API_KEY,)),
    )
    try:
        with TestClient(create_app(settings, archive=cut)) as client:  # type: ignore[arg-type]
            response = client.get("/v1/archive/export", headers=PLATFORM)
    finally:
        if cut.pages >= 2:
            filled.runner.run(restore_games(cut.archive))
        filled.runner.run(cut.archive.close())
    assert response.status_code == 200
    *records, end = [msgspec.json.decode(line) for line in response.content.splitlines()]
    assert [r["id"] for r in records] == in_order(played())  # the first page: every game
    error = end.pop("error")
    assert end == {"type": "end", "count": len(records), "complete": False}
    check_cut(error, filled.kind, response.text)
