"""The ports the use cases need; adapters in `infra/` implement them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple, Protocol

import msgspec

from domain.model import GameState, Rules, TimeControl

GameStatus = Literal["open", "active", "finished", "cancelled", "aborted", "abandoned"]
OPEN_INDEX = "open"  # the index of the public tables waiting for players


def player_index(player_id: str) -> str:
    """The index of a player's games (open tables they sit at and live games)."""
    return f"player:{player_id}"


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    """A seat of a table created open, as the lobby sees it."""

    name: str | None = None  # who sits there (a player's or a bot's name); None while empty
    bot: str | None = None  # the level of a bot seat
    player_id: str | None = None  # reserved for this player, or taken by them
    verified: bool = False  # player_id proven: a player JWT with that `sub`, or the platform
    open: bool = False  # created open to anyone (else reserved for player_id, or a bot)

    @property
    def taken(self) -> bool:
        return self.name is not None


class Table(msgspec.Struct, frozen=True, kw_only=True):
    """A game created open, while it waits for its players: its seats and how it starts."""

    seats: tuple[Seat, ...]
    invite_hash: str | None = None  # private table: sha256 of its invite code (never listed)
    fill: Literal["bots", "drop"] = "bots"  # what empty seats become if the host starts early
    fill_bot: str = "basic"
    starting_seat: int | None = None
    deck: tuple[str, ...] | None = None
    rules: Rules | None = None
    clock: TimeControl | None = None  # the game's time control, started with the game
    version: int = 0  # +1 per join, leave and reissued token while open
    cancelled: bool = False

    @property
    def private(self) -> bool:
        return self.invite_hash is not None


class GameRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A game as stored: the engine state (secrets included) and the seat credentials; a game
    created open has no state until it starts (`table` says who sits where until then)."""

    id: str
    state: GameState | None
    token_hashes: tuple[str | None, ...]  # sha256 of each human seat's token; None for bots
    created_at: float  # unix seconds
    updated_at: float
    player_ids: tuple[str | None, ...] = ()  # the calling platform's id of each seat's player
    verified: tuple[bool, ...] = ()  # per seat: player_id proven (JWT `sub` or the platform)
    custom_deck: bool = False  # dealt from a deck the creator gave (never ranked)
    table: Table | None = None  # the lobby: present for games created open
    host_id: str | None = None  # the host's player_id (a JWT), or None
    host_token_hash: str | None = None  # sha256 of the host credential of an anonymous host
    aborted: bool = False  # stopped by the host or the platform while live (never ranked)
    abandoned: bool = False  # ended by its idle expiry: nobody acted for TEN_IDLE_TTL
    # When something must next happen to it with nobody calling (unix seconds): its clock's
    # deadline, else its idle expiry; None once ended. Set by the use cases on every save;
    # the stores keep an index of it (`GameStore.due_games`).
    due: float | None = None
    # Set by every save of this release (`successor`); -1 in records made otherwise (older
    # releases, tests), where the version alone tells saves apart.
    revision: int = -1

    @property
    def stamp(self) -> int:
        """What the stores compare-and-set on: it grows with every save, also a save that
        does not change the game's version (a seat token reissued in a live game). The
        version until such a save, so a replica of an older release, mid-upgrade, agrees."""
        return self.revision if self.revision > self.version else self.version

    def successor(self, **changes: object) -> GameRecord:
        """This record changed, to be saved: its stamp moves past the old one."""
        new = msgspec.structs.replace(self, **changes)
        msgspec.structs.force_setattr(new, "revision", max(self.stamp + 1, new.version))
        return new

    @property
    def version(self) -> int:
        if self.state is None:
            assert self.table is not None
            return self.table.version
        return self.state.version

    @property
    def status(self) -> GameStatus:
        if self.state is None:
            return "cancelled" if self.table is not None and self.table.cancelled else "open"
        if self.aborted:
            return "aborted"
        if self.abandoned:
            return "abandoned"
        return "finished" if self.state.phase == "finished" else "active"

    @property
    def stopped(self) -> bool:
        """Ended while live, with no results: aborted by its host or the platform, or
        abandoned (its idle expiry)."""
        return self.aborted or self.abandoned

    @property
    def ended(self) -> bool:
        """Nothing more will happen to it (finished, aborted, abandoned or cancelled)."""
        return self.status in ("finished", "aborted", "cancelled", "abandoned")

    def verified_seat_of(self, player_id: str | None) -> int | None:
        """The seat `player_id` holds with a proven identity (a table's taken seat while
        open, the game's seat since), None if none."""
        if player_id is None:
            return None
        if self.state is None:
            assert self.table is not None
            for seat, s in enumerate(self.table.seats):
                if s.taken and s.verified and s.player_id == player_id:
                    return seat
            return None
        verified = self.verified
        for seat, pid in enumerate(self.player_ids):
            if pid == player_id and seat < len(verified) and verified[seat]:
                return seat
        return None

    def indexes(self) -> frozenset[str]:
        """The listings this game belongs in now (`GameStore.list_games`): a public open
        table in the lobby's; an open or live game in each of its players'."""
        status = self.status
        if status not in ("open", "active"):
            return frozenset()
        found = set()
        if status == "open":
            assert self.table is not None
            if not self.table.private:
                found.add(OPEN_INDEX)
            ids = [s.player_id for s in self.table.seats]
        else:
            ids = list(self.player_ids)
        found.update(player_index(p) for p in ids if p is not None)
        return frozenset(found)


class DueGame(NamedTuple):
    """An entry of the stores' due index: a game and when it is due (unix seconds)."""

    game_id: str
    at: float


class Fired(NamedTuple):
    """What looking at a due game did (`GameService.fire_due`), for the poller to settle its
    entry (`GameStore.settle_due`) and count: `outcome` is timeout | abandoned | cancelled |
    moved_on | gone | conflict; `due` and `stamp` of the game as it was left (`stamp` None:
    the game is gone, its entry goes whatever it holds); `late` seconds past the deadline
    for a timeout."""

    outcome: str
    due: float | None
    stamp: int | None
    late: float | None = None


class StoredEvent(msgspec.Struct, frozen=True, array_like=True):
    seq: int
    data: bytes  # the event as JSON, encoded once when it happened


class IdempotentResponse(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of a command sent with an `Idempotency-Key` (`service.idempotency`),
    stored with its effect and handed back on retries: the game as the command left it, the
    acting or joining seat (None for a create), the events it produced, and the credentials
    the first answer handed out (a join's seat token, a create's seat and host tokens and
    invite code), for the API to render it as it rendered the first answer."""

    fingerprint: str  # the operation and the decoded command, hashed
    seat: int | None
    record: GameRecord
    events: list[StoredEvent]
    tokens: list[tuple[int, str]] = []  # (seat, seat token) handed out
    host_token: str | None = None
    invite_code: str | None = None


class RenderedResponse(msgspec.Struct, frozen=True, kw_only=True):
    """An idempotent response as the releases before `IdempotentResponse` kept it: the first
    answer itself, rendered. No longer written; read so that a retry sent across a rolling
    upgrade, within the key's lifetime, still gets its first answer (the stores decode an
    entry as `IdempotentResponse` first, as this when that fails)."""

    fingerprint: str
    status: int
    body: bytes
    version: int


# what an Idempotency-Key may be remembered as: the outcome, or an older release's answer
Remembered = IdempotentResponse | RenderedResponse


class VersionConflict(Exception):
    """The stored game is no longer at the version the caller read.

    A failed `save` names the game as stored when it refused (`current`; None when there is
    no such game any more), so the caller can retry on it without reading it again."""

    def __init__(self, message: str = "", *, current: GameRecord | None = None) -> None:
        super().__init__(message)
        self.current = current


class GameExists(VersionConflict):
    """`GameStore.create` refused: a game of that id is stored. `remembered`: what that game
    remembers under the entry's key the create was given (None: nothing)."""

    def __init__(self, game_id: str, *, remembered: Remembered | None = None) -> None:
        super().__init__(f"game {game_id} exists")
        self.remembered = remembered


class StoreUnavailable(Exception):
    """The store cannot be reached (the API answers 503 with Retry-After)."""


class Save(NamedTuple):
    """One `GameStore.save`: the game as it is now, the stamp (GameRecord.stamp) it must still be at in the
    store, its new events, its expiry and the idempotent response to remember (its key)."""

    record: GameRecord
    expected_stamp: int
    events: Sequence[StoredEvent]
    ttl: int
    idempotency: tuple[str, IdempotentResponse] | None
    previous: GameRecord | None = None  # the game as read (its index memberships)


class LogNews(Protocol):
    """Wake-ups for the event logs of the games one process watches: a hint that a game's log
    may have grown, never the events themselves (the log stays the source of truth: the
    reader reads it with `GameStore.events_of` after each hint). A game is reported once its
    subscription is in place (so a read then misses nothing) and again after every
    reconnection (wake-ups may have been lost meanwhile)."""

    def watch(self, game_id: str) -> None:
        """Start reporting this game (its first report: once the subscription holds)."""

    def unwatch(self, game_id: str) -> None:
        """Stop reporting this game."""

    async def next(self, timeout: float) -> set[str]:
        """The games reported since the last call, waiting up to `timeout` seconds for one
        (empty: none came). Raises StoreUnavailable when the store cannot be reached; the
        subscriber is then done (the caller takes a new one)."""

    async def close(self) -> None: ...


class GameStore(Protocol):
    async def create(
        self,
        record: GameRecord,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
    ) -> None:
        """Store a new game, its first events and the idempotent response to remember (its
        entry's key), atomically, and add it to its listings (`GameRecord.indexes`). Ids
        are unique: no overwrite; a game of that id raises GameExists, with the response
        remembered under the entry's key when one is asked for and stored."""

    async def load(self, game_id: str) -> GameRecord | None: ...

    async def save(
        self,
        record: GameRecord,
        expected_stamp: int,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
        previous: GameRecord | None = None,
    ) -> None:
        """Atomically replace the game (only if it is still at `expected_stamp`), append
        its new events and remember the idempotent response. Otherwise raises
        VersionConflict with `current` the game as stored then (None if there is none).
        With `previous` (the game as the caller read it), the listings it leaves and joins
        (`GameRecord.indexes`) are updated after the save; without it, none is left.

        Here once for every store (they subclass GameStore): each one implements `write`."""
        await self.write(Save(record, expected_stamp, events, ttl, idempotency, previous))

    async def write(self, save: Save) -> None:
        """Do a `save` (what each store implements)."""
        raise NotImplementedError

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        """Events with seq > after, oldest first, at most `limit`."""

    async def events_of(self, after: Mapping[str, int], limit: int) -> dict[str, list[StoredEvent]]:
        """`events` of several games in one round trip: game id -> its events with seq >
        `after[game id]`, oldest first, at most `limit` each (a game without any: absent)."""

    def log_news(self) -> LogNews:
        """A new subscriber to the growth of games' event logs (the process's one stream
        reader, `service.watchers`, holds one: one connection, or one per Cluster node,
        whatever the number of games and streams)."""

    async def idempotent_response(self, game_id: str, key: str) -> Remembered | None: ...

    async def list_games(
        self, index: str, before: tuple[float, str] | None, limit: int
    ) -> list[GameRecord]:
        """The games of one listing (`OPEN_INDEX`, `player_index(id)`), newest first by
        `created_at` then id, strictly after the keyset cursor `before` = (created_at, id) of
        the last game of the previous page; at most `limit`. Only games whose `indexes()` name
        the listing now are returned (entries left by expired or changed games are dropped
        on the way). Cost: O(log n + limit), never a scan of the keyspace."""

    async def ping(self) -> None:
        """Raise StoreUnavailable when the store cannot serve."""

    async def live_games(self) -> int:
        """Games stored, neither finished nor expired, across every replica (for metrics;
        may lag an idle game's expiry by a minute or so)."""

    # -- the relay (service.relay): the event log is the outbox of the reactions to a change

    async def relay_read(self, game_id: str) -> tuple[GameRecord | None, list[StoredEvent]]:
        """The game as stored (None: gone) and its events past its relay cursor, oldest
        first, in one round trip."""

    async def relayed(self, game_id: str, seq: int) -> None:
        """Move the game's relay cursor to `seq` (never back; nothing for a game gone)."""

    # -- the due index: when each game not ended must next be looked at (GameRecord.due).
    # `create` adds a game's entry; `save` lowers it when the game's due moved earlier and
    # removes it when the game ended. The entry is never later than the stored game's due
    # (it may be earlier: the poller then finds the game not due and settles it at its
    # due); every write of an entry carries the stamp of the record it was read from, and
    # an entry written from an older stamp than the one it holds is ignored, so a slow
    # writer never moves a newer game's entry. A save that died between the game and its
    # entry leaves the entry at the game's previous due: fired late, never lost.

    async def due_games(self, now: float, limit: int) -> list[DueGame]:
        """Entries due at `now` or before and not under a live claim (another poller is
        firing them), earliest first, at most `limit`. A claim may still be lost to another
        poller between this read and `claim_due`: that is what `claim_due` settles."""

    async def claim_due(self, game_id: str, now: float, lease: float) -> bool:
        """Claim a due entry for `lease` seconds, atomically (a Lua compare-and-set on
        Redis): True for exactly one caller while the entry is due and not claimed (or its
        claim lapsed: the replica holding it died). False when not due or claimed."""

    async def settle_due(self, game_id: str, due: float | None, stamp: int | None) -> None:
        """After a claimed entry was dealt with: set it to `due` (None: remove it), unless
        it holds a newer stamp than `stamp` already (`stamp` None: the game is gone, remove
        the entry whatever it holds); release the claim either way."""

    async def open(self) -> None:
        """Get ready before the first request (the Redis Cluster store learns the cluster's
        nodes and slots here). Nothing to do for most stores."""

    async def close(self) -> None: ...


class ArchiveJob(msgspec.Struct, frozen=True, kw_only=True):
    """A finished game waiting to be archived, with its whole event log (so it survives the
    live store expiring the game while the database is down)."""

    record: GameRecord
    events: list[StoredEvent]
