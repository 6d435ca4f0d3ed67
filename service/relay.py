"""The one way to react to a game change: the game's event log is the outbox.

Every change of a game is saved with its events, atomically, in the game's log (one Lua
script on Redis). The reactions to a change (the archive, the platform's webhooks) read
what they need from there, through this relay, never from a callback beside the save:

1. Before a save that a reaction wants (`Reaction.wants`: a game started, a seat taken
   over, a game ended), the relay *marks* the game in its leased queue (`relay`), due a few
   seconds later (`grace`).
2. The save (the game, its events, its due entry).
3. Right after it, the saving process relays the game (`relay`: every event of the game's
   log past the game's relay cursor, and the game as stored now, handed to every reaction;
   then the cursor moves past them) and settles the mark with the token it got in 1.

A process that dies anywhere in between leaves the mark: once due, any replica's relay
worker (`Relay.worker`, a `service.jobs.Worker`) claims it and relays the game. So each
reaction gets every event at least once, whatever process died where; the reactions are
idempotent (a webhook message has one id per fact, an archive job one per game). A mark
whose save never happened finds nothing new and goes. A mark that keeps failing is
quarantined like any job.

To add a reaction: a class with `name`, `wants` and `react` (see `Reaction`), listed in the
composition root (`service.app.game_service`). Nothing else changes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import msgspec

from service.archive import ARCHIVED_STATUSES
from service.jobs import Job, LeasedQueue, Worker
from service.model import GameRecord
from service.ports import ArchiveJob, EventLog, RelayLog, StoredEvent

log = logging.getLogger("ten.relay")

GRACE = 5.0  # seconds a mark waits for the process that made it before any replica takes it
WHOLE_LOG = 1_000_000  # events of one game at most (an archive job carries the whole log)
ARCHIVED = frozenset(ARCHIVED_STATUSES)


class Reaction(Protocol):
    """Something that must happen when a game changes. `react` is idempotent and may be
    called again with the same events (at least once); raising makes the relay try again
    later."""

    name: str

    def wants(self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]) -> bool:
        """Whether this change (`old` None: created) calls for `react` (cheap: on every save)."""

    async def react(self, record: GameRecord, events: Sequence[StoredEvent]) -> None:
        """`record`: the game as stored now; `events`: its events not relayed yet."""


class Relay:
    def __init__(
        self,
        store: RelayLog,
        queue: LeasedQueue,
        reactions: Sequence[Reaction] = (),
        *,
        grace: float = GRACE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.queue = queue
        self.reactions = tuple(reactions)
        self.grace = grace
        self.clock = clock

    def wants(self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]) -> bool:
        return any(reaction.wants(old, new, events) for reaction in self.reactions)

    async def mark(
        self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]
    ) -> int | None:
        """Before the save: mark the game if a reaction wants this change; the mark's token
        (None: nothing to relay). Raises StoreUnavailable (the save must not go ahead
        unmarked)."""
        if not self.reactions or not self.wants(old, new, events):
            return None
        return await self.queue.put(new.id, b"", self.clock() + self.grace) or None

    async def settle(self, game_id: str, token: int | None) -> None:
        """After the save: relay the game now and drop its mark. Never raises: the change is
        saved; a failure leaves the mark to a relay worker (logged)."""
        if token is None:
            return
        try:
            await self.relay(game_id)
            await self.queue.done(game_id, token)
        except Exception as exc:
            log.warning("game %s: reactions left to the relay worker (%s)", game_id, exc)

    async def relay(self, game_id: str) -> None:
        """Hand every reaction the game as stored and its events past the relay cursor, then
        move the cursor past them. A game gone (expired) has nothing left to relay."""
        record, events = await self.store.relay_read(game_id)
        if record is None:
            return
        for reaction in self.reactions:
            await reaction.react(record, events)
        if events:
            await self.store.relayed(game_id, events[-1].seq)

    async def _handle(self, job: Job) -> None:
        await self.relay(job.id)

    def worker(self, **options: Any) -> Worker:
        """The worker that relays the games whose process did not (every replica runs one)."""
        return Worker(self.queue, self._handle, **options)


_job_encoder = msgspec.msgpack.Encoder()


class ArchiveReaction:
    """An ended game (finished, aborted, abandoned) goes to the archive queue with its whole
    log, so that it survives the live store's expiry while the database is down."""

    name = "archive"

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

    def wants(self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]) -> bool:
        return new.status in ARCHIVED and (old is None or not old.ended)

    async def react(self, record: GameRecord, events: Sequence[StoredEvent]) -> None:
        if record.status not in ARCHIVED:
            return
        whole = await self.store.events(record.id, 0, WHOLE_LOG)
        job = ArchiveJob(record=record, events=whole)
        queued = await self.queue.put(record.id, _job_encoder.encode(job), self.clock())
        if queued and self.count is not None:
            self.count()
        if self.wake is not None:
            self.wake()
