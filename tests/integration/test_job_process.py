"""The queues' workers in a process of their own (`python -m service.cli work`,
`service.bootstrap.work_jobs`): a serving app started with TEN_JOB_WORKERS=false queues an ended
game and never archives it; the job workers archive it; on the embedded store the switch
is refused (nobody else could reach its queues)."""

from __future__ import annotations

import asyncio
import time

import pytest
from litestar.testing import TestClient

from service.bootstrap import work_jobs
from service.core.settings import ArchiveSettings, RedisSettings, RuntimeSettings, Settings
from service.entrypoints.api.app import create_app
from tests.support.archive import claim_redis_db

FOUR_RANDOM = {"players": [{"name": f"R{i}", "bot": "random"} for i in range(4)]}


def test_a_serving_process_without_job_workers_queues_the_game_and_the_workers_archive_it(
    redis_url, tmp_path
) -> None:
    # a Redis database of the test's own: on the shared one, another test's service could
    # claim this game's archive job (and archive it into its own archive)
    with claim_redis_db(redis_url) as (own_url, _raw):
        redis_url = own_url
        database = f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3"
        settings = Settings(
            redis=RedisSettings(url=redis_url),
            archive=ArchiveSettings(database_url=database, migrate_on_start=True, interval=0.05),
            runtime=RuntimeSettings(job_workers=False),
        )
        with TestClient(create_app(settings)) as client:
            created = client.post("/v1/games", json=FOUR_RANDOM)
            assert created.status_code == 201, created.text
            game_id = created.json()["id"]
            assert created.json()["status"] == "finished"
            time.sleep(0.5)  # ten looks at the queue, had this process an archiver
            assert client.get(f"/v1/archive/games/{game_id}").status_code == 404

            async def work_until_archived() -> int:
                stop = asyncio.Event()
                worker = asyncio.create_task(work_jobs(settings, stop))
                try:
                    deadline = time.monotonic() + 30
                    while time.monotonic() < deadline:
                        status = await asyncio.to_thread(
                            lambda: client.get(f"/v1/archive/games/{game_id}").status_code
                        )
                        if status != 404:
                            return status
                        await asyncio.sleep(0.05)
                    return 404
                finally:
                    stop.set()
                    await worker

            assert asyncio.run(work_until_archived()) == 200


def test_without_redis_the_serving_process_keeps_its_job_workers(tmp_path) -> None:
    settings = Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/a.sqlite3"),
        runtime=RuntimeSettings(job_workers=False),
    )
    with pytest.raises(ValueError, match="TEN_REDIS_URL"):
        create_app(settings)
