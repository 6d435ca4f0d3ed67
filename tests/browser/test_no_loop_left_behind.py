"""Playwright's sync API leaves its event loop marked running in the main thread while it is
started, so `asyncio.run` fails beside it: the browser tier stops it when its last test is
done (package scope). Checked in a pytest of its own: a browser test, then a test that calls
`asyncio.run`, in one process, in that order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.browser.web import BROWSER_GROUP, ROOT

pytestmark = BROWSER_GROUP

AFTER = """
import asyncio


def test_asyncio_runs_after_the_browser_tests() -> None:
    async def answer() -> int:
        return 42

    assert asyncio.run(answer()) == 42
"""


def test_asyncio_run_works_after_the_browser_tier(tmp_path: Path) -> None:
    after = tmp_path / "test_after_the_browser_tier.py"  # outside the package
    after.write_text(AFTER)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
         "tests/browser/test_axe_helper.py", str(after)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout, run.stdout[-2000:]
