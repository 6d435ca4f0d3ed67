"""`python -m service.cli jobs` run as an operator would (tests/integration/test_jobs_cli.py,
the review test's requeue)."""

from __future__ import annotations

import subprocess
import sys

from tests.servers import ROOT
from tests.support.checkout import bytecode_settings


def cli(where, redis_url: str | None, *args: str) -> subprocess.CompletedProcess:
    """The command in a directory of the test's own (the archive it would open is there)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "TEN_LOG_FORMAT": "text"}
    env.update(bytecode_settings())  # its bytecode where the run's goes, not in the checkout
    env["TEN_DATABASE_URL"] = f"sqlite+aiosqlite:///{where / 'archive.sqlite3'}"
    if redis_url is not None:
        env["TEN_REDIS_URL"] = redis_url
    return subprocess.run(
        [sys.executable, "-m", "service.cli", "jobs", *args],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
