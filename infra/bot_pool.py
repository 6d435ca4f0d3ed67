"""The worker processes that compute bot steps (`service.games.bot_work`), TEN_BOT_WORKERS of them
per serving process.

Each worker is a `multiprocessing` process started through a fork server (the serving
process has threads and an event loop: forking it is unsafe), which preloads the engine
and the bots; its own life is `infra.bot_worker`'s. One pool per serving process,
shared by every app it builds (tests build many), its workers started on the first step.
Work no game waits for (post-game reviews) has a pool of its own, its background lane
(`bot_pool(1, "background")`, started on its first step): a live game's step never waits
behind a review in a worker's pipe or in the line.

The hop is lean: a step goes to an idle worker down its own pipe (the function and its
arguments pickled, one write), and its reply is read by the caller's event loop
(`loop.add_reader` on the worker's reply pipe, non-blocking reads until the whole message
is in), so no thread of the serving process wakes for it
(`concurrent.futures.ProcessPoolExecutor` cost the serving process far more CPU per step,
in its feeder and manager threads). A busy worker holds the next step in its pipe
(`depth`: it starts it the moment it is done, whatever the serving process's loop is
doing); steps past that wait in the order they came (`service.games.bot_work` bounds how
many) and go as replies free places.

A worker that dies (SIGKILL, OOM) ends its pipe: the step it was computing fails with
`BrokenProcessPool` (`service.games.bot_work` answers 503 bots_busy; nothing was saved), the
steps behind it in its pipe go to a new worker (a step is a pure function of what it is
sent: computing it again is safe). A step whose caller gave up (a cancelled request) while
it is computed takes its worker with it (killed: what it computes is wanted by nobody;
the steps behind it go to a new one); given up in the pipe, it is computed and its reply
dropped.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import multiprocessing
import os
import pickle
import select
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from infra.bot_worker import Step, Worker, outcome

PRELOAD = [
    "domain.bots.clock",
    "domain.bots.simulation",
    "domain.bots.expert",
    "domain.bots.master",
    "domain.bots.odds",
]
BIG = 32_768  # a request this large is written from a thread (a pipe holds 64 KiB)
T = TypeVar("T")


class BotPool:
    """`workers` worker processes, each on a pipe: `call` from an event loop, `submit` from
    any thread (a concurrent Future, for a thread that waits for it).

    A worker computing a step of `call` already holds the next one in its pipe (up to
    `depth` steps sent ahead, in order): it never idles while the serving process's loop,
    busy with other requests, gets round to reading a reply and sending what comes next."""

    def __init__(self, workers: int, *, depth: int = 2, background: bool = False) -> None:
        self.workers = workers
        self.depth = depth
        self.background = background  # its workers' priority: see `bot_worker._worker_start`
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(PRELOAD)
        self._live: list[Worker] = []  # started and not dead nor closed
        self._starting = 0  # workers being started
        self._waiting: collections.deque[Step] = collections.deque()  # `call`'s
        self._blocked: collections.deque[Future[Worker]] = collections.deque()  # a thread's
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ workers

    def start(self) -> None:
        """Start the workers not started yet (at startup: a fork server takes a while)."""
        while True:
            with self._lock:
                if len(self._live) + self._starting >= self.workers:
                    return
                self._starting += 1
            self._started()

    def _started(self) -> Worker:
        """A new worker, live (`_starting` counted it), handed what waits for one."""
        try:
            worker = Worker(self._context, os.getpid(), self.background)
        except BaseException:
            with self._lock:
                self._starting -= 1
            raise
        with self._lock:
            self._starting -= 1
            self._live.append(worker)
        self._dispatch()
        return worker

    def _free(self, loop: asyncio.AbstractEventLoop | None) -> Worker | None:
        """Under the lock: an idle worker, else (for a step of `loop`) the least busy one
        of that loop that can take a step more in its pipe; None if none."""
        best = None
        for worker in self._live:
            if worker.held:
                continue
            if not worker.steps:
                return worker
            ahead = loop is not None and worker.loop is loop and len(worker.steps) < self.depth
            if ahead and (best is None or len(worker.steps) < len(best.steps)):
                best = worker
        return best

    def _grow(self) -> bool:
        """Under the lock: whether a worker more may be started (it is then counted)."""
        if len(self._live) + self._starting < self.workers:
            self._starting += 1
            return True
        return False

    def _dispatch(self) -> None:
        """Hand the workers that can take a step to what waits: first a thread's
        `call_blocking` (an idle worker, whole), then the steps of `call` in order."""
        while True:
            with self._lock:
                if self._blocked:
                    worker = self._free(None)
                    if worker is None:
                        return
                    worker.held = True
                    handed = self._blocked.popleft()
                    step = None
                else:
                    while self._waiting and self._waiting[0].gone:
                        self._waiting.popleft()  # given up while it waited
                    if not self._waiting:
                        return
                    worker = self._free(self._waiting[0].loop)
                    if worker is None:
                        return
                    step = self._waiting.popleft()
                    worker.loop = step.loop
                    worker.steps.append(step)
                    worker.unsent.append(step)
            if step is None:
                handed.set_result(worker)
            else:
                self._post(worker)

    def _post(self, worker: Worker) -> None:
        """Write `worker`'s unsent steps from the thread of their loop."""
        loop = worker.loop
        assert loop is not None
        try:
            here = asyncio.get_running_loop() is loop
        except RuntimeError:  # no loop runs in this thread
            here = False
        if here:
            self._flush(worker)
            return
        try:
            loop.call_soon_threadsafe(self._flush, worker)
        except RuntimeError:  # the loop closed: its steps are nobody's
            self._lost(worker, kill=True)

    def _flush(self, worker: Worker) -> None:
        """Write `worker`'s unsent steps down its pipe, in order (a large one from a
        thread, a full pipe would block the loop: the next ones after it), and read its
        replies on this loop."""
        if worker not in self._live:  # lost meanwhile (its steps were sent elsewhere)
            return
        loop = asyncio.get_running_loop()
        if not worker.reading:
            worker.reading = True
            loop.add_reader(worker.reader.fd, self._readable, worker)
        try:
            while worker.unsent and not worker.sending:
                step = worker.unsent.popleft()
                if len(step.request) > BIG:
                    worker.sending = True
                    sent = loop.run_in_executor(None, worker.send, step.request)
                    sent.add_done_callback(lambda f: self._unsent(worker, f))
                else:
                    worker.send(step.request)
        except OSError as exc:
            self._died(worker, exc)

    def _unsent(self, worker: Worker, sent: asyncio.Future[None]) -> None:
        worker.sending = False
        exc = None if sent.cancelled() else sent.exception()
        if exc is not None:
            self._died(worker, exc)
            return
        self._flush(worker)

    def _readable(self, worker: Worker) -> None:
        """The worker's reply pipe can be read: each whole reply answers the step at the
        head of its pipe, and the place it frees goes to the next waiting step at once."""
        try:
            while (message := worker.reader.read()) is not None:
                with self._lock:
                    step = worker.steps.popleft() if worker.steps else None
                if step is not None and not step.reply.done():
                    step.reply.set_result(message)
        except (EOFError, OSError) as exc:
            self._died(worker, exc)
            return
        if not worker.steps:
            self._quiet(worker)
        self._dispatch()

    def _quiet(self, worker: Worker) -> None:
        """No step on `worker` (or it is gone): its replies are no longer read, and a step
        of another loop may come next. On the thread of its loop."""
        with self._lock:
            if worker.steps and worker in self._live:
                return  # a step came meanwhile
            loop, worker.loop = worker.loop, None
            reading, worker.reading = worker.reading, False
        if reading and loop is not None:
            with contextlib.suppress(RuntimeError):  # that loop closed: nothing to remove
                loop.remove_reader(worker.reader.fd)

    def _died(self, worker: Worker, exc: BaseException) -> None:
        """The worker died (or its pipe broke): the step it was computing fails with it; the
        steps behind it in its pipe, which it never started, are sent again (a step is a
        pure function of what it is sent)."""
        steps = self._taken(worker)
        self._drop(worker)
        if steps and not steps[0].reply.done():
            steps[0].reply.set_exception(exc)
        self._again(steps[1:])

    def _again(self, steps: list[Step]) -> None:
        """Steps of a worker lost before it started them: first in line again."""
        with self._lock:
            self._waiting.extendleft(reversed([s for s in steps if not s.gone]))
            grow = self._grow() if self._waiting or self._blocked else False
        if grow:
            self._started()
        else:
            self._dispatch()

    def _drop(self, worker: Worker, *, kill: bool = False) -> None:
        with self._lock:
            if worker in self._live:
                self._live.remove(worker)
        self._quiet(worker)
        worker.close(kill=kill)

    def _lost(self, worker: Worker, *, kill: bool = False) -> None:
        """A worker given up (closed, its steps sent again) or dead: what waits gets a new one."""
        steps = self._taken(worker)
        self._drop(worker, kill=kill)
        self._again(steps)

    def _taken(self, worker: Worker) -> list[Step]:
        """The steps given to `worker`, taken off it (it is being dropped)."""
        with self._lock:
            steps = list(worker.steps)
            worker.steps.clear()
            worker.unsent.clear()
        return steps

    # ------------------------------------------------------------------ steps

    def _queue(self, waiting: collections.deque[Any], item: Any) -> None:
        """`item` (a step of `call`, or a thread's `call_blocking`) waits in `waiting`: a
        worker is started for it when none is free and fewer than `workers` live, else the
        free workers are handed out."""
        with self._lock:
            waiting.append(item)
            grow = self._free(None) is None and self._grow()
        if grow:
            self._started()
        else:
            self._dispatch()

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a worker, its reply read by this event loop. BrokenProcessPool
        when the worker died with it. Sent at once to an idle worker, or behind the step a
        worker is computing (`depth`), else when a reply frees a place (in the very callback
        that reads it: `_readable`)."""
        loop = asyncio.get_running_loop()
        step = Step(loop, pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL))
        self._queue(self._waiting, step)
        try:
            message = await step.reply
        except (EOFError, OSError) as exc:
            raise BrokenProcessPool(f"a bot worker process died: {exc}") from exc
        except BaseException:  # cancelled: waiting (dropped when its turn comes), behind
            # another step in a pipe (computed, its reply dropped), or being computed: its
            # worker goes with it (what it computes is wanted by nobody)
            step.gone = True
            with self._lock:
                worker = next((w for w in self._live if w.steps and w.steps[0] is step), None)
            if worker is not None:
                self._lost(worker, kill=True)
            raise
        return outcome(message)

    def call_blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a worker, waited for in this thread (an idle worker, whole)."""
        handed: Future[Worker] = Future()
        self._queue(self._blocked, handed)
        worker = handed.result()
        try:
            worker.send(pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL))
            while (message := worker.reader.read()) is None:
                select.select([worker.reader.fd], [], [])
        except (EOFError, OSError) as exc:
            self._lost(worker)  # held whole: no step of `call` on it
            raise BrokenProcessPool(f"a bot worker process died: {exc}") from exc
        except BaseException:
            self._lost(worker, kill=True)
            raise
        with self._lock:
            worker.held = False
        self._dispatch()
        return outcome(message)

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        """`fn(*args)` in a worker, computed in this thread (a done Future)."""
        future: Future[T] = Future()
        try:
            future.set_result(self.call_blocking(fn, *args))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def pids(self) -> list[int]:
        """The worker processes' ids (those live)."""
        with self._lock:
            return [w.process.pid for w in self._live if w.process.pid is not None]

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            workers, self._live = self._live, []
        for worker in workers:
            worker.close(kill=not wait)
            if wait:
                worker.process.join(5)


_pools: dict[tuple[int, str], BotPool] = {}
_pools_lock = threading.Lock()


def bot_pool(workers: int, lane: str = "live") -> BotPool:
    """This process's pool of `workers` processes for `lane` (made once, started on first
    use): "live", the steps of the games being played; "background", work no game waits
    for (post-game reviews), on workers of its own, so a live step never waits behind it."""
    with _pools_lock:
        if (workers, lane) not in _pools:
            _pools[workers, lane] = BotPool(workers, background=lane == "background")
        return _pools[workers, lane]
