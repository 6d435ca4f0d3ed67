"""service.core.cancellation: a cancellation a library dropped still stops a loop; a shutdown's
wait for the background tasks, and each of its other steps, is bounded."""

from __future__ import annotations

import asyncio
import logging

from service.core.cancellation import finish_within, stop_if_cancelled, stop_tasks
from tests.support.aio import dropping_sleep, run_without_waiting

HANG = 120.0  # seconds: only a wait that never ends reaches it (a failure, not a hang)


def test_a_loop_that_looks_stops_after_a_dropped_cancellation() -> None:
    turns = []

    async def loop() -> None:
        while True:
            stop_if_cancelled()
            turns.append(1)
            await dropping_sleep(0.01)

    async def body() -> None:
        task = asyncio.create_task(loop())
        await asyncio.sleep(0.005)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=HANG)
        assert task in done
        assert task.cancelled()
        assert len(turns) == 1  # no turn after the cancellation

    run_without_waiting(body())


def test_a_task_not_cancelled_runs_on() -> None:
    async def body() -> str:
        stop_if_cancelled()
        return "ran on"

    assert asyncio.run(body()) == "ran on"


def test_stop_tasks_leaves_one_that_does_not_stop_behind_and_names_it(caplog) -> None:
    released = False  # set once stop_tasks gave up on it: no task is left behind

    async def stubborn() -> None:
        while not released:
            await dropping_sleep(0.01)  # never looks at a cancellation

    async def failing() -> None:
        raise ValueError("boom")

    async def body() -> None:
        tasks = [
            asyncio.create_task(stubborn(), name="stubborn"),
            asyncio.create_task(asyncio.sleep(60), name="polite"),
            asyncio.create_task(failing(), name="failing"),
        ]
        await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        start = loop.time()
        # bounded: it returns while `stubborn` never stops (a hang would fail the guard),
        # and not before the bound (a timeout never fires early)
        stuck = await asyncio.wait_for(stop_tasks(tasks, 0.2), HANG)
        assert loop.time() - start >= 0.2
        assert [t.get_name() for t in stuck] == ["stubborn"]
        assert tasks[1].cancelled()
        nonlocal released
        released = True  # (left pending, it was destroyed in a later test, which logged it)
        await asyncio.wait({tasks[0]}, timeout=HANG)
        assert tasks[0].done()

    with caplog.at_level(logging.ERROR, logger="ten"):
        run_without_waiting(body())
    errors = [
        r.getMessage() for r in caplog.records if r.name == "ten" and r.levelno == logging.ERROR
    ]
    assert len(errors) == 1
    assert "stubborn did not stop within 0.2 s" in errors[0]
    assert " in stubborn\n" in errors[0]  # where it waits: its chain of awaits,
    assert " in dropping_sleep\n" in errors[0]  # down to the innermost coroutine


def test_stop_tasks_with_none_returns_at_once() -> None:
    assert asyncio.run(stop_tasks([], 5.0)) == []


def _ten_errors(caplog) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == "ten" and r.levelno >= logging.ERROR
    ]


def test_finish_within_goes_on_past_a_step_that_never_returns_and_says_where(caplog) -> None:
    never = asyncio.Event()

    async def close_everything() -> None:
        await never.wait()

    async def body() -> tuple[bool, float]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        step = finish_within(close_everything(), "closing the adapters", 0.2)
        finished = await asyncio.wait_for(step, HANG)  # returns though the step never does
        return finished, loop.time() - start

    with caplog.at_level(logging.ERROR, logger="ten"):
        finished, took = run_without_waiting(body())
    assert finished is False
    assert took >= 0.2
    errors = _ten_errors(caplog)
    assert len(errors) == 1
    assert "closing the adapters did not finish within 0.2 s" in errors[0]
    assert " in close_everything\n" in errors[0]


def test_finish_within_logs_a_step_that_fails_and_goes_on(caplog) -> None:
    async def close_badly() -> None:
        raise ConnectionError("gone")

    with caplog.at_level(logging.ERROR, logger="ten"):
        assert asyncio.run(finish_within(close_badly(), "closing the adapters", 5.0)) is False
    errors = _ten_errors(caplog)
    assert errors == ["closing the adapters failed"]
    (record,) = [r for r in caplog.records if r.name == "ten"]
    assert isinstance(record.exc_info[1], ConnectionError)


def test_finish_within_a_step_that_returns_is_true_and_quiet(caplog) -> None:
    closed = []

    async def close() -> None:
        await asyncio.sleep(0)
        closed.append(True)

    with caplog.at_level(logging.ERROR, logger="ten"):
        assert asyncio.run(finish_within(close(), "closing the adapters", 5.0)) is True
    assert closed == [True]
    assert _ten_errors(caplog) == []
