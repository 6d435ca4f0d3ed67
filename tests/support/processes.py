"""Processes of a test's servers, read from /proc: CPU used, descendants."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command's name (None if it is gone)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()
    return None


def cpu_ticks(pid: int) -> int:
    """User + system CPU of a process, in clock ticks (0 if it is gone)."""
    fields = _stat(pid)
    return 0 if fields is None else int(fields[11]) + int(fields[12])


def cpu_seconds(pid: int) -> float:
    return cpu_ticks(pid) / os.sysconf("SC_CLK_TCK")


def parent(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def running(pid: int) -> bool:
    """Alive, and not a zombie waiting to be reaped."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def descendants(pid: int) -> list[int]:
    """Every process under `pid` (children, theirs, ...)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        # each thread's own children: a process started from a thread other than the main
        # one (the bot pool's workers, say) is listed under that thread alone
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                kids = [int(kid) for kid in children.read_text().split()]
                found += kids
                todo += kids
    return found


def busy_descendant(pid: int, timeout: float = 30.0, sample: float = 0.02) -> int | None:
    """Wait until a process under `pid` uses CPU (e.g. a bot worker computing a step);
    its pid, or None after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = {child: cpu_ticks(child) for child in descendants(pid)}
        time.sleep(sample)
        for child, ticks in before.items():
            if cpu_ticks(child) > ticks:
                return child
    return None
