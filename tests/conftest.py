"""Shared fixtures: the real Redis (CI starts it; tests never mock it) and service processes.

Nothing a run writes lands in the checkout: service processes run in temporary directories
of their own (tests/servers.py); apps built in the test process (`Settings()`, no
`database_url`) archive into a SQLite file in a temporary directory of that process
(`TEN_DATABASE_URL`, which service processes never inherit), not `./ten-archive.sqlite3`;
Hypothesis keeps its examples and caches outside the checkout (its home directory);
pytest's cache is off (pyproject); and the session fails if the checkout shows anything new
or changed at its end (tests/support/checkout.py says what is left out).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from tests.servers import ROOT, RedisClusterNodes, run_server
from tests.support.checkout import changes, outside, snapshot
from tests.support.tiers import mark_tiers

REDIS_URL = os.environ.get("TEN_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
_OWN = "TEN_TEST_OWN_ARCHIVE_URL"  # what this conftest set TEN_DATABASE_URL to

set_hypothesis_home_dir(outside("hypothesis"))  # its example database and caches
# unset, or inherited from the xdist controller (`_OWN`): an archive of this process's own
if os.environ.get("TEN_DATABASE_URL", "") in ("", os.environ.get(_OWN)):
    _ARCHIVE_DIR = Path(tempfile.mkdtemp(prefix="ten-test-archive-"))
    atexit.register(shutil.rmtree, _ARCHIVE_DIR, ignore_errors=True)
    _archive = f"sqlite+aiosqlite:///{_ARCHIVE_DIR / 'archive.sqlite3'}"
    os.environ["TEN_DATABASE_URL"] = os.environ[_OWN] = _archive

_CHECKOUT = pytest.StashKey[dict]()


@pytest.fixture(scope="session", autouse=True)
def own_archive_replays() -> Iterator[None]:
    """At the end, every game this process's own archive got (apps built in the test process
    without a `database_url`) replays from its record (tests/support/replayed.py)."""
    yield
    own = os.environ.get(_OWN)
    if "_ARCHIVE_DIR" in globals() and own and (_ARCHIVE_DIR / "archive.sqlite3").exists():
        from tests.support.replayed import replay_archive  # SQLAlchemy, only if needed

        replay_archive(own)


def _controller(session: pytest.Session) -> bool:
    return not hasattr(session.config, "workerinput")  # xdist workers share the controller's run


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session):
        session.stash[_CHECKOUT] = snapshot(ROOT, tracked=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _controller(session) or _CHECKOUT not in session.stash:
        return
    written = changes(session.stash[_CHECKOUT], snapshot(ROOT, tracked=False))
    if written:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the test run wrote into the checkout:\n  " + "\n  ".join(written)
        if reporter is not None:
            reporter.write_sep("=", "checkout changed", red=True)
            reporter.write_line(message)
        else:
            print(message)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test carries its tier's marker, named after its folder (tests/support/tiers.py)."""
    wrong = mark_tiers(items)
    if wrong:
        raise pytest.UsageError("tests outside the tiers' rule:\n  " + "\n  ".join(wrong))


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The real Redis server. Its absence is a failure, not a skip: CI starts it."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.fail(f"Redis is not reachable at {REDIS_URL} ({exc}); start it (see .ci/run)")
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture(scope="session")
def redis_server_url(redis_url: str) -> Iterator[str]:
    """One service process on the real Redis, shared by the e2e tests of a worker."""
    with run_server({"TEN_REDIS_URL": redis_url}) as base:
        yield base


@pytest.fixture(scope="session")
def embedded_server_url() -> Iterator[str]:
    """One service process on the embedded default (no configuration at all)."""
    with run_server({}) as base:
        yield base


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterNodes]:
    """A 3-node Redis Cluster of this session's worker (its users are in the xdist group
    `redis-cluster`, so one worker starts it)."""
    cluster = RedisClusterNodes()
    try:
        yield cluster
    finally:
        cluster.close()
