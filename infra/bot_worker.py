"""One bot worker of the pool (`infra.bot_pool`): the process's own life, and the serving
process's end of it (`Worker`: the process, its two pipes, the steps given to it).

A worker is a `multiprocessing` process started through the pool's fork server; it lowers
its own scheduling priority first (`_worker_start`: a background one lowest), so on a busy
machine the serving processes answer first and the bots wait, and exits when the serving
process is gone (then the fork server does too). It then computes the steps that come
down its request pipe, one at a time, each reply written back whole (`_serve`); the
serving process reads a reply without blocking (`Reader`).
"""

from __future__ import annotations

import asyncio
import collections
import os
import pickle
import select
import struct
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

NICE = 10
# the most one read of a reply pipe asks for: what a pipe holds. `os.read` allocates what it
# is asked for first: a larger size costs each read an mmap, page faults and a munmap, twice
# a reply (the read that finds it empty too)
READ = 1 << 16


def _worker_start(serving: int, background: bool) -> None:
    """In each worker, first: a scheduling priority below the serving process's, and a watch
    on the serving process. A live game's worker: SCHED_BATCH at nice 19 (the least share
    of a core beside a busy serving process; else nice 10); a background one: SCHED_IDLE,
    the lowest class Linux has (a core only when no other process wants it, and a small
    part of a live worker's share when both want one), so a review never slows a live
    game's bots much."""
    policy, nice = (os.SCHED_IDLE, 0) if background else (os.SCHED_BATCH, 19)
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))
        os.nice(nice)
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


def _serve(requests: Connection, replies: Connection, serving: int, background: bool) -> None:
    """A worker's life: read a step, compute it, write back (True, result) or (False, the
    exception it raised), until the serving process closes the pipe."""
    _worker_start(serving, background)
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


class Reader:
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
                chunk = os.read(self.fd, READ)
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


class Worker:
    """A worker as the serving process holds it: its process, the write end of its request
    pipe, the read end of its reply pipe (`reader`) and the steps of the pool on it."""

    def __init__(self, context: Any, serving: int, background: bool) -> None:
        requests_out, self.requests = context.Pipe(duplex=False)
        replies_in, replies_out = context.Pipe(duplex=False)
        self.process = context.Process(
            target=_serve, args=(requests_out, replies_out, serving, background), daemon=True
        )
        self.process.start()
        requests_out.close()  # the worker holds its ends alone: its death ends the pipe
        replies_out.close()
        self.reader = Reader(replies_in)
        # the steps of `BotPool.call` given to it, in order: the first one is being
        # computed, the others wait in its pipe (or in `unsent`, to be written in that
        # order); their replies come back in that order
        self.steps: collections.deque[Step] = collections.deque()
        self.unsent: collections.deque[Step] = collections.deque()
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop of its steps
        self.reading = False  # its replies read by that loop (`add_reader`)
        self.sending = False  # a large request being written from a thread
        self.held = False  # taken whole by `call_blocking` (a thread reads its pipe)

    def send(self, request: bytes) -> None:
        self.requests.send_bytes(request)

    def close(self, kill: bool = False) -> None:
        if kill and self.process.is_alive():
            self.process.kill()
        self.requests.close()
        self.reader.conn.close()
        self.process.join(5 if kill else 0)


def outcome(message: bytes) -> Any:
    """What a step's reply says: its result, or the exception it raised (raised here)."""
    ok, value = pickle.loads(message)
    if ok:
        return value
    raise value


class Step:
    """A step of `BotPool.call`: its request, its reply to come; `gone` once its caller
    gave up."""

    __slots__ = ("gone", "loop", "reply", "request")

    def __init__(self, loop: asyncio.AbstractEventLoop, request: bytes) -> None:
        self.loop = loop
        self.request = request
        self.reply: asyncio.Future[bytes] = loop.create_future()
        self.gone = False
