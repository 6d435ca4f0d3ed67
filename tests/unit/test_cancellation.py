"""service.cancellation: a cancellation a library dropped still stops a loop; a shutdown's
wait for the background tasks is bounded."""

from __future__ import annotations

import asyncio
import logging

from service.cancellation import stop_if_cancelled, stop_tasks
from tests.support.aio import dropping_sleep, run_without_waiting


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
        done, _ = await asyncio.wait({task}, timeout=1.0)
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
    async def stubborn() -> None:
        while True:
            await dropping_sleep(0.01)  # never looks

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
        stuck = await stop_tasks(tasks, 0.2)
        assert 0.2 <= loop.time() - start < 1.0
        assert [t.get_name() for t in stuck] == ["stubborn"]
        assert tasks[1].cancelled()

    with caplog.at_level(logging.ERROR, logger="ten"):
        run_without_waiting(body())
    errors = [
        r.getMessage() for r in caplog.records if r.name == "ten" and r.levelno == logging.ERROR
    ]  # (asyncio may log the task left behind, when the loop closes)
    assert len(errors) == 1
    assert "stubborn did not stop within 0.2 s" in errors[0]
    assert " in stubborn\n" in errors[0]  # where it waits: its chain of awaits,
    assert " in dropping_sleep\n" in errors[0]  # down to the innermost coroutine


def test_stop_tasks_with_none_returns_at_once() -> None:
    assert asyncio.run(stop_tasks([], 5.0)) == []
