"""Moving ended games (finished, aborted or abandoned) into the SQL archive, in the background.

Archiving never blocks or fails an action: the relay's archive reaction
(`service.relay.ArchiveReaction`) puts the ended game, with its whole log, in the archive
queue; this job's worker (`service.jobs.Worker`, in every replica) archives each one and
removes it once the archive has it (`service.archiving.archive_game`: exactly once in the
archive, and rated once, even when two replicas take the same game). While the database is down
(`StoreUnavailable`) nothing leaves the queue and no job is blamed; a game the archive
refuses (a `ValueError` of the archive's checks, a value the database refuses:
`PermanentFailure`), or one failing `max_failures` times, is quarantined with its reason
and the games behind it go on being archived.
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.archive import GameArchive
from service.archiving import archive_game
from service.jobs import Job, LeasedQueue, PermanentFailure, Worker
from service.ports import ArchiveJob

QUEUE = "archive"
_decoder = msgspec.msgpack.Decoder(ArchiveJob)


class Archiver:
    def __init__(self, queue: LeasedQueue, archive: GameArchive, **worker: Any) -> None:
        self.queue = queue
        self.archive = archive
        self.worker = Worker(queue, self.handle, **worker)

    async def handle(self, job: Job) -> None:
        try:
            archived = _decoder.decode(job.payload)
        except msgspec.DecodeError as exc:
            raise PermanentFailure(f"not an archive job: {exc}") from exc
        record = archived.record
        seats = len(record.state.players) if record.state is not None else 0
        try:
            # finished, aborted or abandoned: `archive_game` decides whether it is ranked,
            # which seats count and whether it is rated
            await archive_game(
                self.archive, record, archived.events, record.player_ids or (None,) * seats
            )
        except ValueError as exc:  # a log the archive refuses: it never will take it
            raise PermanentFailure(str(exc)) from exc

    def wake(self) -> None:
        self.worker.wake()

    async def run_once(self) -> int:
        return await self.worker.run_once()

    async def run_forever(self) -> None:
        await self.worker.run_forever()
