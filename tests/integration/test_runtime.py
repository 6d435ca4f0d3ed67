"""The serving process's garbage-collector tuning (`infra.runtime`, `TEN_GC_THRESHOLD`).

Each case runs in its own Python process: the collector's settings belong to the process, and
the test runner's own must stay as they are. The process builds the app, starts it (the
startup hooks run) and reports CPython's generation-0 threshold and how many objects it froze.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import pytest

from infra import runtime
from service.core.settings import Settings
from tests.servers import ROOT

REPORT = textwrap.dedent(
    """
    import gc, sys
    from litestar.testing import TestClient

    if sys.argv[1] == "entry":  # the app uvicorn serves: service.app:app
        from service.app import app
    else:
        from service.entrypoints.api.app import create_app
        from service.core.settings import (
            ArchiveSettings,
            ObservabilitySettings,
            RuntimeSettings,
            Settings,
        )

        app = create_app(
            Settings(
                archive=ArchiveSettings(database_url=sys.argv[2]),
                runtime=RuntimeSettings(gc_threshold=int(sys.argv[3])),
                observability=ObservabilitySettings(log_format="text"),
            ),
            serving=sys.argv[1] == "serving",
        )
    before = gc.get_threshold()[0]
    with TestClient(app) as client:
        assert client.get("/health").status_code == 200
        print("GC", before, gc.get_threshold()[0], gc.get_freeze_count())
    """
)


def run_app(tmp_path, mode: str, threshold: int = 0, env: dict[str, str] | None = None):
    url = f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", REPORT, mode, url, str(threshold)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "TEN_DATABASE_URL": url, **(env or {})},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("GC "))
    before, after, frozen = (int(x) for x in line.split()[1:])
    return before, after, frozen


def test_the_serving_app_tunes_the_collector_once_started(tmp_path) -> None:
    before, after, frozen = run_app(tmp_path, "serving", 12345)
    assert before == gc.get_threshold()[0] != 12345  # Python's own until the app starts
    assert after == 12345
    assert frozen > 10_000  # the imported framework and the built app, at least


def test_an_app_built_by_a_test_leaves_the_process_alone(tmp_path) -> None:
    before, after, frozen = run_app(tmp_path, "test", 12345)
    assert after == before
    assert frozen == 0


def test_threshold_zero_turns_the_tuning_off(tmp_path) -> None:
    before, after, frozen = run_app(tmp_path, "serving", 0)
    assert after == before
    assert frozen == 0


def test_the_uvicorn_entry_point_reads_TEN_GC_THRESHOLD(tmp_path) -> None:
    _, after, frozen = run_app(tmp_path, "entry", env={"TEN_GC_THRESHOLD": "23456"})
    assert after == 23456
    assert frozen > 10_000
    _, default_after, _ = run_app(tmp_path, "entry", env={"TEN_GC_THRESHOLD": ""})
    assert default_after == Settings().runtime.gc_threshold == 10_000


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_a_bad_threshold_is_refused_at_start(value: str) -> None:
    with pytest.raises(ValueError, match="TEN_GC_THRESHOLD must be a whole number"):
        Settings.from_env({"TEN_GC_THRESHOLD": value})


def test_threshold_settings_are_read() -> None:
    assert Settings.from_env({"TEN_GC_THRESHOLD": "0"}).runtime.gc_threshold == 0
    assert Settings.from_env({"TEN_GC_THRESHOLD": " 50000 "}).runtime.gc_threshold == 50_000
    assert Settings.from_env({}).runtime.gc_threshold == 10_000


@pytest.mark.parametrize(
    ("argv", "environ", "workers"),
    [
        (["/venv/bin/uvicorn", "service.app:app", "--workers", "2"], {}, 2),
        (["/x/uvicorn/__main__.py", "service.app:app", "--workers=3"], {}, 3),
        (["/venv/bin/uvicorn", "service.app:app"], {"WEB_CONCURRENCY": "4"}, 4),
        (["/venv/bin/uvicorn", "service.app:app", "--workers", "1"], {"WEB_CONCURRENCY": "4"}, 1),
        (["/venv/bin/uvicorn", "service.app:app"], {}, 1),
        (["/venv/bin/pytest", "--workers", "2"], {}, 1),  # not uvicorn's command line
        ([], {"WEB_CONCURRENCY": "2"}, 1),
    ],
)
def test_uvicorn_workers_are_read_from_its_command_line(argv, environ, workers) -> None:
    assert runtime.uvicorn_workers(argv, environ) == workers


def test_one_worker_or_redis_is_not_refused(monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/venv/bin/uvicorn", "service.app:app", "--workers", "2"])
    runtime.refuse_several_embedded_workers("redis://127.0.0.1:6379/0")  # shared: fine
    with pytest.raises(SystemExit) as refused:
        runtime.refuse_several_embedded_workers(None)
    assert refused.value.code == runtime.STARTUP_FAILURE
    monkeypatch.setattr(sys, "argv", ["/venv/bin/uvicorn", "service.app:app"])
    runtime.refuse_several_embedded_workers(None)  # one worker: fine
