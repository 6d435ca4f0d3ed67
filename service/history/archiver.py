"""Moving ended games (finished, aborted or abandoned) into the SQL archive, in the background.

Archiving never blocks or fails an action: the relay's archive reaction
(`ArchiveReaction`, listed for `GAME_ENDED`) puts the ended game, with its whole log, in the archive
queue; this job's worker (`service.jobs.worker.Worker`, in every replica) archives each one and
removes it once the archive has it (`service.history.archiving.archive_game`: exactly once in the
archive, and rated once, even when two replicas take the same game). While the database is down
(`StoreUnavailable`) nothing leaves the queue and no job is blamed; a game the archive
refuses (a `ValueError` of the archive's checks, a value the database refuses:
`PermanentFailure`), or one failing `max_failures` times, is quarantined with its reason
and the games behind it go on being archived.

**A deal still played elsewhere waits.** A game of a duplicate round is archived only once
every table of its deal has finished (`DealSecrecy.sealed`: `service.tournaments.secrecy`): the archive
is read by everyone, shows the seed, and feeds the players' stats, the leaderboard and the
ratings, so none of them may learn a result or a card of a deal still being played. Its job
stays queued, due again after a while (a quarter of the time since it ended, at most `hold`
seconds); the archiving of the deal's last table moves
the deal's other games forward at once (`LeasedQueue.hasten`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import msgspec

from service.core.model import TableRef
from service.core.ports import ArchiveJob, EventLog
from service.core.settings import RatingsBy
from service.history.archive import ARCHIVED_STATUSES, GameArchive
from service.history.archiving import archive_game
from service.history.reviews import rate_if_reviewed
from service.jobs.worker import Job, LeasedQueue, PermanentFailure, Worker
from service.reactions.relay import Change

QUEUE = "archive"
HOLD = 60.0  # seconds at most between two looks at a game whose deal is still played elsewhere


class DealSecrecy(Protocol):
    async def sealed(self, ref: TableRef) -> bool:
        """Whether the table's game is secret now (another table of its deal is played)."""

    async def deal_of(self, ref: TableRef) -> Sequence[str]:
        """The games of the other tables of its deal in its round."""


_decoder = msgspec.msgpack.Decoder(ArchiveJob)
_encoder = msgspec.msgpack.Encoder()
WHOLE_LOG = 1_000_000  # events of one game at most (an archive job carries the whole log)
ARCHIVED = frozenset(ARCHIVED_STATUSES)


class Archiver:
    def __init__(
        self,
        queue: LeasedQueue,
        archive: GameArchive,
        *,
        secrecy: DealSecrecy | None = None,
        hold: float = HOLD,
        ratings_by: RatingsBy = "results",
        **worker: Any,
    ) -> None:
        """`ratings_by`: "results", a rated game is rated at archival by its results;
        "luck_adjusted", by its review's places, here when the review was kept before
        (`service.history.reviews.rate_if_reviewed`), else by the review's job."""
        self.ratings_by = ratings_by
        self.queue = queue
        self.archive = archive
        self.secrecy = secrecy
        self.hold = hold
        self.worker = Worker(queue, self.handle, **worker)

    async def handle(self, job: Job) -> float | None:
        try:
            archived = _decoder.decode(job.payload)
        except msgspec.DecodeError as exc:
            raise PermanentFailure(f"not an archive job: {exc}") from exc
        record = archived.record
        ref, secrecy = record.tournament, self.secrecy
        if ref is not None and secrecy is not None and await secrecy.sealed(ref):
            return self.worker.clock() + self._hold(record.updated_at)  # its deal: still played
        seats = len(record.state.players) if record.state is not None else 0
        try:
            # finished, aborted or abandoned: `archive_game` decides whether it is ranked,
            # which seats count and whether it is rated
            await archive_game(
                self.archive,
                record,
                archived.events,
                record.player_ids or (None,) * seats,
                by=self.ratings_by,
            )
        except ValueError as exc:  # a log the archive refuses: it never will take it
            raise PermanentFailure(str(exc)) from exc
        if self.ratings_by == "luck_adjusted" and record.status == "finished":
            await rate_if_reviewed(self.archive, record.id)  # now or by an earlier try
        if ref is not None and secrecy is not None:  # the deal's games held, due now
            now = self.worker.clock()
            for game in await secrecy.deal_of(ref):
                await self.queue.hasten(game, now)
        return None

    def _hold(self, ended_at: float) -> float:
        """How long a held game waits before the next look: a quarter of the time since it
        ended (a round of minutes is looked at often, a correspondence one seldom), from a
        second to `hold`. The deal's last game frees it sooner (`hasten`)."""
        return min(self.hold, max(1.0, (self.worker.clock() - ended_at) / 4))

    def wake(self) -> None:
        self.worker.wake()

    async def run_once(self) -> int:
        return await self.worker.run_once()

    async def run_forever(self) -> None:
        await self.worker.run_forever()


class ArchiveReaction:
    """The relay's durable reaction to an ended game (finished, aborted, abandoned): the game
    goes to the archive queue with its whole log, so that it survives the live store's
    expiry while the database is down."""

    name = "archive"
    durable: Literal[True] = True

    def __init__(
        self,
        store: EventLog,
        queue: LeasedQueue,
        *,
        wake: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
        count: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.queue = queue
        self.wake = wake
        self.clock = clock
        self.count = count

    async def react(self, change: Change) -> None:
        record = change.new
        if record.status not in ARCHIVED:
            return  # a table cancelled before it was dealt: nothing to archive
        # the events not relayed yet are the whole log when none was relayed before (the
        # log starts at seq 1, without gaps): no second read of it
        whole = list(change.stored)
        if not whole or whole[0].seq != 1:
            whole = await self.store.events(record.id, 0, WHOLE_LOG)
        job = ArchiveJob(record=record, events=whole)
        queued = await self.queue.put(record.id, _encoder.encode(job), self.clock())
        if queued and self.count is not None:
            self.count()
        if self.wake is not None:
            self.wake()
