"""What the lobby's use cases give and keep: a table created, a seat joined, a page of
tables, and the idempotent outcome of a keyed create or join; the cursor of a listing."""

from __future__ import annotations

import base64
import math
import secrets
from typing import Any, NamedTuple

import msgspec

from domain.game.model import Event, GameState
from service.core import idempotency
from service.core.errors import ServiceError
from service.core.model import GameRecord, Seat
from service.core.ports import (
    IdempotentResponse,
    StoredEvent,
)
from service.games.commands import (
    CreateTable,
    JoinSeat,
)
from service.games.use_cases import (
    hash_token,
)


class TableCreated(msgspec.Struct, frozen=True, kw_only=True):
    """A table created open; its credentials, each shown once: the seat tokens of the seats
    the creator took, the host token (anonymous hosts) and the invite code (private tables)."""

    record: GameRecord
    tokens: list[tuple[int, str]]
    host_token: str | None
    invite_code: str | None
    replayed: bool = False  # the first outcome of this Idempotency-Key, handed back


class Joined(msgspec.Struct, frozen=True, kw_only=True):
    record: GameRecord  # started when this join filled the table
    seat: int
    token: str
    events: list[StoredEvent]  # the game's first events when it started (none: replayed)
    replayed: bool = False  # the first outcome of this Idempotency-Key, handed back


class Dealt(msgspec.Struct, frozen=True, kw_only=True):
    """A table's game as dealt, before any bot moves (`Dealer.dealt`)."""

    state: GameState
    events: list[Event]
    kept: list[tuple[int, Seat]]  # the table's seats that play, with their index


class Ready(NamedTuple):
    """A scheduled table's start made ahead (`Lobby.ready_to_start`): the table as read, its
    deal and the bots' first moves; only its clock waits for the time."""

    record: GameRecord
    dealt: Dealt
    moved: tuple[GameState, list[Event]]


class Keyed:
    """A change sent with an Idempotency-Key (`service.core.idempotency`): where its outcome is
    remembered, what identifies it, and the first outcome once found."""

    def __init__(
        self, operation: str, command: CreateTable | JoinSeat, key: str, scope: str | None = None
    ) -> None:
        scope = command.caller.scope if scope is None else scope
        self.entry = idempotency.entry_key(operation, scope, key)
        self.fingerprint = idempotency.fingerprint(operation, *command.fingerprint_fields())
        self.prior: IdempotentResponse | None = None

    def outcome(
        self, record: GameRecord, seat: int | None, **credentials: Any
    ) -> IdempotentResponse:
        """What a copy of this change is answered: the game, the seat, the credentials."""
        return IdempotentResponse(
            fingerprint=self.fingerprint, seat=seat, record=record, events=[], **credentials
        )

    def first(self, prior: IdempotentResponse) -> IdempotentResponse:
        """The remembered outcome, if it answers this request (else idempotency_key_reused)."""
        idempotency.check_same(prior, self.fingerprint)
        self.prior = prior
        return prior


class Page(msgspec.Struct, frozen=True, kw_only=True):
    games: list[GameRecord]
    next_cursor: str | None


def new_token(game_id: str, seat: int | str) -> tuple[str, str]:
    token = f"{game_id}.{seat}.{secrets.token_urlsafe(32)}"
    return token, hash_token(token)


def replace_at(items: tuple, index: int, value: object) -> tuple:
    return (*items[:index], value, *items[index + 1 :])


def encode_cursor(created_at: float, game_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at!r}|{game_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> tuple[float, str] | None:
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, _, game_id = text.partition("|")
        value = float(created)
    except (ValueError, UnicodeDecodeError):
        raise ServiceError("invalid_cursor") from None
    if not game_id or not math.isfinite(value):
        raise ServiceError("invalid_cursor")
    return value, game_id
