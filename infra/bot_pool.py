"""The worker processes that compute bot steps (`service.bot_work`), TEN_BOT_WORKERS of them
per serving process.

A `concurrent.futures.ProcessPoolExecutor` started through a fork server (the serving
process has threads and an event loop: forking it is unsafe), which preloads the engine
and the bots; each worker lowers its own scheduling priority (SCHED_IDLE, else nice 10), so
on a busy machine the serving processes answer first and the bots wait, and exits when the
serving process is gone (then the fork server does too). One pool per serving
process, shared by every app it builds (tests build many), made on the first bot step.
When a worker dies, its pool is broken for good (every pending step fails with
BrokenProcessPool): the next step makes a new pool.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any

NICE = 10
PRELOAD = ["domain.clock", "domain.simulation", "domain.expert", "domain.master", "domain.odds"]


def _worker_start(serving: int) -> None:
    """In each worker, first: the lowest scheduling class Linux has (SCHED_IDLE: a core only
    when no other process wants it; else nice 10), and a watch on the serving process."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(NICE)
    threading.Thread(target=_exit_with, args=(serving,), daemon=True).start()


def _exit_with(serving: int) -> None:
    """Exit once the serving process is gone (SIGKILLed, say). Without this the worker
    waits for work for good: the queues it reads are held open by the other workers and
    the fork server, and the fork server waits for its workers (every worker holds the
    pipe whose closing tells it its parent died): both left behind with their memory."""
    try:
        watch = os.pidfd_open(serving)
    except ProcessLookupError:
        os._exit(0)
    except (AttributeError, OSError):  # no pidfd (Linux < 5.3): look every second
        while True:
            time.sleep(1.0)
            try:
                os.kill(serving, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:
                pass
    select.select([watch], [], [])
    os._exit(0)


class BotPool(Executor):
    """An Executor over a process pool that is made again once a worker died."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _current(self) -> ProcessPoolExecutor:
        with self._lock:
            pool = self._pool
            if pool is None or pool._broken:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(PRELOAD)
                pool = ProcessPoolExecutor(
                    self.workers,
                    mp_context=context,
                    initializer=_worker_start,
                    initargs=(os.getpid(),),
                )
                self._pool = pool
            return pool

    def submit(self, fn, /, *args: Any, **kwargs: Any) -> Future:
        return self._current().submit(fn, *args, **kwargs)

    def pids(self) -> list[int]:
        """The worker processes' ids (those started so far)."""
        pool = self._pool
        return [] if pool is None else list(pool._processes or {})

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)
                self._pool = None


_pools: dict[int, BotPool] = {}
_pools_lock = threading.Lock()


def bot_pool(workers: int) -> BotPool:
    """This process's pool of `workers` processes (made once, started on first use)."""
    with _pools_lock:
        if workers not in _pools:
            _pools[workers] = BotPool(workers)
        return _pools[workers]
