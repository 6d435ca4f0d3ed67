"""Where the engine steps in which bots move are computed.

A step in which a searching bot (`expert`, `master`) may move, or in which no human seat is left to
stop the bots (a table of bots played to its end), or a timeout, runs in a pool of worker
processes (`infra.bot_pool`, TEN_BOT_WORKERS), so it never holds the serving process's
interpreter: the serving process only pickles the state and reads the result back, whatever
the bots compute. Any other step runs inline: a human's move, and the few moves of `random`
and `basic` bots until a human seat decides (`service.games.use_cases.bots_search`), cheaper than the
hop to another process. With no pool (TEN_BOT_WORKERS=0), pool steps run in a worker thread
of the serving process.

Work no game waits for (a post-game review: `service.history.reviews`) runs in a `BotWork` of its
own on the pool's background lane (`infra.bot_pool.bot_pool(1, "background")`: its own
worker process), so a live game's step never waits behind it.

The pool's work is bounded per process: past TEN_BOT_QUEUE steps waiting or running, a new
one is refused with 503 `bots_busy` (Retry-After) before anything is computed or saved; a
worker process that dies mid-step fails its steps the same way (the pool is made anew for
the next). A refused step changes nothing: the game is saved only after the step returns.

The pool computes the very functions the inline path calls (domain.bots.clock.play, time_out,
domain.bots.simulation.play_bots): one implementation of every rule and bot, wherever it runs.
An engine step (`step`, `blocking_step`: a state and its events) comes back from the pool as
msgpack (`packed`), which msgspec decodes in C (pickle rebuilt every event and state struct
in a Python call, on the serving process's interpreter).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor, Executor
from typing import Any, Protocol, TypeVar, runtime_checkable

import msgspec

from domain.game.model import AnyEvent, Event, GameState
from service.core.errors import ServiceError

log = logging.getLogger("ten.bots")
T = TypeVar("T")
RETRY_AFTER = 1  # seconds


def ready() -> bool:
    """A step that computes nothing (the pool's warm-up)."""
    return True


Stepped = tuple[GameState, list[Event]]
_step_encoder = msgspec.msgpack.Encoder()
_step_decoder = msgspec.msgpack.Decoder(tuple[GameState, list[AnyEvent]])
_state_decoder = msgspec.msgpack.Decoder(GameState)


def packed(step: Callable[..., Stepped], state: bytes, *args: object) -> bytes:
    """`step(state, *args)`, an engine step's state and events, as msgpack (in a pool
    worker); the state it starts from comes as msgpack too (`sent`)."""
    return _step_encoder.encode(step(_state_decoder.decode(state), *args))


def sent(state: GameState) -> bytes:
    """A step's state for the pool: msgpack, which msgspec writes in C (pickled, each of its
    structs was a Python call on the serving process)."""
    return _step_encoder.encode(state)


def unpacked(blob: bytes) -> Stepped:
    return _step_decoder.decode(blob)  # type: ignore[return-value] # AnyEvent: the Events


@runtime_checkable
class Hops(Protocol):
    """A pool whose steps the event loop awaits without a thread of its own
    (`infra.bot_pool.BotPool`: worker processes on pipes), and a thread can wait for."""

    def start(self) -> None: ...

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def call_blocking(self, fn: Callable[..., Any], *args: Any) -> Any: ...


def bots_busy() -> ServiceError:
    error = ServiceError("bots_busy")
    error.retry_after = RETRY_AFTER
    return error


class BotWork:
    """`pool`: the worker processes (an Executor whose `submit` runs a picklable function
    there), None: a worker thread. `limit`: the steps this process may have in the pool at
    once (waiting or running), past which a step is refused."""

    def __init__(self, pool: Hops | Executor | None = None, *, limit: int = 64) -> None:
        self._pool = pool
        self._hops = pool if isinstance(pool, Hops) else None
        self._limit = limit
        self._in_pool = 0
        self._lock = threading.Lock()  # `blocking` is called from worker threads

    async def warm(self) -> None:
        """Start the pool's processes now (at startup), not on the first bot step: they
        take a while to start (a fork server, the engine imported) on a busy machine."""
        if self._hops is not None:
            await asyncio.to_thread(self._hops.start)
        elif self._pool is not None:
            self._pool.submit(ready)

    @property
    def in_pool(self) -> int:
        return self._in_pool

    @contextlib.contextmanager
    def _place(self) -> Iterator[None]:
        """A place in the pool for one step, or bots_busy: none left, or the pool broke
        (a worker died) while the step was in it."""
        with self._lock:
            if self._in_pool >= self._limit:
                raise bots_busy()
            self._in_pool += 1
        try:
            yield
        except BrokenExecutor as exc:
            log.warning("a bot worker process died: %s", exc)
            raise bots_busy() from exc
        finally:
            with self._lock:
                self._in_pool -= 1

    async def run(self, search: bool, step: Callable[..., T], *args: object) -> T:
        """`step(*args)`: in the pool when `search` (`service.games.use_cases.bots_search`), else inline."""
        if not search:
            return step(*args)
        if self._pool is None:
            return await asyncio.to_thread(step, *args)
        with self._place():
            if self._hops is not None:
                return await self._hops.call(step, *args)
            return await asyncio.wrap_future(self._pool.submit(step, *args))

    async def step(
        self, search: bool, step: Callable[..., Stepped], state: GameState, *args: object
    ) -> Stepped:
        """`run` for an engine step `step(state, *args)`: to and from the pool as msgpack
        (`sent`, `packed`)."""
        if not search or self._pool is None:
            return await self.run(search, step, state, *args)
        return unpacked(await self.run(True, packed, step, sent(state), *args))

    def blocking_step(
        self, search: bool, step: Callable[..., Stepped], state: GameState, *args: object
    ) -> Stepped:
        """`step`'s twin for a thread: inline unless `search`, else to and from the pool as
        msgpack (`sent`, `packed`), waited for in this thread (`blocking`)."""
        if not search or self._pool is None:
            return step(state, *args)
        return unpacked(self.blocking(packed, step, sent(state), *args))

    def blocking(self, step: Callable[..., T], *args: object) -> T:
        """`step(*args)` in the pool, waited for in this (worker) thread: for a step deep in
        a change the lobby computes in a thread (a table dealt when its last seat fills)."""
        if self._pool is None:
            return step(*args)
        with self._place():
            if self._hops is not None:
                return self._hops.call_blocking(step, *args)
            return self._pool.submit(step, *args).result()
