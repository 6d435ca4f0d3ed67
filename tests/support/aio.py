"""Bounded waits for asyncio tests: a wait that would hang fails instead, naming what every
task of the loop was waiting on (a hang in CI otherwise ends in the job's time limit with
nothing to read)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


def task_stacks() -> str:
    """Every pending task of the running loop but the caller's, with the chain of awaits it
    is suspended in (a task's own stack shows only its outermost coroutine)."""
    out = io.StringIO()
    me = asyncio.current_task()
    for task in asyncio.all_tasks():
        if task is me:
            continue
        out.write(f"{task!r}\n")
        awaited = task.get_coro()
        while awaited is not None:
            frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
            if frame is not None:
                out.write(
                    f"  {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}\n"
                )
            awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return out.getvalue()


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
