"""`bash scripts/run` as the README runs it, and raw-socket clients that send a request as slowly
(or as large) as a hostile client would, for the tests and benchmarks of slow clients.

`scripts_run` runs the real script from a copy of `scripts/` in a temporary directory: its
set-up step is a no-op there (the checkout's `.venv` is ready, and is never reinstalled), its
`.venv/bin/uvicorn` is the checkout's, the code comes from the checkout (PYTHONPATH) and the
working directory (where the embedded default's SQLite archive lands) is the copy. What runs
is the script's own `exec` line with its own defaults.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.servers import ROOT, free_port

START_TIMEOUT = 30.0


@contextmanager
def scripts_run(
    tmp_path: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen, str]]:
    """`bash scripts/run` on a free loopback port, `TEN_*`/`UVICORN_*` from `env` only;
    yields the process (the script execs uvicorn: the same process) and its base URL."""
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    (copy / "scripts/setup").write_text("#!/usr/bin/env bash\n# the checkout's venv is ready\n")
    (copy / ".venv/bin").mkdir(parents=True)
    (copy / ".venv/bin/uvicorn").symlink_to(Path(sys.executable).parent / "uvicorn")
    port = free_port()
    proc_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEN_", "UVICORN_", "WEB_", "PROMETHEUS", "WORKERS"))
    }
    proc_env.update(HOST="127.0.0.1", PORT=str(port), PYTHONPATH=str(ROOT), **(env or {}))
    log_path = tmp_path / "scripts-run.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            ["bash", "scripts/run"], cwd=copy, env=proc_env, start_new_session=True,
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    proc.log_path = log_path  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"scripts/run exited with {proc.returncode}: {log_text(proc)}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise AssertionError(f"scripts/run: no /health in {START_TIMEOUT:g} s")
            time.sleep(0.05)
        yield proc, base
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def log_text(proc: subprocess.Popen) -> str:
    return proc.log_path.read_text(errors="replace")[-3000:]  # type: ignore[attr-defined]


def connect(base: str, timeout: float = 10) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


def send_until_answered(sock: socket.socket, data: bytes, piece: int = 16384) -> bytes:
    """Send `data` a piece at a time, stopping as soon as the server answers (or closes);
    then read to the end. What the server answered (b"" if it closed without a word)."""
    for start in range(0, len(data), piece):
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            break
        try:
            sock.sendall(data[start : start + piece])
        except (BrokenPipeError, ConnectionResetError):
            break
    return read_until_closed(sock)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset ends it too)."""
    answer = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return answer
        if not chunk:
            return answer
        answer += chunk


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def head_and_body(answer: bytes) -> tuple[bytes, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.lower(), body


class Trickle:
    """`count` connections that each sent `head` and then send `drip` every `every` seconds
    (from a thread of their own), as slow clients do; `close` ends them. A connection the
    server closes is dropped from the drip, counted in `closed`, and what it was answered
    kept in `answers` (b"" for nothing)."""

    def __init__(self, base: str, count: int, head: bytes, drip: bytes, every: float = 0.5):
        self.socks: list[socket.socket] = []
        self.drip, self.every = drip, every
        self.closed = 0
        self.answers: list[bytes] = []
        self.received: dict[socket.socket, bytes] = {}
        self.stopping = threading.Event()
        for _ in range(count):
            sock = connect(base)
            sock.sendall(head)
            self.socks.append(sock)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def first_answers(self, timeout: float = 30) -> list[bytes]:
        """Each connection's first bytes from the server (b"" if it closed without any), read
        before the drip starts (so only what the head alone was answered)."""
        answers: dict[socket.socket, bytes] = {}
        deadline = time.monotonic() + timeout
        while len(answers) < len(self.socks):
            waiting = [s for s in self.socks if s not in answers]
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{len(waiting)} connections not answered in {timeout:g} s")
            readable, _, _ = select.select(waiting, [], [], left)
            for sock in readable:
                try:
                    answers[sock] = sock.recv(4096)
                except ConnectionResetError:
                    answers[sock] = b""
        return [answers[sock] for sock in self.socks]

    def start(self) -> Trickle:
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stopping.wait(self.every):
            if self.socks:
                readable, _, _ = select.select(self.socks, [], [], 0)
                for sock in readable:
                    self._read(sock)
            for sock in list(self.socks):
                try:
                    sock.sendall(self.drip)
                except OSError:
                    self._read(sock)

    def _read(self, sock: socket.socket) -> None:
        try:
            chunk = sock.recv(65536)
        except OSError:
            chunk = b""
        if chunk:
            self.received[sock] = self.received.get(sock, b"") + chunk
            return
        self.socks.remove(sock)
        sock.close()
        self.answers.append(self.received.pop(sock, b""))
        self.closed += 1

    def close(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join()
        for sock in self.socks:
            sock.close()
