"""Where bot steps run (`service.games.bot_work.BotWork`), on fake pools: inline without bots, in
the pool with them, refused (503 bots_busy, nothing computed) past the limit or when the
pool broke."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import BrokenExecutor, Executor, Future, ThreadPoolExecutor

import pytest

from service.core.errors import ServiceError
from service.games.bot_work import BotWork


def where(tag: str) -> tuple[str, str]:
    return tag, threading.current_thread().name


class Held(Executor):
    """A pool whose steps wait until released; counts what was submitted."""

    def __init__(self) -> None:
        self.futures: list[Future] = []

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        self.futures.append(future)
        return future


class Broken(Executor):
    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        future.set_exception(BrokenExecutor("a worker died"))
        return future


def test_a_step_without_bots_runs_inline_and_one_with_bots_in_the_pool() -> None:
    pool = ThreadPoolExecutor(1, thread_name_prefix="bot-pool")
    work = BotWork(pool)

    async def body() -> None:
        assert await work.run(False, where, "human") == ("human", "MainThread")
        tag, thread = await work.run(True, where, "bots")
        assert tag == "bots"
        assert thread.startswith("bot-pool")
        assert work.in_pool == 0

    asyncio.run(body())
    pool.shutdown()


def test_without_a_pool_bot_steps_run_in_a_worker_thread() -> None:
    work = BotWork(None)
    _, thread = asyncio.run(work.run(True, where, "bots"))
    assert thread != "MainThread"


def test_past_the_limit_a_step_is_refused_before_anything_is_submitted() -> None:
    pool = Held()
    work = BotWork(pool, limit=2)

    async def body() -> None:
        waiting = [asyncio.ensure_future(work.run(True, where, str(i))) for i in range(2)]
        await asyncio.sleep(0)
        assert work.in_pool == 2
        with pytest.raises(ServiceError) as refused:
            await work.run(True, where, "third")
        assert refused.value.code == "bots_busy"
        assert refused.value.retry_after == 1
        assert len(pool.futures) == 2  # the third never reached the pool
        for i, future in enumerate(pool.futures):
            future.set_result(("done", str(i)))
        assert [await w for w in waiting] == [("done", "0"), ("done", "1")]
        assert work.in_pool == 0
        again = asyncio.ensure_future(work.run(True, where, "again"))  # room again
        await asyncio.sleep(0)
        pool.futures[-1].set_result(("done", "again"))
        assert await again == ("done", "again")

    asyncio.run(body())


def test_a_broken_pool_is_bots_busy_and_frees_its_place() -> None:
    work = BotWork(Broken(), limit=1)
    for _ in range(2):  # the place is freed: the second is refused for the same reason
        with pytest.raises(ServiceError) as refused:
            asyncio.run(work.run(True, where, "x"))
        assert refused.value.code == "bots_busy"
    assert work.in_pool == 0
    with pytest.raises(ServiceError):
        work.blocking(where, "x")
    assert work.in_pool == 0


def test_blocking_waits_in_the_calling_thread_for_the_pool() -> None:
    pool = ThreadPoolExecutor(1, thread_name_prefix="bot-pool")
    tag, thread = BotWork(pool).blocking(where, "deal")
    assert tag == "deal"
    assert thread.startswith("bot-pool")
    assert BotWork(None).blocking(where, "inline") == ("inline", "MainThread")
    pool.shutdown()


def state_of(*levels: str | None, stand_in: dict[int, str] | None = None):
    from msgspec.structs import replace

    from domain.game.engine import new_game

    state, _ = new_game([(f"p{i}", level) for i, level in enumerate(levels)], "bots-search")
    players = list(state.players)
    for seat, level in (stand_in or {}).items():
        players[seat] = replace(players[seat], stand_in=level)
    return replace(state, players=tuple(players))


@pytest.mark.parametrize(
    ("levels", "stand_in", "search"),
    [
        ((None, None), None, False),  # humans only
        ((None, "basic", "random", "basic"), None, False),  # cheap bots until a human decides
        ((None, "basic", "expert"), None, True),  # a searching bot
        (("basic", "basic"), None, True),  # no human: the whole game in the step
        ((None, "basic"), {0: "basic"}, True),  # the one human seat taken over
        ((None, None, "basic"), {0: "basic"}, False),  # another human remains
        ((None, None), {1: "expert"}, True),  # an expert standing in
    ],
)
def test_which_steps_go_to_the_pool(levels, stand_in, search) -> None:
    from service.games.use_cases import bots_search

    assert bots_search(state_of(*levels, stand_in=stand_in)) is search


def test_resigning_or_reclaiming_goes_to_the_pool() -> None:
    from domain.game.model import Reclaim, Resign
    from service.games.use_cases import bots_search

    state = state_of(None, None)
    assert bots_search(state, Resign()) is True
    assert bots_search(state, Reclaim()) is True
