"""Tuning of the serving process itself (not of the app): CPython's cyclic garbage collector.

Under load a serving process holds more short-lived containers at once than CPython's
generation-0 threshold, so the collector ran every few requests and often walked the whole
heap (the imported framework, the cache of recent games). `tune_gc` moves everything alive
once the app has started (modules, routes, the OpenAPI document) into the permanent
generation, which full collections no longer walk (`gc.freeze`), and raises the
generation-0 threshold, so almost all garbage is freed by reference counting before the
collector runs. Cyclic garbage still gets collected, only later (the measurements:
docs/design-notes.md).

`refuse_several_embedded_workers`: the embedded game store is one process's memory, so
several uvicorn workers without `TEN_REDIS_URL` would each have games of their own.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping, Sequence

DEFAULT_GC_THRESHOLD = 10_000


def tune_gc(threshold: int = DEFAULT_GC_THRESHOLD) -> None:
    """Freeze what is alive now and set the generation-0 threshold; 0 leaves Python's defaults."""
    if threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(threshold, gen1, gen2)


# uvicorn stops all its workers, not only this one, when a worker exits with this code (its
# STARTUP_FAILURE: "the app is broken, a restart would fail the same way")
STARTUP_FAILURE = 3


def embedded_store_refusal(workers: int) -> str:
    return (
        f"TEN_REDIS_URL is not set, so every process keeps its games in its own memory: with "
        f"{workers} workers a game created by one is unknown to the others (404 on about every "
        "other request). Set TEN_REDIS_URL (e.g. TEN_REDIS_URL=redis://127.0.0.1:6379/0) to "
        "share the games between workers, or run one worker."
    )


def uvicorn_workers(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> int:
    """The worker processes asked of the uvicorn command line this process runs under
    (`--workers N`, else uvicorn's `WEB_CONCURRENCY`; a worker sees its parent's command
    line); 1 for a process not started by uvicorn's command line."""
    argv = sys.argv if argv is None else argv
    env = os.environ if environ is None else environ
    if not argv or "uvicorn" not in argv[0]:
        return 1
    value = env.get("WEB_CONCURRENCY", "1")
    for i, arg in enumerate(argv):
        if arg == "--workers" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--workers="):
            value = arg.partition("=")[2]
    return int(value) if value.strip().isdigit() else 1


def refuse_several_embedded_workers(redis_url: str | None) -> None:
    """Exit (uvicorn then stops every worker) when several uvicorn workers would each keep
    their own games: the embedded store is one process's memory."""
    workers = uvicorn_workers()
    if redis_url is None and workers > 1:
        print(f"ten: refusing to start: {embedded_store_refusal(workers)}", file=sys.stderr)
        sys.exit(STARTUP_FAILURE)
