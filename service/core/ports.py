"""The ports the use cases need; adapters in `infra/` implement them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

import msgspec

from service.core.model import GameRecord, TournamentRecord
from service.core.quotas import QuotaStore
from service.core.unit_of_work import Conflict


class DueGame(NamedTuple):
    """An entry of the stores' due index: a game and when it is due (unix seconds)."""

    game_id: str
    at: float


class Fired(NamedTuple):
    """What looking at a due game did (`GameService.fire_due`), for the poller to settle its
    entry (`DueIndex.settle_due`) and count: `outcome` is timeout | abandoned | cancelled |
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
    """The outcome of a command sent with an `Idempotency-Key` (`service.core.idempotency`),
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


class VersionConflict(Conflict["GameRecord"]):
    """The stored game is no longer at the version the caller read.

    A failed `save` names the game as stored when it refused (`current`; None when there is
    no such game any more), so the caller can retry on it without reading it again."""


class GameExists(VersionConflict):
    """`Games.create` refused: a game of that id is stored. `remembered`: what that game
    remembers under the entry's key the create was given (None: nothing)."""

    def __init__(self, game_id: str, *, remembered: IdempotentResponse | None = None) -> None:
        super().__init__(f"game {game_id} exists")
        self.remembered = remembered


class StoreUnavailable(Exception):
    """The store cannot be reached (the API answers 503 with Retry-After)."""


class Save(NamedTuple):
    """One `Games.save`: the game as it is now, the stamp (GameRecord.stamp) it must still be at in the
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
    reader reads it with `EventLog.events_of` after each hint). A game is reported once its
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


# -- the store, split by consumer: each use case depends on the narrow ports it uses; the
# adapters (infra/memory_store.py, infra/redis_store.py) and the instrumented decorator
# implement all of them, as `GameStore`.


class Games(Protocol):
    """The stored games, each written with a compare-and-set on its stamp together with its
    new events and the idempotent response to remember (the game service, the lobby)."""

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

    async def idempotent_response(self, game_id: str, key: str) -> IdempotentResponse | None: ...


class EventLog(Protocol):
    """The games' event logs and the news of their growth (the game service's event pages,
    the archive reaction, the stream reader `infra.watchers`)."""

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        """Events with seq > after, oldest first, at most `limit`."""

    async def events_of(self, after: Mapping[str, int], limit: int) -> dict[str, list[StoredEvent]]:
        """`events` of several games in one round trip: game id -> its events with seq >
        `after[game id]`, oldest first, at most `limit` each (a game without any: absent)."""

    def log_news(self) -> LogNews:
        """A new subscriber to the growth of games' event logs (the process's one stream
        reader, `infra.watchers`, holds one: one connection, or one per Cluster node,
        whatever the number of games and streams)."""


class Listings(Protocol):
    """The listings of games (the lobby's pages) and the count of games in play (`GET
    /metrics`)."""

    async def list_games(
        self, index: str, before: tuple[float, str] | None, limit: int
    ) -> list[GameRecord]:
        """The games of one listing (`OPEN_INDEX`, `player_index(id)`), newest first by
        `created_at` then id, strictly after the keyset cursor `before` = (created_at, id) of
        the last game of the previous page; at most `limit`. Only games whose `indexes()` name
        the listing now are returned (entries left by expired or changed games are dropped
        on the way). Cost: O(log n + limit), never a scan of the keyspace."""

    async def live_games(self) -> int:
        """Games stored, neither finished nor expired, across every replica (for metrics;
        may lag an idle game's expiry by a minute or so)."""


class RelayLog(Protocol):
    """The relay's cursor in each game's event log (`service.reactions.relay`): the event log is the
    outbox of the reactions to a change."""

    async def relay_read(self, game_id: str) -> tuple[GameRecord | None, list[StoredEvent]]:
        """The game as stored (None: gone) and its events past its relay cursor, oldest
        first, in one round trip."""

    async def relayed(self, game_id: str, seq: int) -> None:
        """Move the game's relay cursor to `seq` (never back; nothing for a game gone)."""


class DueIndex(Protocol):
    """The due index (the deadline poller, `service.reactions.deadlines`): when each game not ended
    must next be looked at (GameRecord.due).

    `create` adds a game's entry; `save` lowers it when the game's due moved earlier and
    removes it when the game ended. The entry is never later than the stored game's due
    (it may be earlier: the poller then finds the game not due and settles it at its
    due); every write of an entry carries the stamp of the record it was read from, and
    an entry written from an older stamp than the one it holds is ignored, so a slow
    writer never moves a newer game's entry. A save that died between the game and its
    entry leaves the entry at the game's previous due: fired late, never lost."""

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


class Lifecycle(Protocol):
    """The store's connection: opened at start, checked by `GET /ready`, closed at the end
    (the composition root, the API's readiness check)."""

    async def ping(self) -> None:
        """Raise StoreUnavailable when the store cannot serve."""

    async def open(self) -> None:
        """Get ready before the first request (the Redis Cluster store learns the cluster's
        nodes and slots here). Nothing to do for most stores."""

    async def close(self) -> None: ...


class GameStore(Games, EventLog, Listings, RelayLog, DueIndex, Lifecycle, QuotaStore, Protocol):
    """Every port of the store at once: what the adapters in `infra/` and the instrumented
    decorator (`infra.observability.instrumented_store`) implement, and what the composition root hands
    around."""


class ArchiveJob(msgspec.Struct, frozen=True, kw_only=True):
    """A finished game waiting to be archived, with its whole event log (so it survives the
    live store expiring the game while the database is down)."""

    record: GameRecord
    events: list[StoredEvent]


class TournamentConflict(Conflict["TournamentRecord"]):
    """`TournamentStore.save` refused: the stored tournament is not at the version the
    caller read. `current`: the tournament as stored then (None: there is none)."""

    def __init__(self, current: TournamentRecord | None) -> None:
        super().__init__("the tournament changed", current=current)


class TournamentStore(Protocol):
    """The tournaments (`service.tournaments.use_cases`), each written whole with a compare-and-set
    on its version (infra/memory_tournaments.py, infra/redis_tournaments.py)."""

    async def create_tournament(self, record: TournamentRecord) -> TournamentRecord | None:
        """Store a new tournament (version 0) and list it; None when stored, else the
        tournament already stored under that id (nothing is overwritten)."""

    async def load_tournament(self, tournament_id: str) -> TournamentRecord | None: ...

    async def save_tournament(self, record: TournamentRecord) -> None:
        """Replace the tournament if it is still at `record.version - 1`; else raise
        TournamentConflict with the one stored."""

    async def list_tournaments(
        self, before: tuple[float, str] | None, limit: int
    ) -> list[TournamentRecord]:
        """Newest first by (created_at, id), strictly after the keyset cursor `before`."""
