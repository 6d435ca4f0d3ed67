"""The use cases: create, read and act on games (load -> engine -> save -> publish).

Free of HTTP and Redis: the store is a port; callers get domain results (records, seats,
events) and render them themselves.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from domain.bots.clock import earliest_deadline, play, time_out
from domain.game.model import Action, DeadlineClock, Event, GameState, Reclaim, Resign
from service.core import idempotency
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.model import GameRecord
from service.core.numbers import ascii_number
from service.core.ports import (
    Fired,
    GameStore,
    IdempotentResponse,
    StoredEvent,
    VersionConflict,
)
from service.core.settings import Settings
from service.core.unit_of_work import Retry, write
from service.games.bot_work import BotWork
from service.games.commands import Act
from service.reactions.relay import Mark, Relay

log = logging.getLogger("ten.games")
# a live game's Redis key outlives its idle expiry by this much (at most a day), so the
# deadline poller ends it (archived as abandoned) before the key expires
IDLE_GRACE_MAX = 24 * 3600
GAME_ID = re.compile(r"[0-9a-f]{20}")  # matched whole (fullmatch): no "...\n"
_event_encoder = msgspec.json.Encoder()


# a seat's player's deadline as their vacations extend it: (player id, since, deadline, now)
Away = Callable[[str, float, float, float], Awaitable[float]]
CHEAP_BOTS = frozenset({"random", "basic"})  # tens of microseconds a decision, no search


def bots_search(state: GameState, action: Action | None = None) -> bool:
    """Whether the step that applies `action` to `state` goes to the bot pool
    (`service.games.bot_work`): a searching bot (`expert`, `master`) may move in it, or no human seat is
    left to stop the bots (the game is played to its end in the step), or the action hands
    a seat to a bot or takes one back (resign, reclaim: rare). Otherwise it is computed
    inline: at most a few moves of `random` and `basic` bots until a human seat decides,
    cheaper than the hop to another process."""
    if isinstance(action, Resign | Reclaim):
        return True
    bots = {p.bot or p.stand_in for p in state.players} - {None}
    if not bots:
        return False
    humans = any(p.bot is None and p.stand_in is None for p in state.players)
    return not humans or not bots <= CHEAP_BOTS


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def encode_events(events: Sequence[Event]) -> list[StoredEvent]:
    return [StoredEvent(e.seq, _event_encoder.encode(e)) for e in events]


class Acted(msgspec.Struct, frozen=True):
    """What an action did: the game as it left it, the acting seat, the events it produced
    (the bots' moves after it included) as stored (their JSON, byte for byte as the log has
    it: the reply carries them as they are); `replayed` when it is the outcome of an earlier
    request with the same idempotency key, handed back unchanged."""

    record: GameRecord
    seat: int
    events: list[StoredEvent]
    replayed: bool


class GameService:
    def __init__(
        self,
        store: GameStore,
        settings: Settings,
        *,
        relay: Relay | None = None,
        clock: Callable[[], float] = time.time,
        random_hex: Callable[[int], str] = secrets.token_hex,
        recent_games: int = 1024,  # about 9 KB each (a 4-player game at its start)
        bots: BotWork | None = None,
        retry: Retry | None = None,
        away: Away | None = None,
    ) -> None:
        # the whole store: the use cases here use `Games` and `EventLog.events`; the lobby
        # (`Listings`), the readiness check (`Lifecycle.ping`) and the composition root (the
        # deadline poller's `DueIndex`, the stream reader, `open`) reach it as `service.store`
        self.store = store
        self.settings = settings
        # the reactions to a change (archive, webhooks, metrics, the deadline poller's
        # wake): told of every save (service.reactions.relay); None: none (tests of the rules alone)
        self.relay = relay
        # where the steps in which bots move are computed (the pool of worker processes);
        # None: a worker thread of this process
        self.bots = bots if bots is not None else BotWork()
        self._clock = clock
        self._random_hex = random_hex
        # The games this process saved or read last, as it saw them: an action starts from
        # here instead of reading the game again (one Redis round trip fewer). Possibly stale
        # (another replica or worker acted since, or the game expired): never trusted for an
        # answer, only for a first try; see `act`. Reads (`get`) always go to the store.
        self._recent: OrderedDict[str, GameRecord] = OrderedDict()
        self._recent_max = recent_games
        # the one retry rule of every write on this store (service.core.unit_of_work)
        self.retry = retry if retry is not None else Retry(settings.games.act_retries)
        # a correspondence deadline as its player's vacations extend it (None: none do)
        self.away = away

    def _remember(self, record: GameRecord) -> None:
        recent = self._recent
        known = recent.get(record.id)
        if known is not None and known.stamp > record.stamp:
            return  # a slower read of an older version: keep the newer one
        recent[record.id] = record
        recent.move_to_end(record.id)
        if len(recent) > self._recent_max:
            recent.popitem(last=False)

    def _ttl(self, record: GameRecord) -> int:
        if record.ended:
            return self.settings.games.finished_ttl
        idle = self.settings.games.idle_ttl
        waits = max(0.0, record.idle_since - self._clock())  # a scheduled table's wait
        return idle + max(60, min(idle, IDLE_GRACE_MAX)) + math.ceil(waits)

    def _with_due(self, record: GameRecord, exact: bool = False) -> GameRecord:
        """The record with its `due`, None once ended, else its idle expiry or, sooner, its
        clock's: the earliest any deadline could come from its last change on
        (`domain.bots.clock.earliest_deadline`: a bound that seldom moves earlier, so saves
        seldom move the index's entry), or with `exact` the running seat's deadline (the
        poller's saves: the next action's save moves the entry earlier if it must)."""
        due = None
        state = record.state
        if not record.ended:
            due = record.idle_since + self.settings.games.idle_ttl
            if state is not None and state.clock is not None:
                deadline = state.clock.deadline
                if not exact:
                    deadline = earliest_deadline(state, record.updated_at)
                if deadline is not None:
                    due = min(due, deadline)
        if due != record.due:
            record = msgspec.structs.replace(record, due=due)
        return record

    def new_game_id(self) -> str:
        return self._random_hex(10)

    def new_seed(self) -> str:
        return self._random_hex(16)  # secret: never leaves the server while the game is live

    def now(self) -> float:
        return self._clock()

    async def store_new(
        self,
        record: GameRecord,
        events: Sequence[StoredEvent],
        remembered: tuple[str, IdempotentResponse] | None = None,
    ) -> GameRecord:
        """Store a game just made (a table, or a game dealt at once) with the idempotent
        outcome to remember (GameExists if its id is taken); the record as stored (its `due`
        set). Its reactions (a game dealt at once starts) are relayed."""
        record = self._with_due(record)
        if remembered is not None:  # the outcome remembered is the record as stored
            key, outcome = remembered
            remembered = (key, msgspec.structs.replace(outcome, record=record))
        mark = await self._mark(None, record, events)
        await self.store.create(record, events, self._ttl(record), remembered)
        self._remember(record)
        await self._settle(record.id, mark)
        return record

    async def store_change(
        self,
        old: GameRecord,
        new: GameRecord,
        events: Sequence[StoredEvent],
        remembered: tuple[str, IdempotentResponse] | None = None,
        *,
        exact_due: bool = False,
        typed: Sequence[Event] | None = None,
        relay_now: bool = True,
    ) -> GameRecord:
        """Save `new` in place of `old` (stamp compared: VersionConflict if it moved on),
        with the idempotent outcome to remember, listings and due index updated; what the
        change calls for (a game ended goes to the archive, webhooks) is relayed
        (`service.reactions.relay`): now, or with `relay_now` False by the relay's workers
        once its mark is due (a save among many at once: its durable reactions off its way).
        The record as stored (its `due` set; `exact_due`: see `_with_due`). `typed`: the
        events as the engine made them (the reactions read them without decoding `events`)."""
        new = self._with_due(new, exact_due)
        if remembered is not None:  # the outcome remembered is the record as stored
            key, outcome = remembered
            remembered = (key, msgspec.structs.replace(outcome, record=new))
        mark = await self._mark(old, new, events, typed)
        await self.store.save(new, old.stamp, events, self._ttl(new), remembered, old)
        self._remember(new)
        await self._settle(new.id, mark, relay_now)
        return new

    async def _mark(
        self,
        old: GameRecord | None,
        new: GameRecord,
        events: Sequence[StoredEvent],
        typed: Sequence[Event] | None = None,
    ) -> Mark | None:
        """Before a save: the relay's mark of the change (None: nothing to tell)."""
        if self.relay is None:
            return None
        return await self.relay.mark(old, new, events, typed)

    async def _settle(self, game_id: str, mark: Mark | None, now: bool = True) -> None:
        """After the save: the reactions, now (a failure leaves them to the relay worker)."""
        if mark is not None and self.relay is not None:
            if now:
                await self.relay.settle(game_id, mark)
            else:
                await self.relay.settle(game_id, mark, now=False)

    async def get(self, game_id: str) -> GameRecord:
        """The game as stored now (never from the recent games)."""
        record = await self.store.load(game_id) if GAME_ID.fullmatch(game_id) else None
        if record is None:
            self._recent.pop(game_id, None)
            raise ServiceError("game_not_found")
        self._remember(record)
        return record

    async def seat_of(self, record: GameRecord, token: str | None) -> int | None:
        """The seat a seat token stands for (None without a token).

        `unauthorized` for a malformed or wrong token, `forbidden` for a valid token of
        another game. Tokens read `<game id>.<seat>.<secret>` and are stored hashed; the seat
        in it is where the token was issued (a table that dropped its empty seats at the
        start moved the others up: looked for among every seat then)."""
        if token is None:
            return None
        game_id, _, rest = token.partition(".")
        seat_text, _, _ = rest.partition(".")
        try:
            seat = ascii_number(seat_text, high=9)
        except ValueError:
            raise ServiceError("unauthorized", "This is not a seat token.") from None
        if game_id != record.id:
            other = await self.store.load(game_id) if GAME_ID.fullmatch(game_id) else None
            if other is not None and _token_matches(other, seat, token):
                raise ServiceError("forbidden", "This seat token belongs to another game.")
            raise ServiceError("unauthorized", "The seat token is not valid.")
        if _token_matches(record, seat, token):
            return seat
        for moved in range(seat):
            if _token_matches(record, moved, token):
                return moved
        raise ServiceError("unauthorized", "The seat token is not valid.")

    async def seat_or_none(self, record: GameRecord, caller: Caller) -> int | None:
        """For a read: the caller's seat, None for a spectator (a player JWT without a seat
        here is one); a bad seat token is refused as in `seat_of`."""
        if caller.kind == "player" and caller.seat_token is None:
            return record.verified_seat_of(caller.player_id)
        return await self.seat_of(record, caller.seat_token)

    async def seat_of_caller(self, record: GameRecord, caller: Caller) -> int | None:
        """The seat of a seat token, or of a player JWT whose `sub` holds a seat verified."""
        seat = await self.seat_or_none(record, caller)
        if seat is None and caller.kind == "player" and caller.seat_token is None:
            raise ServiceError("forbidden", "This player has no seat in this game.")
        return seat

    async def act(self, command: Act) -> Acted:
        """Apply one action of the caller's seat (its seat token or its player JWT), and the
        bot moves it hands the turn to; save with a version check.

        Without `expected_version` a lost race is retried on the fresh state; with it, a
        changed game is `version_mismatch`. An `idempotency_key` seen before with the same
        seat and action (`service.core.idempotency`) hands back the first outcome and changes
        nothing.

        The first try may start from this process's copy of the game (`_recent`) instead of
        reading it: the save's version check refuses it if the game moved on since, and hands
        back the stored game to retry on. Every outcome other than a saved action (a refused
        token, an unknown game, a version mismatch, a rule error) is given only on the game
        as read from the store, so a stale copy costs a retry, never a wrong answer."""
        game_id = command.game_id
        record = self._recent.get(game_id)
        stale = record is not None
        if record is None:
            record = await self.get(game_id)

        def seen(current: GameRecord | None) -> None:
            if current is None:  # expired or deleted since
                self._recent.pop(game_id, None)
            else:
                self._remember(current)

        return await write(
            record,
            lambda record: self._act_on(record, command),
            self.retry,
            gone="game_not_found",
            stale=stale,  # judged again on the stored game
            reread=lambda: self.get(game_id),
            seen=seen,
            read_after_pause=False,  # a game's seats take turns: the conflict's record
        )

    async def _act_on(self, record: GameRecord, request: Act) -> Acted:
        """One try of `act` on `record`; raises VersionConflict if the game moved on."""
        seat = await self.seat_of_caller(record, request.caller)
        if seat is None:
            raise ServiceError("unauthorized")
        if record.state is None or record.stopped:
            raise ServiceError("game_not_started" if record.state is None else "game_over")
        key = request.idempotency_key
        if key is not None:
            fingerprint = idempotency.fingerprint("act", seat, request.action)
            key = idempotency.entry_key("act", request.caller.scope, key)
            prior = await self.store.idempotent_response(record.id, key)
            if prior is not None:
                idempotency.check_same(prior, fingerprint)
                assert prior.seat is not None  # an action's
                return Acted(
                    record=prior.record, seat=prior.seat, events=prior.events, replayed=True
                )
        expected = request.expected_version
        if expected is not None and record.version != expected:
            raise ServiceError(
                "version_mismatch",
                "The action was chosen on version {expected}; the game is at {current}.",
                expected=expected,
                current=record.version,
            )
        now = self._clock()
        state, events = await self.bots.step(
            bots_search(record.state, request.action),
            play,
            record.state,
            seat,
            request.action,
            now,
        )
        new = record.successor(state=state, updated_at=now)
        stored = encode_events(events)
        remembered = None
        if key is not None:
            outcome = IdempotentResponse(
                fingerprint=fingerprint, seat=seat, record=new, events=stored
            )
            remembered = (key, outcome)
        new = await self.store_change(record, new, stored, remembered, typed=events)
        return Acted(record=new, seat=seat, events=stored, replayed=False)

    async def fire_due(self, game_id: str) -> Fired:
        """Deal with a game whose entry in the due index came (the deadline poller calls
        this, on one replica for one entry): a seat whose deadline passed times out (its
        move made by the game's bot, `domain.bots.clock.time_out`); a game nobody touched for
        TEN_IDLE_TTL is ended as abandoned (archived so), a table as cancelled. Each is an
        ordinary save against the version read: a game that moved on meanwhile is left
        alone (`conflict`), and one not due yet only has its entry moved (`moved_on`)."""
        record = await self.store.load(game_id) if GAME_ID.fullmatch(game_id) else None
        if record is None:
            return Fired("gone", None, None)
        if record.ended:
            return Fired("gone", None, record.stamp)
        now = self._clock()
        if record.due is None or record.due > now:
            return Fired("moved_on", record.due, record.stamp)
        clock = record.state.clock if record.state is not None else None
        late = None
        postponed = await self._postponed(record, now)
        if postponed is not None:
            # its player was away: the deadline moved by that time, the game waits on
            assert record.state is not None
            assert clock is not None
            outcome, events = "moved_on", []
            later = msgspec.structs.replace(clock, deadline=postponed)
            new = record.successor(state=msgspec.structs.replace(record.state, clock=later))
        elif clock is not None and clock.deadline is not None and clock.deadline <= now:
            outcome, late = "timeout", now - clock.deadline
            # the game's bot moves for the seat
            state, events = await self.bots.step(True, time_out, record.state, now)
            new = record.successor(state=state, updated_at=now)
        elif record.idle_since + self.settings.games.idle_ttl > now:
            # the due was a bound the running seat's deadline came after: saved at that
            # deadline (version and idle time unchanged), so the index follows the record
            outcome, events = "moved_on", []
            new = record.successor()
        elif record.state is None:
            assert record.table is not None
            outcome, events = "cancelled", []
            table = msgspec.structs.replace(
                record.table, cancelled=True, version=record.table.version + 1
            )
            new = record.successor(table=table, updated_at=now)
        else:
            outcome, events = "abandoned", []
            new = record.successor(abandoned=True, updated_at=now)
        try:
            new = await self.store_change(
                record, new, encode_events(events), exact_due=True, typed=events
            )
        except VersionConflict as conflict:
            current = conflict.current
            if current is None:
                return Fired("gone", None, None)
            return Fired("conflict", current.due, current.stamp)
        return Fired(outcome, new.due, new.stamp, late)

    async def _postponed(self, record: GameRecord, now: float) -> float | None:
        """The later deadline of a correspondence seat whose deadline came while its
        player's vacation stood their clock still (None: it stands, or came not yet)."""
        state = record.state
        clock = None if state is None else state.clock
        if self.away is None or clock is None or clock.seat is None or clock.deadline is None:
            return None
        if clock.deadline > now or not isinstance(clock.control, DeadlineClock):
            return None
        ids = record.player_ids
        player_id = ids[clock.seat] if clock.seat < len(ids) else None
        if player_id is None:
            return None
        original = clock.since + clock.control.hours * 3600
        extended = await self.away(player_id, clock.since, original, now)
        return extended if extended > now else None

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        await self.get(game_id)
        return await self.store.events(game_id, after, limit)


def token_matches(expected_hash: str | None, token: str | None) -> bool:
    """Whether `token` is the credential (seat, host token, invite) stored as this hash;
    compared in constant time."""
    if expected_hash is None or token is None:
        return False
    return hmac.compare_digest(expected_hash, hash_token(token))


def _token_matches(record: GameRecord, seat: int, token: str) -> bool:
    hashes = record.token_hashes
    return 0 <= seat < len(hashes) and token_matches(hashes[seat], token)
