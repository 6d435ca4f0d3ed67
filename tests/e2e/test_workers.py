"""Several workers on the embedded store are refused at start, with what to do instead.

The embedded game store is one process's memory: with `WORKERS=2` and no `TEN_REDIS_URL`
each uvicorn worker had games of its own, and a new game answered 404 on about every other
request. `scripts/run` refuses before setting anything up (exit 2); the app itself refuses in
each worker, which makes uvicorn stop the whole server (uvicorn's own exit status is then 0).
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.servers import ROOT, free_port

TIMEOUT = 60  # seconds: a refusal, not a server that runs until killed


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEN_", "WEB_CONCURRENCY"))}
    env.update(extra)
    return env


def test_scripts_run_refuses_two_workers_without_redis() -> None:
    done = subprocess.run(
        ["bash", "scripts/run"],
        check=False,
        cwd=ROOT,
        env=environment(WORKERS="2", PORT=str(free_port())),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2, done.stderr
    assert "WORKERS=2 needs TEN_REDIS_URL" in done.stderr
    assert "TEN_REDIS_URL=redis://" in done.stderr  # how to set it
    assert done.stdout == ""  # refused before the set-up ran


def test_the_app_refuses_two_uvicorn_workers_without_redis(tmp_path) -> None:
    port = str(free_port())
    done = subprocess.run(
        [sys.executable, "-m", "uvicorn", "service.app:app", "--port", port, "--workers", "2"],
        check=False,
        cwd=tmp_path,  # the default SQLite archive lands here, not in the repository
        env=environment(PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    output = done.stdout + done.stderr
    assert "ten: refusing to start: TEN_REDIS_URL is not set" in output, output
    assert "with 2 workers" in output
    assert "Set TEN_REDIS_URL" in output
    assert "failed to start, stopping the parent process" in output  # uvicorn stopped it all
