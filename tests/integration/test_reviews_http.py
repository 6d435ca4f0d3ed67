"""The post-game review over HTTP, on a real service process: Redis and PostgreSQL, and the
embedded default (in-process store, SQLite archive). A finished game's review is 202 with
Retry-After while it is computed, then 200 with exactly the domain's review of the game's
public log, kept in one archive row; a live game's is refused."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from sqlalchemy import select

from domain.bots.review import review
from domain.game.model import AnyEvent
from infra.archive.models import reviews as reviews_table
from infra.queues import RedisQueue
from infra.redis_client import connect
from service.history.reviews import QUEUE, ReviewOut
from tests.support.archive import ArchiveDb, claim_redis_db, pg_database, served_on, servers
from tests.support.jobs_cli import cli

_events = msgspec.json.Decoder(list[AnyEvent])


def public_log(client: httpx.Client, game_id: str) -> list[Any]:
    events: list[Any] = []
    after = 0
    while True:
        page = client.get(f"/v1/games/{game_id}/events", params={"after": after, "limit": 500})
        assert page.status_code == 200, page.text
        body = page.json()
        events.extend(body["events"])
        after = body["last_seq"]
        if not body["more"]:
            return _events.decode(json.dumps(events))


def problem(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


def kept_rows(db: ArchiveDb) -> list[tuple[str, str]]:
    async def body() -> list[tuple[str, str]]:
        async with db.engine.connect() as conn:
            rows = await conn.execute(select(reviews_table.c.game_id, reviews_table.c.review))
            return [tuple(row) for row in rows]

    return db.runner.run(body())


@pytest.mark.parametrize("setup", ["redis+postgresql", "embedded+sqlite"])
def test_a_finished_game_is_reviewed_once_and_a_live_one_refused(
    setup: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with contextlib.ExitStack() as stack:
        client, db = served_on(setup, stack, tmp_path, request)
        bots = [{"name": f"Bot {i}", "bot": "basic"} for i in range(4)]
        created = client.post("/v1/games", json={"players": bots})
        assert created.status_code == 201, created.text
        game_id = created.json()["id"]
        assert created.json()["status"] == "finished"

        first = client.get(f"/v1/games/{game_id}/review")
        assert first.status_code == 202, first.text
        assert first.headers["Retry-After"] == "2"
        assert first.json() == {"game_id": game_id, "status": "pending", "retry_after": 2}
        deadline = time.monotonic() + 30
        while (done := client.get(f"/v1/games/{game_id}/review")).status_code == 202:
            assert time.monotonic() < deadline, "the review did not come within 30 s"
            time.sleep(0.1)
        assert done.status_code == 200, done.text
        found = review(public_log(client, game_id))
        expected = ReviewOut(game_id=game_id, **msgspec.structs.asdict(found))
        assert msgspec.json.decode(done.content, type=ReviewOut) == expected
        assert client.get(f"/v1/games/{game_id}/review").content == done.content
        assert kept_rows(db) == [(game_id, done.text)]

        live = client.post("/v1/games", json={"players": [{"name": "Ann"}, bots[0]]})
        assert live.status_code == 201, live.text
        problem(client.get(f"/v1/games/{live.json()['id']}/review"), 409, "game_not_reviewable")
        problem(client.get(f"/v1/games/{'0' * 20}/review"), 404, "game_not_found")
        problem(client.get("/v1/games/not-an-id!/review"), 404, "game_not_found")
        assert len(kept_rows(db)) == 1


def test_a_review_set_aside_is_500_review_failed_until_the_jobs_cli_requeues_it(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """On Redis: the game's review job set aside in the service's `reviews` queue (as the
    worker does after repeated failures) makes the endpoint answer 500 `review_failed`, in
    the asker's language and without Retry-After; `python -m service.cli jobs requeue
    reviews <id>` puts it back and the review is then computed."""
    with contextlib.ExitStack() as stack:
        url, _ = stack.enter_context(claim_redis_db(request.getfixturevalue("redis_url")))
        db = stack.enter_context(pg_database(migrate=False))
        env = {"TEN_REDIS_URL": url, "TEN_DATABASE_URL": db.url, "TEN_MIGRATE_ON_START": "true"}
        (server,) = stack.enter_context(servers(tmp_path, env))
        client = stack.enter_context(httpx.Client(base_url=server.base, timeout=10))
        bots = [{"name": f"Bot {i}", "bot": "basic"} for i in range(2)]
        created = client.post("/v1/games", json={"players": bots})
        assert created.status_code == 201, created.text
        game_id = created.json()["id"]
        asyncio.run(set_aside(url, game_id))

        for _ in range(2):  # for good: asking again changes nothing
            failed = client.get(f"/v1/games/{game_id}/review", headers={"Accept-Language": "es"})
            problem(failed, 500, "review_failed")
            assert "Retry-After" not in failed.headers
            assert failed.headers["Content-Language"] == "es"
            assert failed.json()["detail"].startswith("No se pudo calcular el análisis")
        listed = cli(tmp_path, url, "list", "reviews")
        assert listed.returncode == 0, listed.stderr
        assert game_id in listed.stdout
        back = cli(tmp_path, url, "requeue", "reviews", game_id)
        assert back.returncode == 0, back.stderr
        deadline = time.monotonic() + 30
        while (done := client.get(f"/v1/games/{game_id}/review")).status_code == 202:
            assert time.monotonic() < deadline, "the review did not come within 30 s"
            time.sleep(0.1)
        assert done.status_code == 200, done.text
        assert kept_rows(db) == [(game_id, done.text)]


async def set_aside(redis_url: str, game_id: str) -> None:
    """Quarantine the game's job in the service's `reviews` queue: put due far ahead (so the
    service's worker cannot claim it first), claimed at that time, and set aside."""
    client = connect(redis_url)
    try:
        queue = RedisQueue(client, QUEUE)
        later = time.time() + 10**6
        assert await queue.put(game_id, b"", later) > 0
        [job] = await queue.claim(later, 30.0, 1)
        assert await queue.quarantine(game_id, job.token, "RuntimeError: the test's", later)
    finally:
        await client.aclose()


def test_past_the_reviews_waiting_in_all_a_new_one_is_429_with_retry_after_and_nothing_queued(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """TEN_REVIEW_QUEUE=2 on Redis, the queues worked by no process (TEN_JOB_WORKERS=false):
    two reviews wait; a third game's is 429 `too_many_reviews` with Retry-After and is not
    queued; asking again for one that waits is still 202."""
    with contextlib.ExitStack() as stack:
        url, _ = stack.enter_context(claim_redis_db(request.getfixturevalue("redis_url")))
        env = {
            "TEN_REDIS_URL": url,
            "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'archive.sqlite3'}",
            "TEN_MIGRATE_ON_START": "true",
            "TEN_JOB_WORKERS": "false",
            "TEN_REVIEW_QUEUE": "2",
            "TEN_MAX_PENDING_REVIEWS": "0",
        }
        (server,) = stack.enter_context(servers(tmp_path, env))
        client = stack.enter_context(httpx.Client(base_url=server.base, timeout=10))
        bots = [{"name": f"Bot {i}", "bot": "basic"} for i in range(2)]
        games = []
        for _ in range(3):
            created = client.post("/v1/games", json={"players": bots})
            assert created.status_code == 201, created.text
            games.append(created.json()["id"])
        for game_id in games[:2]:
            assert client.get(f"/v1/games/{game_id}/review").status_code == 202
        refused = client.get(f"/v1/games/{games[2]}/review")
        problem(refused, 429, "too_many_reviews")
        assert int(refused.headers["Retry-After"]) >= 1
        assert client.get(f"/v1/games/{games[0]}/review").status_code == 202  # waits already
        assert asyncio.run(waiting(url)) == {games[0], games[1]}


async def waiting(redis_url: str) -> set[str]:
    """The games whose review waits in the service's `reviews` queue."""
    client = connect(redis_url)
    try:
        queue = RedisQueue(client, QUEUE)
        return {job.id for job in await queue.claim(time.time() + 10**6, 0.0, 100)}
    finally:
        await client.aclose()


def test_past_a_callers_pending_reviews_its_next_is_429_and_the_platform_is_not_bound(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """TEN_MAX_PENDING_REVIEWS=2 on Redis, the queues worked by no process: an anonymous
    client (its address) waiting for two reviews is refused a third with 429
    `too_many_pending_reviews` and Retry-After (nothing queued); asking again for one of
    its two is still 202; the platform's request for that third game is queued."""
    key = "platform-key-for-the-review-quota"
    with contextlib.ExitStack() as stack:
        url, raw = stack.enter_context(claim_redis_db(request.getfixturevalue("redis_url")))
        for left in raw.scan_iter(match="ten:quota:*"):  # an earlier run's holds
            raw.delete(left)
        env = {
            "TEN_REDIS_URL": url,
            "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'archive.sqlite3'}",
            "TEN_MIGRATE_ON_START": "true",
            "TEN_JOB_WORKERS": "false",
            "TEN_REVIEW_QUEUE": "0",
            "TEN_MAX_PENDING_REVIEWS": "2",
            "TEN_API_KEYS": key,
        }
        (server,) = stack.enter_context(servers(tmp_path, env))
        client = stack.enter_context(httpx.Client(base_url=server.base, timeout=10))
        bots = [{"name": f"Bot {i}", "bot": "basic"} for i in range(2)]
        games = []
        for _ in range(3):
            created = client.post("/v1/games", json={"players": bots}, headers={"X-API-Key": key})
            assert created.status_code == 201, created.text
            games.append(created.json()["id"])
        for game_id in games[:2]:
            assert client.get(f"/v1/games/{game_id}/review").status_code == 202
        refused = client.get(f"/v1/games/{games[2]}/review")
        problem(refused, 429, "too_many_pending_reviews")
        assert int(refused.headers["Retry-After"]) >= 1
        assert client.get(f"/v1/games/{games[1]}/review").status_code == 202  # waits already
        assert asyncio.run(waiting(url)) == {games[0], games[1]}
        platform = client.get(f"/v1/games/{games[2]}/review", headers={"X-API-Key": key})
        assert platform.status_code == 202, platform.text
        assert asyncio.run(waiting(url)) == set(games)
