"""`python -m service.cli jobs`: the quarantined jobs of a queue listed and put back, on the
service's real Redis (the same settings as the service)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Iterator

import pytest

from infra.queues import RedisQueue
from infra.redis_client import connect
from service.bootstrap import Instruments, build_adapters, game_service
from service.core.settings import ArchiveSettings, ObservabilitySettings, Settings, WebhookSettings
from tests.support.archive import claim_redis_db
from tests.support.jobs_cli import cli


@pytest.fixture
def own_db(redis_url: str) -> Iterator[str]:
    """A Redis database of this test alone: on the shared one, a service process of another
    test works the same queues, and its worker claimed a job between this test's claim and
    its quarantine (the quarantine then found another lease's token)."""
    with claim_redis_db(redis_url) as (url, _):
        yield url


@contextlib.contextmanager
def a_quarantined_job(redis_url: str, name: str, reason: str) -> Iterator[str]:
    """A job of the test's own set aside in the queue `name` on Redis, removed afterwards."""
    job_id = f"cli-test-{secrets.token_hex(6)}"

    async def quarantine() -> None:
        client = connect(redis_url)
        try:
            queue = RedisQueue(client, name)
            await queue.put(job_id, b"", 1.0)
            [job] = [j for j in await queue.claim(1.0, 30.0, 1000) if j.id == job_id]
            assert await queue.quarantine(job_id, job.token, reason, 2.0)
        finally:
            await client.aclose()

    async def cleanup() -> None:
        client = connect(redis_url)
        try:
            queue = RedisQueue(client, name)
            for part in ("jobs", "token", "fails", "quarantine", "why"):
                await client.hdel(queue.keys[part], job_id)
            await client.zrem(queue.keys["due"], job_id)
        finally:
            await client.aclose()

    asyncio.run(quarantine())
    try:
        yield job_id
    finally:
        asyncio.run(cleanup())


def test_quarantined_jobs_are_listed_with_their_reason_and_put_back(own_db, tmp_path):
    redis_url = own_db
    with a_quarantined_job(redis_url, "relay", "RuntimeError: a test's poison") as job_id:
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


def test_the_embedded_store_has_nothing_to_reach(tmp_path):
    result = cli(tmp_path, None, "list", "archive")
    assert result.returncode == 2
    assert "TEN_REDIS_URL" in result.stderr


def test_every_queue_of_the_service_can_be_listed_and_requeued(own_db, tmp_path):
    """Each queue the service makes (its composition asked for every one), the tournaments'
    director's included: its quarantined job listed, then put back."""
    redis_url = own_db
    made = queues_the_service_makes(tmp_path)
    assert {"archive", "relay", "webhooks", "reviews", "tournaments"} <= made
    for name in sorted(made):
        with a_quarantined_job(redis_url, name, "RuntimeError: set aside") as job_id:
            listed = cli(tmp_path, redis_url, "list", name)
            assert listed.returncode == 0, listed.stderr
            assert any(row.startswith(job_id) for row in listed.stdout.splitlines())
            back = cli(tmp_path, redis_url, "requeue", name, job_id)
            assert back.returncode == 0, back.stderr
            assert f"1 of 1 job(s) put back in {name}" in back.stderr


def queues_the_service_makes(tmp_path) -> set[str]:
    """The names of the queues the service's composition makes (webhooks on: all of them)."""
    settings = Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'made.sqlite3'}"),
        webhooks=WebhookSettings(urls=("http://127.0.0.1:9/hook",), secret="s" * 32),
        observability=ObservabilitySettings(metrics=False),
    )
    adapters = build_adapters(settings)
    asked: set[str] = set()

    def queue(name: str):
        asked.add(name)
        return adapters.queue(name)

    game_service(settings, adapters._replace(queue=queue), Instruments(settings, "memory", None))
    with pytest.raises(ValueError, match=r"service\.jobs\.worker\.QUEUES"):
        adapters.queue("a-queue-nobody-named")  # none made that the command cannot reach
    asyncio.run(adapters.close())
    return asked
