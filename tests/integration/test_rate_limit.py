"""TEN_RATE_LIMIT: 429 problem+json per client past the limit; with Redis the count is shared
by every replica; unset means no limit."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.servers import run_server

pytestmark = pytest.mark.integration


def test_past_the_limit_a_client_gets_429_problem_json(redis_url: str) -> None:
    # a fresh Redis namespace per run: the window of an earlier run must not count
    env = {"TEN_REDIS_URL": redis_url, "TEN_RATE_LIMIT": "5/minute"}
    with run_server(env) as one, run_server(env) as two:
        statuses = [httpx.get(f"{(one, two)[i % 2]}/v1/rules").status_code for i in range(8)]
        blocked = httpx.get(f"{one}/v1/rules?probe={uuid.uuid4().hex}")
        health = httpx.get(f"{two}/health")
    # both replicas count into one window in Redis: 5 allowed in all, not 5 each
    assert statuses.count(200) <= 5
    assert statuses[-1] == 429
    assert blocked.status_code == 429
    assert blocked.headers["content-type"] == "application/problem+json"
    assert blocked.json()["code"] == "rate_limited"
    assert blocked.headers["ratelimit-limit"] == "5"
    assert int(blocked.headers["retry-after"]) > 0
    assert health.status_code == 200  # probes are never limited


def test_without_a_limit_nothing_is_refused(embedded_server_url: str) -> None:
    statuses = {httpx.get(f"{embedded_server_url}/v1/rules").status_code for _ in range(30)}
    assert statuses == {200}
