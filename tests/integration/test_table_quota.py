"""TEN_MAX_OPEN_TABLES over HTTP, on the embedded store and on Redis (two replicas): past the
quota a caller's create is 429 problem+json with Retry-After and creates nothing; another
caller is unaffected and their tables stay in the public listing; a table started or
cancelled frees its slot; concurrent creates never overshoot."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import jwt
import pytest

from tests.servers import run_server
from tests.support.api import bearer, check_problem
from tests.support.archive import claim_redis_db

SECRET = "a-test-secret-of-at-least-thirty-two-bytes"
ISSUER, AUDIENCE = "https://platform.example", "ten"
API_KEY = "platform-key-for-the-quota-test"
TABLE = {"players": [{"name": "Ann"}, {"open": True}]}
IDLE_TTL = 5000


def player_token(sub: str) -> str:
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": time.time() + 600}
    return jwt.encode(claims, SECRET, algorithm="HS256")


@contextlib.contextmanager
def servers(kind: str, redis_url: str, **env: str) -> Iterator[tuple[str, str]]:
    """Two replicas on one Redis, or one embedded server (named twice)."""
    env = {"TEN_MAX_OPEN_TABLES": "3", "TEN_IDLE_TTL": str(IDLE_TTL), **env}
    if kind == "embedded":
        with run_server(env) as base:
            yield base, base
        return
    # a Redis database of this test alone: the public listing holds no other test's tables
    with claim_redis_db(redis_url) as (url, client):
        # an earlier run's tables of this address (127.0.0.1) count no more
        for key in client.scan_iter(match="ten:index:*"):
            client.delete(key)
        env["TEN_REDIS_URL"] = url
        with run_server(env) as one, run_server(env) as two:
            yield one, two


def listed(base: str) -> set[str]:
    return {g["id"] for g in httpx.get(f"{base}/v1/games?limit=50").json()["games"]}


@pytest.mark.parametrize("kind", ["embedded", "redis"])
def test_past_the_quota_an_anonymous_client_gets_429_and_its_slots_free_as_tables_leave(
    kind: str, redis_url: str
) -> None:
    with servers(kind, redis_url) as (one, two):
        made = [httpx.post(f"{(one, two)[i % 2]}/v1/games", json=TABLE) for i in range(3)]
        assert [r.status_code for r in made] == [201] * 3
        tables = [r.json() for r in made]
        before = listed(one)
        refused = httpx.post(f"{two}/v1/games", json=TABLE)
        check_problem(refused, 429, "too_many_open_tables")
        assert refused.headers["content-type"] == "application/problem+json"
        assert IDLE_TTL - 60 < int(refused.headers["retry-after"]) <= IDLE_TTL
        assert listed(one) == before  # nothing created
        assert {t["id"] for t in tables} <= before
        dealt = httpx.post(f"{one}/v1/games", json={"players": [{"name": "A"}, {"bot": "basic"}]})
        assert dealt.status_code == 201  # dealt at once: not an open table, not counted
        first, second = tables[0], tables[1]
        cancel = httpx.post(
            f"{one}/v1/games/{first['id']}/cancel", headers=bearer(first["host_token"])
        )
        assert cancel.status_code == 200, cancel.text
        again = httpx.post(f"{two}/v1/games", json=TABLE)
        assert again.status_code == 201
        check_problem(httpx.post(f"{one}/v1/games", json=TABLE), 429, "too_many_open_tables")
        start = httpx.post(
            f"{two}/v1/games/{second['id']}/start", headers=bearer(second["host_token"])
        )
        assert start.status_code == 200, start.text
        assert httpx.post(f"{one}/v1/games", json=TABLE).status_code == 201


@pytest.mark.parametrize("kind", ["embedded", "redis"])
def test_concurrent_creates_of_one_player_never_overshoot_and_others_stay_listed(
    kind: str, redis_url: str
) -> None:
    """Forty creates at once by one player over both replicas, quota 3: exactly three
    tables; another player's table is created and listed; the platform has no quota."""
    env = {"TEN_JWT_SECRET": SECRET, "TEN_JWT_ISSUER": ISSUER, "TEN_JWT_AUDIENCE": AUDIENCE}
    with servers(kind, redis_url, TEN_API_KEYS=API_KEY, **env) as (one, two):
        sub = f"p-flood-{time.time_ns()}"
        flood = bearer(player_token(sub))

        def create(i: int) -> int:
            response = httpx.post(f"{(one, two)[i % 2]}/v1/games", json=TABLE, headers=flood)
            assert response.status_code in (201, 429), response.text
            return response.status_code

        with ThreadPoolExecutor(16) as pool:
            statuses = Counter(pool.map(create, range(40)))
        assert statuses == {201: 3, 429: 37}
        other = httpx.post(
            f"{one}/v1/games", json=TABLE, headers=bearer(player_token(f"p-other-{sub}"))
        )
        assert other.status_code == 201
        assert other.json()["id"] in listed(two)
        platform = [
            httpx.post(f"{two}/v1/games", json=TABLE, headers={"X-API-Key": API_KEY})
            for _ in range(4)
        ]
        assert [r.status_code for r in platform] == [201] * 4
