"""What correspondence play keeps per player, and the ports of its stores.

A player's record (`PlayerRecord`) holds their push subscriptions and their vacation; it is
written whole with a compare-and-set on its version, through the one write loop
(`service.core.unit_of_work.write`), like a tournament. Who is watching which game is no
record: it is a fact with a lifetime (`Presence`), said again while it holds."""

from __future__ import annotations

from typing import Protocol

import msgspec

from service.core.unit_of_work import Conflict


class PushKeys(msgspec.Struct, frozen=True, kw_only=True):
    p256dh: str  # the browser's P-256 public key (base64url, uncompressed point)
    auth: str  # the browser's authentication secret (base64url, 16 bytes)


class PushSubscription(msgspec.Struct, frozen=True, kw_only=True):
    """One browser's push channel for the player (the Push API's subscription)."""

    id: str
    endpoint: str
    keys: PushKeys
    created_at: float


class Away(msgspec.Struct, frozen=True, array_like=True):
    """A spell of vacation: from `start` to `end` (unix seconds; None: still on)."""

    start: float
    end: float | None = None


class Remembered(msgspec.Struct, frozen=True, kw_only=True):
    """A create sent with an `Idempotency-Key` (`service.core.idempotency`): its entry, its
    fingerprint and what it answered, kept with its effect in the same save (in a caller's
    claims record, `CLAIMS`: the entry and fingerprint alone)."""

    entry: str
    fingerprint: str
    subscription: PushSubscription | None = None


KEPT_KEYS = 32  # the latest creates with a key a record remembers
# the record of a caller's keys (by its scope: `Caller.scope`), whichever player each create
# named, so one key names one request across players; no player id has a space
CLAIMS = "#keys "
KEPT_CLAIMS = 256  # the latest keys a caller's claims record remembers


class PlayerRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A player's correspondence record; version 0: never stored (nothing held yet)."""

    player_id: str
    version: int = 0
    subscriptions: tuple[PushSubscription, ...] = ()
    # this calendar year's spells of vacation and the last one's year's, oldest first (the
    # allowance is counted on them, and the deadlines stand still during them)
    away: tuple[Away, ...] = ()
    remembered: tuple[Remembered, ...] = ()  # oldest first, at most KEPT_KEYS

    def successor(self, **changes: object) -> PlayerRecord:
        return msgspec.structs.replace(self, version=self.version + 1, **changes)


class PlayerConflict(Conflict[PlayerRecord]):
    """A player's record saved on a version no longer stored (`current`: as stored now)."""


class PlayerStore(Protocol):
    """The players' records (infra/memory_push.py, infra/redis_push.py)."""

    async def load_player(self, player_id: str) -> PlayerRecord | None: ...

    async def save_player(self, record: PlayerRecord) -> None:
        """Store the record if the one stored is at `record.version - 1` (none stored:
        version 1 creates it); else raise PlayerConflict with the one stored."""


class Presence(Protocol):
    """Who is watching which game: each open event stream of a seat's player says so until
    a time (`enter`, said again while it is open) and takes it back when it closes (`leave`);
    a word not said again in time lapses (its replica died). Shared by every replica
    (infra/memory_presence.py, infra/redis_presence.py)."""

    async def enter(self, game_id: str, seat: int, stream_id: str, until: float) -> None: ...

    async def leave(self, game_id: str, seat: int, stream_id: str) -> None: ...

    async def watching(self, game_id: str, seat: int, now: float) -> bool:
        """Whether a stream of this seat's player on this game is open (its word holds at
        `now`)."""
