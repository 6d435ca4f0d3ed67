"""What a bulk pairing is and keeps: the command that asks for one, its record (its tables'
games by id, their seats, its time and status), the tokens its create handed out (kept only
with its Idempotency-Key's entry, for a copy of the create), and the bulk as answered."""

from __future__ import annotations

import hashlib
from typing import Literal

import msgspec

from domain.game.model import Rules, TimeControl
from service.core.callers import Caller
from service.core.model import GameRecord, GameStatus
from service.core.unit_of_work import Conflict
from service.games.commands import SeatRequest

QUEUE = "bulk"  # the leased queue of the starts (`service.jobs.worker.QUEUES`)
MOST_TABLES = 1000  # tables in one bulk pairing
MOST_AHEAD = 30 * 24 * 3600.0  # how far ahead its start may be (seconds)
# a start_at this far in the past is taken as "now" (the platform's clock and ours differ a
# little, and a request takes its time); further back it is refused
PAST_GRACE = 60.0
# the starts' jobs wake this long before the start (a worker looks for due jobs about once a
# second, then claims them), and wait for the time itself: a table starts on its time
LEAD = 5.0
CHUNK = 50  # tables per start job: the replicas share a bulk's starts
LEASE = 60.0  # a start job's lease: its replica died, another one takes it over then
STARTS_AT_ONCE = 48  # tables one process starts (or stores, reads) at once
KEEP = 7 * 24 * 3600  # how long a bulk is kept after its start (its games live as long idle)

BulkStatus = Literal["scheduled", "started", "cancelled"]


class TableRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One table as the platform asks for it: every seat a player (by id) or a bot."""

    seats: tuple[SeatRequest, ...]
    rules: Rules | None = None
    clock: TimeControl | None = None


class CreateBulk(msgspec.Struct, frozen=True, kw_only=True):
    """Tables whose games start together at `start_at` (unix s; None: now)."""

    caller: Caller
    tables: tuple[TableRequest, ...]
    start_at: float | None = None
    idempotency_key: str | None = None

    def fingerprint_fields(self) -> tuple:
        return (list(self.tables), self.start_at)


class BulkSeat(msgspec.Struct, frozen=True, array_like=True):
    name: str
    player_id: str | None = None
    bot: str | None = None


class BulkTable(msgspec.Struct, frozen=True, array_like=True):
    game_id: str
    seats: tuple[BulkSeat, ...]


class BulkRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A bulk pairing as stored. `made`: every table's game is stored (a create cut short
    leaves it False; a copy of the create, with its key, makes the rest). Its status follows
    from `cancelled` and the time (`status_at`): its start jobs never write it, so a thousand
    starts never queue behind saves of the bulk. `version` grows by one with every save (the
    stores compare-and-set on it)."""

    id: str
    owner: str  # the creator's `Caller.scope`
    start_at: float  # unix s; a start asked earlier moves it to then
    cancelled: bool = False
    tables: tuple[BulkTable, ...]
    made: bool = False
    fingerprint: str = ""  # what the create asked (`service.core.idempotency.fingerprint`)
    created_at: float
    updated_at: float
    version: int = 0


class BulkTokens(msgspec.Struct, frozen=True, kw_only=True):
    """What a keyed create handed out, kept with its Idempotency-Key's entry (as the lobby
    keeps a create's outcome): each table's seat tokens (None: a bot's seat)."""

    fingerprint: str
    tokens: tuple[tuple[str | None, ...], ...]


class BulkConflict(Conflict[BulkRecord]):
    """`BulkStore.save_bulk` refused: the stored bulk is not at the version the change was
    decided on. `current`: the bulk as stored then (None: none)."""

    def __init__(self, current: BulkRecord | None) -> None:
        super().__init__("the bulk pairing changed", current=current)


class TableShown(msgspec.Struct, frozen=True, kw_only=True):
    """A table of a bulk as answered: its game's status now (`gone`: it expired) and its
    seats, with their tokens in the create's answer only."""

    index: int
    game_id: str
    status: GameStatus | Literal["gone"]
    seats: tuple[BulkSeat, ...]
    tokens: tuple[str | None, ...] | None = None


class BulkShown(msgspec.Struct, frozen=True, kw_only=True):
    record: BulkRecord
    status: BulkStatus
    tables: tuple[TableShown, ...]
    replayed: bool = False


def bulk_game_id(bulk_id: str, index: int) -> str:
    """The game of a bulk's table: derived from the bulk and the table's place, so a create
    tried again finds the games made and never makes two for one table (the games' id
    form, `service.games.use_cases.GAME_ID`)."""
    return hashlib.sha256(f"bulk|{bulk_id}|{index}".encode()).hexdigest()[:20]


def chunks(record: BulkRecord) -> range:
    """The start jobs of a bulk, by number (each starts CHUNK tables)."""
    return range((len(record.tables) + CHUNK - 1) // CHUNK)


def job_id(bulk_id: str, chunk: int) -> str:
    return f"{bulk_id}:{chunk}"


def status_at(record: BulkRecord, now: float) -> BulkStatus:
    if record.cancelled:
        return "cancelled"
    return "started" if now >= record.start_at else "scheduled"


def status_of(game: GameRecord | None) -> GameStatus | Literal["gone"]:
    return "gone" if game is None else game.status
