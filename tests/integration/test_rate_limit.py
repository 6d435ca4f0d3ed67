"""TEN_RATE_LIMIT: 429 problem+json per caller past the limit; with Redis the count is shared
by every replica, in one atomic step; only exact routes are exempt; unset means no limit."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import jwt
import pytest

from infra.rate_limit_store import MemoryRateCounter
from tests.servers import run_server
from tests.support.archive import claim_redis_db

SECRET = "a-test-secret-of-at-least-thirty-two-bytes"
API_KEY = "platform-key-for-the-rate-limit-test"


ISSUER, AUDIENCE = "https://platform.example", "ten"


def player_token(sub: str, secret: str = SECRET) -> str:
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": time.time() + 600}
    return jwt.encode(claims, secret, algorithm="HS256")


@contextlib.contextmanager
def own_window(redis_url: str) -> Iterator[str]:
    """A Redis database of this test alone, without an earlier test's windows. The tests
    limit by the day: a window starts at a client's first request, so none ends while a
    test runs, however slow the machine."""
    with claim_redis_db(redis_url) as (url, client):
        for key in client.scan_iter(match="ten-rate:*"):
            client.delete(key)
        yield url


def test_past_the_limit_a_client_gets_429_problem_json(redis_url: str) -> None:
    with own_window(redis_url) as url:  # a window of its own: no earlier run counts
        env = {"TEN_REDIS_URL": url, "TEN_RATE_LIMIT": "5/day"}
        with run_server(env) as one, run_server(env) as two:
            statuses = [httpx.get(f"{(one, two)[i % 2]}/v1/rules").status_code for i in range(8)]
            blocked = httpx.get(f"{one}/v1/rules")
            health = httpx.get(f"{two}/health")
    # both replicas count into one window in Redis: 5 allowed in all, not 5 each
    assert statuses == [200] * 5 + [429] * 3
    assert blocked.status_code == 429
    assert blocked.headers["content-type"] == "application/problem+json"
    assert blocked.json()["code"] == "rate_limited"
    assert blocked.headers["ratelimit-limit"] == "5"
    assert blocked.headers["ratelimit-remaining"] == "0"
    assert 0 < int(blocked.headers["retry-after"]) <= 86400
    assert health.status_code == 200  # probes are never limited


def test_two_replicas_let_through_exactly_the_limit_under_concurrent_load(redis_url: str) -> None:
    """400 requests at once from 16 threads, spread over two replicas on one Redis, against
    60/day: exactly 60 succeed (a GET then a SET let 87-116 through). A day's window (it starts
    at a client's first request): a minute's let 120 through when a loaded machine took longer
    than a minute over the 400."""
    with own_window(redis_url) as url:
        env = {"TEN_REDIS_URL": url, "TEN_RATE_LIMIT": "60/day"}
        with run_server(env) as one, run_server(env) as two:
            bases = (one, two)

            def call(i: int) -> int:
                return httpx.get(f"{bases[i % 2]}/v1/rules", timeout=30).status_code

            with ThreadPoolExecutor(16) as pool:
                statuses = list(pool.map(call, range(400)))
    assert Counter(statuses) == {200: 60, 429: 340}


def test_only_exact_routes_are_exempt(redis_url: str) -> None:
    with own_window(redis_url) as url:
        env = {"TEN_REDIS_URL": url, "TEN_RATE_LIMIT": "3/day"}
        with run_server(env) as base:
            tricks = [
                "/v1/players/static/stats",
                "/v1/players/health/stats",
                "/v1/players/metrics/ratings",
                "/v1/archive/games?player_id=schema",
            ]
            counted = [httpx.get(f"{base}{path}").status_code for path in tricks]
            exempt = [
                httpx.get(f"{base}{path}").status_code
                for path in (
                    "/health",
                    "/ready",
                    "/metrics",
                    "/schema/openapi.json",
                    "/static/app/index.html",
                )
            ]
    assert counted[:3] != [429] * 3
    assert counted[3] == 429  # the fourth counted request of the window
    assert 429 not in exempt, exempt


def test_each_caller_has_its_own_count(redis_url: str) -> None:
    """The platform (its API key) and each player (their JWT's sub) count apart from the
    anonymous callers of the same address; a bearer that does not verify counts by address."""
    with own_window(redis_url) as url:
        env = {
            "TEN_REDIS_URL": url,
            "TEN_RATE_LIMIT": "2/day",
            "TEN_API_KEYS": API_KEY,
            "TEN_JWT_SECRET": SECRET,
            "TEN_JWT_ISSUER": ISSUER,
            "TEN_JWT_AUDIENCE": AUDIENCE,
        }
        with run_server(env) as base:

            def rules(headers: dict[str, str]) -> int:
                return httpx.get(f"{base}/v1/rules", headers=headers).status_code

            anonymous = [rules({}) for _ in range(3)]
            forged = rules({"Authorization": f"Bearer {player_token('p-ann', 'wrong' * 8)}"})
            platform = [rules({"X-API-Key": API_KEY}) for _ in range(3)]
            ann = [rules({"Authorization": f"Bearer {player_token('p-ann')}"}) for _ in range(3)]
            bob = [rules({"Authorization": f"Bearer {player_token('p-bob')}"}) for _ in range(2)]
    assert anonymous == [200, 200, 429]
    assert forged == 429  # counted with the address's anonymous requests
    assert platform == [200, 200, 429]
    assert ann == [200, 200, 429]
    assert bob == [200, 200]


def test_without_a_limit_nothing_is_refused(embedded_server_url: str) -> None:
    statuses = {httpx.get(f"{embedded_server_url}/v1/rules").status_code for _ in range(30)}
    assert statuses == {200}


def test_the_embedded_counter_counts_a_window_then_starts_again() -> None:
    now = [100.0]
    counter = MemoryRateCounter(clock=lambda: now[0], max_keys=2)

    async def hits() -> list[tuple[int, float]]:
        seen = [await counter.hit("a", 60) for _ in range(3)]
        now[0] += 30
        seen.append(await counter.hit("a", 60))
        seen.append(await counter.hit("b", 60))
        now[0] += 31  # a's window is over
        seen.append(await counter.hit("a", 60))
        seen.append(await counter.hit("c", 60))  # past max_keys: ended windows dropped
        return seen

    seen = asyncio.run(hits())
    assert [count for count, _ in seen] == [1, 2, 3, 4, 1, 1, 1]
    assert seen[3][1] == pytest.approx(30)
    assert seen[5][1] == pytest.approx(60)
