"""The ports the use cases need; adapters in `infra/` implement them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

import msgspec

from domain.model import GameState


class GameRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A live game as stored: the engine state (secrets included) and the seat credentials."""

    id: str
    state: GameState
    token_hashes: tuple[str | None, ...]  # sha256 of each human seat's token; None for bots
    created_at: float  # unix seconds
    updated_at: float
    player_ids: tuple[str | None, ...] = ()  # the calling platform's id of each seat's player

    @property
    def version(self) -> int:
        return self.state.version


class StoredEvent(msgspec.Struct, frozen=True, array_like=True):
    seq: int
    data: bytes  # the event as JSON, encoded once when it happened


class IdempotentResponse(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of an action sent with an `Idempotency-Key`, handed back on retries: the
    game as that action left it, the acting seat and the events it produced (the API renders
    it as it rendered the first answer, so a retry gets the same bytes)."""

    fingerprint: str  # seat + request body, hashed: the same key with another body is refused
    seat: int
    record: GameRecord
    events: list[StoredEvent]


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


class StoreUnavailable(Exception):
    """The store cannot be reached (the API answers 503 with Retry-After)."""


class Save(NamedTuple):
    """One `GameStore.save`: the game as it is now, the version it must still be at in the
    store, its new events, its expiry and the idempotent response to remember (its key)."""

    record: GameRecord
    expected_version: int
    events: Sequence[StoredEvent]
    ttl: int
    idempotency: tuple[str, IdempotentResponse] | None


class GameStore(Protocol):
    async def create(self, record: GameRecord, events: Sequence[StoredEvent], ttl: int) -> None:
        """Store a new game and its first events (ids are unique: no overwrite)."""

    async def load(self, game_id: str) -> GameRecord | None: ...

    async def save(
        self,
        record: GameRecord,
        expected_version: int,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
    ) -> None:
        """Atomically replace the game (only if it is still at `expected_version`), append
        its new events and remember the idempotent response. Otherwise raises
        VersionConflict with `current` the game as stored then (None if there is none).

        Here once for every store (they subclass GameStore): each one implements `write`."""
        await self.write(Save(record, expected_version, events, ttl, idempotency))

    async def write(self, save: Save) -> None:
        """Do a `save` (what each store implements)."""
        raise NotImplementedError

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        """Events with seq > after, oldest first, at most `limit`."""

    async def wait_events(self, game_id: str, after: int, timeout: float) -> list[StoredEvent]:
        """Like `events`, but waits up to `timeout` seconds for one to arrive."""

    async def idempotent_response(self, game_id: str, key: str) -> Remembered | None: ...

    async def ping(self) -> None:
        """Raise StoreUnavailable when the store cannot serve."""

    async def live_games(self) -> int:
        """Games stored, neither finished nor expired, across every replica (for metrics;
        may lag an idle game's expiry by a minute or so)."""

    async def archive_handed_over(self, game_id: str) -> None:
        """The finished game is in the archive outbox: `unarchived` no longer reports it."""

    async def unarchived(self, limit: int) -> list[GameRecord]:
        """Finished games whose hand-off to the archive outbox was never confirmed with
        `archive_handed_over` (every game is tracked from its creation): the process that
        finished one died, or the outbox failed, between the final save and the hand-off.
        Each tracked game is looked at again once it has not been for a while (the Redis
        store: a minute); expired ones stop being tracked. At most `limit` (the Redis store
        looks at `limit` tracked games per call, finished or not)."""

    async def close(self) -> None: ...


class ArchiveJob(msgspec.Struct, frozen=True, kw_only=True):
    """A finished game waiting to be archived, with its whole event log (so it survives the
    live store expiring the game while the database is down)."""

    record: GameRecord
    events: list[StoredEvent]


class ArchiveOutbox(Protocol):
    """Finished games not archived yet. Entries leave only once the archive has them."""

    async def put(self, job: ArchiveJob) -> None: ...

    async def pending(self, limit: int) -> list[ArchiveJob]: ...

    async def done(self, game_id: str) -> None: ...
