"""A cancellation asked for stays asked for, in every background loop.

Python 3.11's `asyncio.wait_for` returns the awaited result, and drops the cancellation, when
both come in the same turn of the event loop (cpython gh-86296; 3.12 rewrote `wait_for` on
`asyncio.timeout`). redis-py sends every command through `wait_for` when the connection has a
socket timeout, which is its default (5 s). So a background task cancelled while it sends a
command can go on as if nothing had been asked, with the request still counted
(`Task.cancelling()` stays 1). Worse, every `asyncio.timeout` it then enters remembers that
count and takes the next cancellation for its own expiry: the loop never stops, and whatever
awaits it (a shutdown, a test) hangs for good. Seen: two webhook workers sharing a Redis
outbox, one stopped as it claimed, hung 2 runs in 5 of the full suite.

Every loop that runs until cancelled calls `stop_if_cancelled()` at each turn; it raises the
cancellation that was dropped. `stop_tasks` bounds a shutdown's wait for them all the same,
and `finish_within` each of the shutdown's other steps (closing the adapters): a step that
does not return is logged with where it waits, and the shutdown goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence

log = logging.getLogger("ten")


def stop_if_cancelled() -> None:
    """Raise `CancelledError` if the running task was asked to stop and is still running
    (a library dropped the request)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def awaiting(task: asyncio.Task) -> str:
    """Where `task` is suspended: each coroutine of its chain of awaits, outermost first, as
    `file:line in function` lines (`Task.print_stack` shows only the outermost)."""
    lines = []
    awaited = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is not None:
            code = frame.f_code
            lines.append(f"  {code.co_filename}:{frame.f_lineno} in {code.co_name}\n")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return "".join(lines)


async def stop_tasks(tasks: Sequence[asyncio.Task], seconds: float) -> list[asyncio.Task]:
    """Cancel `tasks` and wait for them, `seconds` at most; those that did not stop are
    logged (an ERROR naming each and where it waits) and returned, left behind. What the
    others raised is retrieved, not raised."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return []
    done, stuck = await asyncio.wait(tasks, timeout=seconds)
    for task in done:
        if not task.cancelled():
            task.exception()
    for task in stuck:
        log.error(
            "background task %s did not stop within %g s; left behind, waiting in:\n%s",
            task.get_name(), seconds, awaiting(task),
        )  # fmt: skip
    return list(stuck)


async def finish_within(awaitable: Awaitable[object], name: str, seconds: float) -> bool:
    """Await `awaitable` for `seconds` at most: True if it returned. One that did not is
    logged (an ERROR naming `name` and where it waits), cancelled and left behind; one that
    raised is logged. Either way the caller goes on (a shutdown must end)."""
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        log.error(
            "%s did not finish within %g s; left behind, waiting in:\n%s",
            name, seconds, awaiting(task),
        )  # fmt: skip
        task.cancel()
        return False
    if task.cancelled():
        log.error("%s was cancelled", name)
        return False
    error = task.exception()
    if error is not None:
        log.error("%s failed", name, exc_info=error)
        return False
    return True
