"""Bounded waits for asyncio tests: a wait that would hang fails instead, naming what every
task of the loop was waiting on (a hang in CI otherwise ends in the job's time limit with
nothing to read)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from service.core.cancellation import awaiting

T = TypeVar("T")


def task_stacks() -> str:
    """Every pending task of the running loop but the caller's, with the chain of awaits it
    is suspended in."""
    me = asyncio.current_task()
    return "".join(f"{t!r}\n{awaiting(t)}" for t in asyncio.all_tasks() if t is not me)


async def dropping_sleep(seconds: float) -> bool:
    """Sleep `seconds`, and if cancelled meanwhile, return anyway: what Python 3.11's
    asyncio.wait_for does when a cancellation and the result come in one turn of the loop
    (redis-py sends every command through it). True when a cancellation was dropped."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        return True
    return False


async def bounded(awaitable: Awaitable[T], seconds: float, what: str) -> T:
    """`await awaitable`, failing after `seconds` with the stacks of the loop's tasks."""
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        stacks = task_stacks()
        task.cancel()
        raise AssertionError(f"{what}: not done after {seconds:g} s; the loop's tasks:\n{stacks}")
    return task.result()


def run_without_waiting(main: Awaitable[T]) -> T:
    """`asyncio.run(main)` but for its last step, which cancels the tasks left and waits for
    them: a test of a task that may fail to stop then fails instead of hanging there."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.close()
