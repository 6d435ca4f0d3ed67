"""The one way to react to a game change: the relay tells every reaction of every save.

Every change of a game is saved with its events, atomically, in the game's log (one Lua
script on Redis). The reactions to a change read what they need from there, through this
relay, never from a callback beside the save. Which reactions a change calls for is one
table, made in the composition root (`service.bootstrap.reaction_table`): each kind of
change, every event type of the domain and the record's own facts (`GAME_CREATED`,
`GAME_ENDED`, `DUE_MOVED`), to the reactions it calls for. The relay reads each change once
(`Change`: its event types; the events decoded once, when a reaction reads them) and hands
it to those reactions. A reaction is of one of two kinds, and says which (`durable`):

- *Durable* (`Reaction`: the archive, the platform's webhooks, the tournaments): it must
  happen, whatever process dies where, so the game's event log is its outbox:

  1. Before a save of a kind that a durable reaction is listed for, the relay *marks* the
     game in its leased queue (`relay`), due a few seconds later (`grace`).
  2. The save (the game, its events, its due entry).
  3. Right after it, the saving process relays the game (`relay`: every event of the game's
     log past the game's relay cursor, and the game as stored now, handed to the durable
     reactions their kinds call for; then the cursor moves past them) and settles the mark
     with its token.

  A process that dies anywhere in between leaves the mark: once due, any replica's relay
  worker (`Relay.worker`, a `service.jobs.worker.Worker`) claims it and relays the game. So each
  durable reaction gets every event at least once, whatever process died where; they are
  idempotent (a webhook message has one id per fact, an archive job one per game). A mark
  whose save never happened finds nothing new and goes. A mark that keeps failing is
  quarantined like any job.

- *Local* (`LocalReaction`: the metrics, the deadline poller's wake): a hint or a counter of
  this process, which dies with the process. It is told of every save the process made of a
  kind it is listed for, right after it, from the change itself: no mark, no queue, no store
  round trip, nothing on the hot path but a call.

To add a reaction: a class with `name`, `durable` and `react` (durable, see `Reaction`) or
`saved` (local, see `LocalReaction`), listed in the rows of the kinds it reacts to.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, get_args

import msgspec

from domain.game.model import AnyEvent
from service.core.model import GameRecord
from service.core.ports import RelayLog, StoredEvent
from service.jobs.worker import Job, LeasedQueue, Worker

log = logging.getLogger("ten.relay")

GRACE = 5.0  # seconds a mark waits for the process that made it before any replica takes it

# the record's facts, the kinds of change that are no event of the domain
GAME_CREATED = "game_created"  # a table or game stored for the first time
GAME_ENDED = "game_ended"  # finished, aborted, abandoned or cancelled
DUE_MOVED = "due_moved"  # its next deadline set or moved
RECORD_FACTS = (GAME_CREATED, GAME_ENDED, DUE_MOVED)
EVENT_TYPES = tuple(str(e.__struct_config__.tag) for e in get_args(AnyEvent))


class _Head(msgspec.Struct):
    type: str  # the one field read of an event to tell its kind


_head = msgspec.json.Decoder(_Head)
_event = msgspec.json.Decoder(AnyEvent)


class Change:
    """One change of a game, as every reaction sees it: the game before it (`old`; None when
    created, or when a relay worker hands over what another process saved), the game as
    stored (`new`), its events as stored (`stored`: the archive keeps them so), their types
    in order (`types`), and every kind it is of (`kinds`: its event types and the record's
    facts). The events are those the save's process made (`typed`, never decoded), or else
    decoded once, when a reaction first reads `events` (a relay worker's)."""

    __slots__ = ("_events", "kinds", "new", "old", "stored", "types")

    def __init__(
        self,
        old: GameRecord | None,
        new: GameRecord,
        stored: Sequence[StoredEvent],
        facts: Sequence[str],
        typed: Sequence[AnyEvent] | None = None,
    ) -> None:
        self.old, self.new, self.stored = old, new, stored
        self._events: tuple[AnyEvent, ...] | None = None
        if typed is None:
            self.types = tuple(_head.decode(e.data).type for e in stored)
        else:
            self._events = tuple(typed)
            self.types = tuple(str(e.__struct_config__.tag) for e in self._events)
        self.kinds = frozenset((*self.types, *facts))

    @property
    def events(self) -> tuple[AnyEvent, ...]:
        if self._events is None:
            self._events = tuple(_event.decode(e.data) for e in self.stored)
        return self._events


# a capability's own facts of a change, named by the composition root (`Relay`'s `facts`):
# each kind -> whether a change is of it (told the record's facts and the events)
Fact = Callable[[Change], bool]
Facts = Mapping[str, Fact]
NO_FACTS: Facts = {}


def saved_change(
    old: GameRecord | None,
    new: GameRecord,
    stored: Sequence[StoredEvent],
    typed: Sequence[AnyEvent] | None = None,
    facts: Facts = NO_FACTS,
) -> Change:
    """A save, as its process sees it: the record's facts from the game before and after,
    and the capabilities' `facts` of it; `typed`: its events as the engine made them, if
    the caller has them."""
    kinds = []
    if old is None:
        kinds.append(GAME_CREATED)
    if new.ended and (old is None or not old.ended):
        kinds.append(GAME_ENDED)
    if new.due is not None and (old is None or new.due != old.due):
        kinds.append(DUE_MOVED)
    return _told(Change(old, new, stored, kinds, typed), facts)


def relayed_change(
    record: GameRecord, stored: Sequence[StoredEvent], facts: Facts = NO_FACTS
) -> Change:
    """What a relay hands on: the game as stored now and its events not relayed yet (the
    game before them is not known: an ended game is `GAME_ENDED` again; the reactions are
    idempotent), with the capabilities' `facts` of it."""
    return _told(Change(None, record, stored, (GAME_ENDED,) if record.ended else ()), facts)


def _told(change: Change, facts: Facts) -> Change:
    """The kinds of the capabilities' facts a change is of, added to its kinds."""
    told = [kind for kind, applies in facts.items() if applies(change)]
    if told:
        change.kinds = change.kinds | frozenset(told)
    return change


class Reaction(Protocol):
    """A durable reaction: something that must happen when a game changes, whatever process
    dies where. `react` is idempotent and may be called again with the same events (at least
    once); raising makes the relay try again later. A reaction that does not say `durable`
    is durable."""

    name: str
    durable: Literal[True]

    async def react(self, change: Change) -> None:
        """`change.new`: the game as stored now; its events: those not relayed yet."""


class LocalReaction(Protocol):
    """A local reaction: a hint or a counter of this process (the deadline poller's wake,
    the metrics), which dies with the process, so "at least once" means nothing for it: a
    process that dies between a save and `saved` loses only what dies with it anyway, and
    no other process could use what it would have been told. Hence no mark, no queue and
    no read: it is told of each save this process made, once, right after the save."""

    name: str
    durable: Literal[False]

    def saved(self, change: Change) -> None:
        """The change just saved (`new` as stored, its `due` set). Synchronous and cheap
        (the hot path); an exception is logged and the save stands."""


AnyReaction = Reaction | LocalReaction
# each kind of change (an event type of the domain, a record's fact) -> its reactions, in order
ReactionTable = Mapping[str, Sequence[AnyReaction]]


class Mark(msgspec.Struct, frozen=True):
    """A save about to happen, as `Relay.mark` left it for `Relay.settle`: the change and
    its local reactions, and the durable mark's token (None: no durable reaction wants it)."""

    change: Change
    local: tuple[LocalReaction, ...]
    token: int | None


class Relay:
    """Made before the use cases whose saves it relays; its table is `register`ed once they
    exist (the tournaments' reaction calls the lobby, which saves through the relay)."""

    def __init__(
        self,
        store: RelayLog,
        queue: LeasedQueue,
        table: ReactionTable | None = None,
        *,
        facts: Facts = NO_FACTS,
        grace: float = GRACE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.facts = facts  # the capabilities' own kinds of change (the composition root's)
        self.queue = queue
        self.grace = grace
        self.clock = clock
        self._durable: tuple[tuple[Reaction, frozenset[str]], ...] = ()
        self._local: tuple[tuple[LocalReaction, frozenset[str]], ...] = ()
        self._registered = False
        if table is not None:
            self.register(table)

    def register(self, table: ReactionTable) -> None:
        """The reactions of each kind of change (once: a second table would be a mistake).
        A change calls each reaction once, in the order the table first names them."""
        if self._registered:
            raise RuntimeError("the relay's reaction table is registered once")
        self._registered = True
        order = tuple(dict.fromkeys(r for reactions in table.values() for r in reactions))
        kinds = [(r, frozenset(k for k, rs in table.items() if r in rs)) for r in order]
        self._durable = tuple(rk for rk in kinds if getattr(rk[0], "durable", True))  # type: ignore[misc]
        self._local = tuple(rk for rk in kinds if not getattr(rk[0], "durable", True))  # type: ignore[misc]

    @property
    def reactions(self) -> tuple[Reaction, ...]:
        """Every durable reaction, in the table's order."""
        return tuple(r for r, _ in self._durable)

    @property
    def local(self) -> tuple[LocalReaction, ...]:
        return tuple(r for r, _ in self._local)

    def durable_for(self, kinds: frozenset[str]) -> tuple[Reaction, ...]:
        return tuple(r for r, wanted in self._durable if wanted & kinds)

    def local_for(self, kinds: frozenset[str]) -> tuple[LocalReaction, ...]:
        return tuple(r for r, wanted in self._local if wanted & kinds)

    async def mark(
        self,
        old: GameRecord | None,
        new: GameRecord,
        events: Sequence[StoredEvent],
        typed: Sequence[AnyEvent] | None = None,
    ) -> Mark | None:
        """Before the save: mark the game if a durable reaction is listed for a kind of this
        change; what `settle` needs after the save (None: nothing to tell anyone). Raises
        StoreUnavailable (the save must not go ahead unmarked)."""
        change = saved_change(old, new, events, typed, self.facts)
        token = None
        if self.durable_for(change.kinds):
            token = await self.queue.put(new.id, b"", self.clock() + self.grace) or None
        local = self.local_for(change.kinds)
        if token is None and not local:
            return None
        return Mark(change, local, token)

    async def settle(self, game_id: str, mark: Mark | None, *, now: bool = True) -> None:
        """After the save: tell the local reactions, then relay the game now and drop its
        mark. Never raises: the change is saved; a failure leaves the mark to a relay worker
        (logged). Not `now`: the mark is left to the relay workers, which relay the game
        once it is due (`grace` after it was made), on whichever replica."""
        if mark is None:
            return
        for reaction in mark.local:
            try:
                reaction.saved(mark.change)
            except Exception:
                log.exception("game %s: the %s reaction failed", game_id, reaction.name)
        token = mark.token
        if token is None or not now:
            return
        try:
            await self.relay(game_id)
            await self.queue.done(game_id, token)
        except Exception as exc:
            log.warning("game %s: reactions left to the relay worker (%s)", game_id, exc)

    async def relay(self, game_id: str) -> None:
        """Hand the durable reactions its kinds call for the game as stored and its events
        past the relay cursor, then move the cursor past them. A game gone (expired) has
        nothing left to relay."""
        record, events = await self.store.relay_read(game_id)
        if record is None:
            return
        change = relayed_change(record, events, self.facts)
        for reaction in self.durable_for(change.kinds):
            await reaction.react(change)
        if events:
            await self.store.relayed(game_id, events[-1].seq)

    async def _handle(self, job: Job) -> None:
        await self.relay(job.id)

    def worker(self, **options: Any) -> Worker:
        """The worker that relays the games whose process did not (every replica runs one)."""
        return Worker(self.queue, self._handle, **options)
