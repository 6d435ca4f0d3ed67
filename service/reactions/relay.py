"""The one way to react to a game change: the relay tells every reaction of every save.

Every change of a game is saved with its events, atomically, in the game's log (one Lua
script on Redis). The reactions to a change read what they need from there, through this
relay, never from a callback beside the save. A reaction is of one of two kinds, and says
which (`durable`):

- *Durable* (`Reaction`: the archive, the platform's webhooks): it must happen, whatever
  process dies where, so the game's event log is its outbox:

  1. Before a save that a reaction wants (`Reaction.wants`: a game started, a seat taken
     over, a game ended), the relay *marks* the game in its leased queue (`relay`), due a
     few seconds later (`grace`).
  2. The save (the game, its events, its due entry).
  3. Right after it, the saving process relays the game (`relay`: every event of the game's
     log past the game's relay cursor, and the game as stored now, handed to every durable
     reaction; then the cursor moves past them) and settles the mark with its token.

  A process that dies anywhere in between leaves the mark: once due, any replica's relay
  worker (`Relay.worker`, a `service.jobs.worker.Worker`) claims it and relays the game. So each
  durable reaction gets every event at least once, whatever process died where; they are
  idempotent (a webhook message has one id per fact, an archive job one per game). A mark
  whose save never happened finds nothing new and goes. A mark that keeps failing is
  quarantined like any job.

- *Local* (`LocalReaction`: the metrics, the deadline poller's wake): a hint or a counter of
  this process, which dies with the process. It is told of every save the process made,
  right after it, from the change itself (the old record, the new one, the events): no mark,
  no queue, no store round trip, nothing on the hot path but a call.

To add a reaction: a class with `name`, `durable` and either `wants` and `react` (durable,
see `Reaction`) or `saved` (local, see `LocalReaction`), listed in the composition root
(`service.bootstrap.game_service`, its `reactions = [...]` line). Nothing else changes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import msgspec

from service.core.model import GameRecord
from service.core.ports import ArchiveJob, EventLog, RelayLog, StoredEvent
from service.history.archive import ARCHIVED_STATUSES
from service.jobs.worker import Job, LeasedQueue, Worker

log = logging.getLogger("ten.relay")

GRACE = 5.0  # seconds a mark waits for the process that made it before any replica takes it
WHOLE_LOG = 1_000_000  # events of one game at most (an archive job carries the whole log)
ARCHIVED = frozenset(ARCHIVED_STATUSES)


class Reaction(Protocol):
    """A durable reaction: something that must happen when a game changes, whatever process
    dies where. `react` is idempotent and may be called again with the same events (at least
    once); raising makes the relay try again later. A reaction that does not say `durable`
    is durable."""

    name: str
    durable: Literal[True]

    def wants(self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]) -> bool:
        """Whether this change (`old` None: created) calls for `react` (cheap: on every save)."""

    async def react(self, record: GameRecord, events: Sequence[StoredEvent]) -> None:
        """`record`: the game as stored now; `events`: its events not relayed yet."""


class LocalReaction(Protocol):
    """A local reaction: a hint or a counter of this process (the deadline poller's wake,
    the metrics), which dies with the process, so "at least once" means nothing for it: a
    process that dies between a save and `saved` loses only what dies with it anyway, and
    no other process could use what it would have been told. Hence no mark, no queue and
    no read: it is told of each save this process made, once, right after the save."""

    name: str
    durable: Literal[False]

    def saved(self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]) -> None:
        """The change just saved (`old` None: created; `new` as stored, its `due` set;
        `events` its new events). Synchronous and cheap (every save, the hot path); an
        exception is logged and the save stands."""


class Mark(msgspec.Struct, frozen=True):
    """A save about to happen, as `Relay.mark` left it for `Relay.settle`: the change (for
    the local reactions) and the durable mark's token (None: no durable reaction wants it)."""

    old: GameRecord | None
    new: GameRecord
    events: Sequence[StoredEvent]
    token: int | None


class Relay:
    def __init__(
        self,
        store: RelayLog,
        queue: LeasedQueue,
        reactions: Sequence[Reaction | LocalReaction] = (),
        *,
        grace: float = GRACE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.queue = queue
        self.reactions = tuple(r for r in reactions if getattr(r, "durable", True))
        self.local = tuple(r for r in reactions if not getattr(r, "durable", True))
        self.grace = grace
        self.clock = clock

    def wants(self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]) -> bool:
        """Whether a durable reaction wants this change (it is marked then)."""
        return any(reaction.wants(old, new, events) for reaction in self.reactions)

    async def mark(
        self, old: GameRecord | None, new: GameRecord, events: Sequence[StoredEvent]
    ) -> Mark | None:
        """Before the save: mark the game if a durable reaction wants this change; what
        `settle` needs after the save (None: nothing to tell anyone). Raises
        StoreUnavailable (the save must not go ahead unmarked)."""
        token = None
        if self.reactions and self.wants(old, new, events):
            token = await self.queue.put(new.id, b"", self.clock() + self.grace) or None
        if token is None and not self.local:
            return None
        return Mark(old, new, events, token)

    async def settle(self, game_id: str, mark: Mark | None) -> None:
        """After the save: tell the local reactions, then relay the game now and drop its
        mark. Never raises: the change is saved; a failure leaves the mark to a relay worker
        (logged)."""
        if mark is None:
            return
        for reaction in self.local:
            try:
                reaction.saved(mark.old, mark.new, mark.events)
            except Exception:
                log.exception("game %s: the %s reaction failed", game_id, reaction.name)
        token = mark.token
        if token is None:
            return
        try:
            await self.relay(game_id)
            await self.queue.done(game_id, token)
        except Exception as exc:
            log.warning("game %s: reactions left to the relay worker (%s)", game_id, exc)

    async def relay(self, game_id: str) -> None:
        """Hand every durable reaction the game as stored and its events past the relay
        cursor, then move the cursor past them. A game gone (expired) has nothing left to
        relay."""
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
    durable = True

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
        # the events not relayed yet are the whole log when none was relayed before (the
        # log starts at seq 1, without gaps): no second read of it
        whole = list(events)
        if not whole or whole[0].seq != 1:
            whole = await self.store.events(record.id, 0, WHOLE_LOG)
        job = ArchiveJob(record=record, events=whole)
        queued = await self.queue.put(record.id, _job_encoder.encode(job), self.clock())
        if queued and self.count is not None:
            self.count()
        if self.wake is not None:
            self.wake()
