"""Moving ended games (finished, aborted or abandoned) from the outbox into the SQL archive,
in the background.

Archiving never blocks or fails an action: the action's use case only puts the finished
game in the outbox. This task, running in every replica, archives what is pending and
removes it once the archive has it (exactly once in the archive even when two replicas take
the same game: `archive()` is idempotent). While the database is down it retries with
backoff and nothing leaves the outbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from service.archive import GameArchive
from service.ports import ArchiveOutbox, StoreUnavailable

log = logging.getLogger("ten.archiver")
BATCH = 50


class Archiver:
    def __init__(
        self,
        outbox: ArchiveOutbox,
        archive: GameArchive,
        *,
        interval: float = 1.0,
        max_backoff: float = 30.0,
    ) -> None:
        self.outbox = outbox
        self.archive = archive
        self.interval = interval
        self.max_backoff = max_backoff
        self.wake = asyncio.Event()

    async def run_once(self) -> int:
        """Archive what is pending; the number archived (or found archived already)."""
        moved = 0
        for job in await self.outbox.pending(BATCH):
            record = job.record
            seats = len(record.state.players) if record.state is not None else 0
            try:
                # finished, aborted or abandoned: `archive` decides whether it is ranked
                # and which seats count
                await self.archive.archive(record, job.events, record.player_ids or (None,) * seats)
            except ValueError:
                # a log the archive refuses is a bug of ours; keep the service going
                log.exception("game %s cannot be archived; dropped from the outbox", job.record.id)
            await self.outbox.done(job.record.id)
            moved += 1
        return moved

    async def run_forever(self) -> None:
        delay = self.interval
        while True:
            failed = True
            self.wake.clear()  # before the sweep: a game finishing during it wakes the next
            try:
                moved = await self.run_once()
                delay, failed = self.interval, False
            except (StoreUnavailable, OSError) as exc:
                log.warning("archive unavailable (%s); retrying in %.1f s", exc, delay)
                moved = 0
            except Exception:
                log.exception("archiver failed; retrying in %.1f s", delay)
                moved = 0
            if moved >= BATCH:
                continue
            if failed:
                # back off on time alone: games finishing meanwhile must not hurry a retry
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), delay)
