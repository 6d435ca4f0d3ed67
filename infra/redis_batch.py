"""One round trip for the Redis commands of one event-loop turn: `Batcher`.

Under load, many requests of one process reach the store in the same turn of its event
loop (many clients' actions land together). redis-py spends most of a lone command's CPU
around the command itself: a connection taken from the pool and given back, the retry and
timeout wrappers, one write and one read each. `Batcher.call` queues a command instead; at
the end of the turn the queue goes as one pipeline (not a transaction: each command runs as
it would alone, and its own reply or error goes to its caller) on one connection: a save in
the pipeline of a busy turn costs the serving process a fraction of the CPU it costs sent
alone. A command waits for nothing but the end of the turn it was queued in (no timer);
with `most_in_flight` pipelines under way, what is queued meanwhile goes as soon as one is
answered, in one pipeline.

The commands a caller queues are sent as they are: no retry (a lost reply leaves a write
undecided, as a lone command would: redis-py's retries are off in this store), no new
meaning. A failure of the pipeline itself (the server unreachable, a closed connection) is
each caller's `StoreUnavailable`, an error reply the caller's own (e.g. NoScriptError after
a restart: the caller loads the script and runs it again).

With `wait` (replicas, timeout ms: the store's WAIT), a command queued `replicated=True`
puts a WAIT at the end of its pipeline (WAIT confirms every write before it on the
connection); its caller gets `(reply, replicas that confirmed)`.

Given the client's pool (standalone or Sentinel), the batcher sends on connections of its
own, made by that pool (the same class, address, credentials, Sentinel primary lookup and
health check) and never lent to anyone else: at most `most_in_flight`, one per pipeline
under way. Borrowing one from redis-py's pool for every pipeline (its lock, its bookkeeping)
cost more than the rest of the round trip. A pipeline cut short (an error, a cancellation)
disconnects its connection, so no reply is ever read by the next one; the next use connects
again; replies come as Redis sends them (redis-py's pipeline would apply its
response callbacks: none for the store's HGET, EVALSHA and WAIT). On a Cluster (no pool:
slots live on several nodes) it uses redis-py's pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from redis.exceptions import ResponseError

from service.core.ports import StoreUnavailable

_Queued = tuple[tuple[Any, ...], bool, asyncio.Future]


class Batcher:
    def __init__(
        self,
        pipeline: Callable[[], Any],
        unavailable: Callable[[BaseException], bool],
        *,
        pool: Any = None,
        wait: tuple[int, int] = (0, 0),
        most_in_flight: int = 4,
        most_per_pipeline: int = 256,
    ) -> None:
        self._pipeline = pipeline  # a new redis-py pipeline (not a transaction)
        self._pool = pool  # whose connections the batcher makes its own (None: pipelines)
        self._idle: list[Any] = []  # the batcher's connections not sending now
        self._unavailable = unavailable  # whether an error means the store is unreachable
        self._wait = wait
        self._most_in_flight = most_in_flight
        self._most = most_per_pipeline
        self._queue: list[_Queued] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scheduled = False
        self._sending: set[asyncio.Task] = set()

    def call(self, *command: Any, replicated: bool = False) -> asyncio.Future:
        """Queue one command (its name and arguments, as `execute_command` takes them); the
        future is its reply (with `replicated`: the reply and the replicas that confirmed)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # the first call, or a new loop (a test's): nothing
            self._loop, self._queue, self._scheduled = loop, [], False  # of the old one is kept
            self._forget_connections()
        future = loop.create_future()
        self._queue.append((command, replicated, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)  # after the callbacks of this turn
        return future

    def _flush(self) -> None:
        self._scheduled = False
        while self._queue and len(self._sending) < self._most_in_flight:
            batch, self._queue = self._queue[: self._most], self._queue[self._most :]
            task = asyncio.ensure_future(self._send(batch))
            self._sending.add(task)
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task) -> None:
        self._sending.discard(task)
        if self._queue and not self._scheduled and task.get_loop() is self._loop:
            self._flush()  # what came while every pipeline was under way

    async def _exchange(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """The commands sent at once on one of the batcher's connections, and their replies
        (an error reply as its exception)."""
        conn = self._idle.pop() if self._idle else self._pool.make_connection()
        try:
            if not conn.is_connected:  # `connect`: where a Sentinel's connection finds the
                # primary; bounded as redis-py's pool bounds it (a frozen server accepts the
                # connection and never answers its handshake)
                async with asyncio.timeout(conn.socket_connect_timeout):
                    await conn.connect()
            await conn.send_packed_command(conn.pack_commands(commands))
            replies = []
            for _ in commands:
                try:
                    replies.append(await conn.read_response())
                except ResponseError as error:
                    replies.append(error)
        except BaseException:  # replies may be left unread: never read by the next pipeline
            with contextlib.suppress(Exception):
                await conn.disconnect(nowait=True)
            raise
        finally:
            self._idle.append(conn)
        return replies

    async def _piped(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        pipe = self._pipeline()
        for command in commands:
            pipe.execute_command(*command)
        return await pipe.execute(raise_on_error=False)

    async def _send(self, batch: list[_Queued]) -> None:
        wait = self._wait[0] > 0 and any(replicated for _, replicated, _ in batch)
        commands = [command for command, _, _ in batch]
        if wait:
            commands.append(("WAIT", *self._wait))
        try:
            if self._pool is not None:
                replies = await self._exchange(commands)
            else:
                replies = await self._piped(commands)
        except asyncio.CancelledError:  # the loop closing: the callers are cancelled too
            for _, _, future in batch:
                future.cancel()
            raise
        except Exception as error:  # every caller gets the failure
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(self._failure(error))
            return
        replicas = replies[-1] if wait else 0
        for (_, replicated, future), reply in zip(batch, replies, strict=False):
            if future.done():  # its caller was cancelled
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result((reply, replicas) if replicated else reply)

    def _failure(self, error: Exception) -> Exception:
        """One exception per caller (a shared one would gather every caller's traceback)."""
        if self._unavailable(error):
            failure: Exception = StoreUnavailable(str(error))
        else:
            failure = RuntimeError(f"a pipeline of {type(error).__name__}: {error}")
        failure.__cause__ = error
        return failure

    async def close(self) -> None:
        """Wait for the pipelines under way (their callers get their replies), then close the
        batcher's connections."""
        while self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)
        idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                await conn.disconnect()

    def _forget_connections(self) -> None:
        """The connections of a loop no longer used, closed without it (as redis-py closes
        a connection it finds outside any loop)."""
        idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                conn._close()
            conn._reader = conn._writer = None
