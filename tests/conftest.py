"""Shared fixtures: the real Redis (CI starts it; tests never mock it) and service processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = os.environ.get("TEN_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


@contextmanager
def run_server(env: dict[str, str] | None = None, workers: int = 1) -> Iterator[str]:
    """A real service process (uvicorn) on a free loopback port; yields its base URL."""
    port = free_port()
    proc_env = {k: v for k, v in os.environ.items() if not k.startswith("TEN_")}
    proc_env.update(env or {})
    cmd = [
        sys.executable, "-m", "uvicorn", "service.app:app",
        "--host", "127.0.0.1", "--port", str(port),
        "--workers", str(workers), "--log-level", "warning",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=proc_env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the service exited with {proc.returncode}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not start in 30 s")
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
