"""The worker processes that compute bot steps (`service.bot_work`), TEN_BOT_WORKERS of them
per serving process.

Each worker is a `multiprocessing` process started through a fork server (the serving
process has threads and an event loop: forking it is unsafe), which preloads the engine
and the bots; it lowers its own scheduling priority (SCHED_IDLE, else nice 10), so on a
busy machine the serving processes answer first and the bots wait, and exits when the
serving process is gone (then the fork server does too). One pool per serving process,
shared by every app it builds (tests build many), its workers started on the first step.

The hop is lean (measured: bench/README.md, "A lean hop to the bot pool"): a step goes to
an idle worker down its own pipe (the function and its arguments pickled, one write), and
its reply is read by the caller's event loop (`loop.add_reader` on the worker's reply pipe,
non-blocking reads until the whole message is in), so no thread of the serving process
wakes for it: `concurrent.futures.ProcessPoolExecutor` took 150-290 us of the serving
process's CPU per step in its feeder and manager threads, this takes tens. Steps past the
idle workers wait for one in the order they came (`service.bot_work` bounds how many).

A worker that dies (SIGKILL, OOM) ends its pipe: the step it had fails with
`BrokenProcessPool` (`service.bot_work` answers 503 bots_busy; nothing was saved) and the
next step starts a new worker. A step whose caller gave up (a cancelled request) takes its
worker with it (killed: what it computes is wanted by nobody), and a new one is started.
"""

from __future__ import annotations

import asyncio
import collections
import multiprocessing
import os
import pickle
import select
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from typing import Any, TypeVar

NICE = 10
PRELOAD = ["domain.clock", "domain.simulation", "domain.expert", "domain.master", "domain.odds"]
BIG = 32_768  # a request this large is written from a thread (a pipe holds 64 KiB)
T = TypeVar("T")


def _worker_start(serving: int) -> None:
    """In each worker, first: the lowest scheduling class Linux has (SCHED_IDLE: a core only
    when no other process wants it; else nice 10), and a watch on the serving process."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(NICE)
    threading.Thread(target=_exit_with, args=(serving,), daemon=True).start()


def _exit_with(serving: int) -> None:
    """Exit once the serving process is gone (SIGKILLed, say). Without this the fork
    server, which waits for its workers, would be left behind with them."""
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


def _serve(requests: Connection, replies: Connection, serving: int) -> None:
    """A worker's life: read a step, compute it, write back (True, result) or (False, the
    exception it raised), until the serving process closes the pipe."""
    _worker_start(serving)
    while True:
        try:
            fn, args = pickle.loads(requests.recv_bytes())
        except EOFError:
            return
        try:
            reply = pickle.dumps((True, fn(*args)), pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:
            try:
                reply = pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
            except Exception:
                reply = pickle.dumps((False, RuntimeError(repr(exc))), pickle.HIGHEST_PROTOCOL)
        replies.send_bytes(reply)


class _Reader:
    """The serving process's end of a worker's reply pipe, read without blocking: the
    framing of `Connection.send_bytes` (a 4-byte big-endian length, or -1 and 8 bytes)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.fd = conn.fileno()
        os.set_blocking(self.fd, False)
        self._buffer = bytearray()

    def read(self) -> bytes | None:
        """What came so far: the whole message once it is in (None before). EOFError when
        the worker is gone."""
        while True:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return self._message()
            if not chunk:
                raise EOFError("the bot worker's pipe closed")
            self._buffer += chunk
            message = self._message()
            if message is not None:
                return message

    def _message(self) -> bytes | None:
        buffer = self._buffer
        if len(buffer) < 4:
            return None
        (size,) = struct.unpack_from("!i", buffer)
        start = 4
        if size == -1:
            if len(buffer) < 12:
                return None
            (size,) = struct.unpack_from("!Q", buffer, 4)
            start = 12
        if len(buffer) < start + size:
            return None
        message = bytes(buffer[start : start + size])
        del buffer[: start + size]
        return message


class _Worker:
    def __init__(self, context: Any, serving: int) -> None:
        requests_out, self.requests = context.Pipe(duplex=False)
        replies_in, replies_out = context.Pipe(duplex=False)
        self.process = context.Process(
            target=_serve, args=(requests_out, replies_out, serving), daemon=True
        )
        self.process.start()
        requests_out.close()  # the worker holds its ends alone: its death ends the pipe
        replies_out.close()
        self.reader = _Reader(replies_in)

    def send(self, request: bytes) -> None:
        self.requests.send_bytes(request)

    def close(self, kill: bool = False) -> None:
        if kill and self.process.is_alive():
            self.process.kill()
        self.requests.close()
        self.reader.conn.close()
        self.process.join(5 if kill else 0)


def _outcome(message: bytes) -> Any:
    ok, value = pickle.loads(message)
    if ok:
        return value
    raise value


class BotPool:
    """`workers` worker processes, each on a pipe: `call` from an event loop, `submit` from
    any thread (a concurrent Future, for a thread that waits for it)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(PRELOAD)
        self._idle: list[_Worker] = []
        self._live = 0  # workers started and not dead nor closed
        self._waiting: collections.deque[Callable[[_Worker], None]] = collections.deque()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ workers

    def start(self) -> None:
        """Start the workers not started yet (at startup: a fork server takes a while)."""
        while True:
            with self._lock:
                if self._live >= self.workers:
                    return
                self._live += 1
            self._put_back(self._started())

    def _started(self) -> _Worker:
        try:
            worker = _Worker(self._context, os.getpid())
        except BaseException:
            with self._lock:
                self._live -= 1
            raise
        with self._lock:
            self._all.add(worker)
        return worker

    def _take_now(self, waiter: Callable[[_Worker], None]) -> _Worker | None:
        """An idle worker, or a new one when fewer are live than `workers`; else None, and
        `waiter` is handed the next worker put back."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
            if self._live >= self.workers:
                self._waiting.append(waiter)
                return None
            self._live += 1
        return self._started()

    def _put_back(self, worker: _Worker) -> None:
        with self._lock:
            if self._waiting:
                waiter = self._waiting.popleft()
            else:
                self._idle.append(worker)
                return
        waiter(worker)

    def _lost(self, worker: _Worker, *, kill: bool = False) -> None:
        """A worker dead or given up: closed; a waiting step gets a new one."""
        with self._lock:
            self._all.discard(worker)
            self._live -= 1
            waiter = self._waiting.popleft() if self._waiting else None
        worker.close(kill=kill)
        if waiter is not None:
            with self._lock:
                self._live += 1
            waiter(self._started())

    # ------------------------------------------------------------------ steps

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a worker, its reply read by this event loop. BrokenProcessPool
        when the worker died with it.

        A step waiting for a worker is handed one, and sent, in the very callback that reads
        the reply of the step before it (`_readable`): a worker never idles while the loop
        gets round to the coroutines of those two steps (with many requests in flight,
        that took as long as a step and halved what one worker computed)."""
        loop = asyncio.get_running_loop()
        step = _Step(loop, pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL))
        worker = self._take_now(lambda w: self._hand_over(step, w))
        if worker is not None:
            self._send(step, worker)
        try:
            message = await step.reply
        except (EOFError, OSError) as exc:
            raise BrokenProcessPool(f"a bot worker process died: {exc}") from exc
        except BaseException:  # cancelled, waiting (skipped when its turn comes) or
            # mid-step: the worker goes with it
            step.gone = True
            worker, step.worker = step.worker, None
            if worker is not None:
                loop.remove_reader(worker.reader.fd)
                self._lost(worker, kill=True)
            raise
        return _outcome(message)

    def _send(self, step: _Step, worker: _Worker) -> None:
        """Send `step` to `worker` and read its reply when it comes (on the step's loop)."""
        if step.gone:  # given up while it waited
            self._put_back(worker)
            return
        step.worker = worker
        try:
            if len(step.request) > BIG:  # from a thread: a full pipe would block the loop
                sent = step.loop.run_in_executor(None, worker.send, step.request)
                sent.add_done_callback(lambda f: self._unsent(step, worker, f))
            else:
                worker.send(step.request)
        except OSError as exc:
            self._failed(step, exc)
            return
        step.loop.add_reader(worker.reader.fd, self._readable, step)

    def _unsent(self, step: _Step, worker: _Worker, sent: asyncio.Future[None]) -> None:
        exc = None if sent.cancelled() else sent.exception()
        if exc is not None and step.worker is worker:
            self._failed(step, exc)

    def _readable(self, step: _Step) -> None:
        """The worker's reply pipe can be read: once the whole reply is in, the worker goes
        to the next waiting step (sent now) and this step gets its reply."""
        worker = step.worker
        if worker is None:
            return
        try:
            message = worker.reader.read()
        except (EOFError, OSError) as exc:
            self._failed(step, exc)
            return
        if message is None:
            return
        step.loop.remove_reader(worker.reader.fd)
        step.worker = None
        self._put_back(worker)
        if not step.reply.done():
            step.reply.set_result(message)

    def _failed(self, step: _Step, exc: BaseException) -> None:
        """The step's worker died (or its pipe broke): gone, and the step fails with it."""
        worker, step.worker = step.worker, None
        if worker is not None:
            step.loop.remove_reader(worker.reader.fd)
            self._lost(worker)
        if not step.reply.done():
            step.reply.set_exception(exc)

    def call_blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a worker, waited for in this thread."""
        handed: Future[_Worker] = Future()
        worker = self._take_now(handed.set_result) or handed.result()
        try:
            worker.send(pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL))
            while (message := worker.reader.read()) is None:
                select.select([worker.reader.fd], [], [])
        except (EOFError, OSError) as exc:
            self._lost(worker)
            raise BrokenProcessPool(f"a bot worker process died: {exc}") from exc
        except BaseException:
            self._lost(worker, kill=True)
            raise
        self._put_back(worker)
        return _outcome(message)

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
            return [w.process.pid for w in self._all if w.process.pid is not None]

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            workers, self._all, self._idle = list(self._all), set(), []
            self._live = 0
        for worker in workers:
            worker.close(kill=not wait)
            if wait:
                worker.process.join(5)

    def _hand_over(self, step: _Step, worker: _Worker) -> None:
        """A worker put back, for `step` (from any thread): sent now on the step's own loop,
        else from that loop; back if that loop is gone."""
        try:
            here = asyncio.get_running_loop() is step.loop
        except RuntimeError:  # no loop runs in this thread
            here = False
        if here:
            self._send(step, worker)
            return
        try:
            step.loop.call_soon_threadsafe(self._send, step, worker)
        except RuntimeError:  # the loop closed
            self._put_back(worker)


class _Step:
    """A step of `BotPool.call`: its request, the worker it is on (None while it waits
    for one, and once its reply is in), its reply to come; `gone` once its caller gave up."""

    __slots__ = ("gone", "loop", "reply", "request", "worker")

    def __init__(self, loop: asyncio.AbstractEventLoop, request: bytes) -> None:
        self.loop = loop
        self.request = request
        self.reply: asyncio.Future[bytes] = loop.create_future()
        self.worker: _Worker | None = None
        self.gone = False


_pools: dict[int, BotPool] = {}
_pools_lock = threading.Lock()


def bot_pool(workers: int) -> BotPool:
    """This process's pool of `workers` processes (made once, started on first use)."""
    with _pools_lock:
        if workers not in _pools:
            _pools[workers] = BotPool(workers)
        return _pools[workers]
