"""`python -m service.cli jobs`: the quarantined jobs of a queue listed and put back, on the
service's real Redis (the same settings as the service)."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from infra.queues import RedisQueue
from infra.redis_store import connect
from tests.support.jobs_cli import cli

pytestmark = pytest.mark.integration


def test_quarantined_jobs_are_listed_with_their_reason_and_put_back(redis_url, tmp_path):
    job_id = f"cli-test-{secrets.token_hex(6)}"

    async def quarantine() -> None:
        client = connect(redis_url)
        try:
            queue = RedisQueue(client, "relay")
            await queue.put(job_id, b"", 1.0)
            [job] = [j for j in await queue.claim(1.0, 30.0, 1000) if j.id == job_id]
            assert await queue.quarantine(job_id, job.token, "RuntimeError: a test's poison", 2.0)
        finally:
            await client.aclose()

    async def cleanup() -> None:
        client = connect(redis_url)
        try:
            queue = RedisQueue(client, "relay")
            for part in ("jobs", "token", "fails", "quarantine", "why"):
                await client.hdel(queue.keys[part], job_id)
            await client.zrem(queue.keys["due"], job_id)
        finally:
            await client.aclose()

    asyncio.run(quarantine())
    try:
        listed = cli(tmp_path, redis_url, "list", "relay")
        assert listed.returncode == 0, listed.stderr
        [line] = [row for row in listed.stdout.splitlines() if row.startswith(job_id)]
        assert line.endswith("1 failure(s)\tRuntimeError: a test's poison")
        back = cli(tmp_path, redis_url, "requeue", "relay", job_id)
        assert back.returncode == 0, back.stderr
        assert "1 of 1 job(s) put back in relay" in back.stderr
        again = cli(tmp_path, redis_url, "requeue", "relay", job_id)  # not in quarantine any more
        assert again.returncode == 1
        assert job_id not in cli(tmp_path, redis_url, "list", "relay").stdout
    finally:
        asyncio.run(cleanup())


def test_the_embedded_store_has_nothing_to_reach(tmp_path):
    result = cli(tmp_path, None, "list", "archive")
    assert result.returncode == 2
    assert "TEN_REDIS_URL" in result.stderr
