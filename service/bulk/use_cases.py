"""Bulk pairings: the platform's tables by the hundred, created in one call and started
together at a time (or now); read, started early, cancelled.

- **Tables**: each is a scheduled table of the lobby (`TableCreation.scheduled`: every seat a
  player by id, seated verified by the platform's key, or a bot), checked all before
  anything is stored (one refused table: `invalid_bulk_pairing` naming it, nothing stored),
  its game's id derived from the bulk's id and the table's place (`bulk_game_id`). Its seat
  tokens are hashed in the game as any seat's; the create's answer hands them out.
- **A create cut short** (a process dying half-way): the bulk is stored first, with the
  tokens its answer holds kept under its Idempotency-Key's entry (atomically), then its
  games, many at once (the store pipelines them); a copy of the create finds the bulk,
  makes the games not stored yet with the same tokens (a game stored already is kept: one
  game per table, whatever the tries), and gets the first answer.
- **The start**: jobs in the one leased queue (`QUEUE`; `CHUNK` tables each, so the
  replicas share the starts), due `LEAD` seconds before the time; a job waits for the time
  and starts its tables, several at once, each by the lobby's start (`Lobby.start_scheduled`:
  one save through the one write path; the game's `game_started` webhook as any game's). A
  replica dying leaves its jobs to another after their lease; a table started twice is
  dealt once.
- **Cancel**: the bulk is cancelled, then each table not started is (its start, if it won
  the race, is reported).
"""

from __future__ import annotations

import asyncio
import copy
import hmac
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

import msgspec

from domain.game.errors import RuleError
from service.bulk.records import (
    CHUNK,
    KEEP,
    LEAD,
    LEASE,
    MOST_AHEAD,
    MOST_TABLES,
    PAST_GRACE,
    STARTS_AT_ONCE,
    BulkRecord,
    BulkSeat,
    BulkShown,
    BulkTable,
    BulkTokens,
    CreateBulk,
    TableShown,
    bulk_game_id,
    chunks,
    job_id,
    status_at,
    status_of,
)
from service.bulk.store import BulkStore
from service.core import idempotency
from service.core.callers import PLATFORM, Caller
from service.core.errors import ServiceError
from service.core.quotas import Quota, QuotaStore
from service.core.unit_of_work import Retry, write
from service.games.commands import CancelTable, CreateTable
from service.jobs.worker import Job, LeasedQueue, Worker
from service.lobby.records import Ready, TableCreated
from service.lobby.use_cases import Lobby

T = TypeVar("T")
R = TypeVar("R")
OPERATION = "bulk_pairing"
MAKING = 120.0  # seconds a create may take to store its games before its start goes on without


class BulkPairings:
    """The bulk pairings' use cases and their start jobs' worker (see the module docstring)."""

    def __init__(
        self,
        store: BulkStore,
        lobby: Lobby,
        queue: LeasedQueue,
        *,
        quotas: QuotaStore | None = None,
        max_scheduled: int = 0,
        identities_open: bool = True,
        retry: Retry | None = None,
        clock: Callable[[], float] = time.time,
        random_hex: Callable[[int], str] = secrets.token_hex,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.store = store
        self.lobby = lobby
        self.queue = queue
        self.identities_open = identities_open
        self.retry = retry if retry is not None else lobby.games.retry
        self.clock = clock
        self.random_hex = random_hex
        self.sleep = sleep
        self.wake: Callable[[], None] = lambda: None  # the worker's, once it is made
        self._gate: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        # the bulks one caller has waiting for their start (`service.core.quotas`)
        self.scheduled = Quota(
            quotas, "bulk-pairings", max_scheduled if quotas is not None else 0,  # type: ignore[arg-type]
            "too_many_bulk_pairings", self._still_scheduled, keep=int(MOST_AHEAD) + KEEP,
            retry_after=lambda oldest, now: 60.0, clock=clock,
        )  # fmt: skip

    def served(self, *, identities_open: bool) -> BulkPairings:
        """These use cases as the API serves them, knowing whether identities are open (the
        same store, queue and worker)."""
        view = copy.copy(self)
        view.identities_open = identities_open
        return view

    # ------------------------------------------------------------ creating

    async def create(self, command: CreateBulk) -> BulkShown:
        """The bulk and its tables' games (see the module docstring); with start_at None (or
        come), its tables started before the answer."""
        caller = command.caller
        self._check_caller(caller)
        if not 1 <= len(command.tables) <= MOST_TABLES:
            raise ServiceError(
                "invalid_bulk_pairing", "A bulk pairing has 1 to {most} tables.", most=MOST_TABLES
            )
        fingerprint = idempotency.fingerprint(OPERATION, *command.fingerprint_fields())
        key, entry = command.idempotency_key, None
        if key is None:
            bulk_id = self.random_hex(10)
        else:
            bulk_id = idempotency.created_game_id(caller.scope, f"{OPERATION}|{key}")
            entry = idempotency.entry_key(OPERATION, caller.scope, key)
            stored = await self.store.load_bulk(bulk_id)
            if stored is not None:  # a copy: answered as the first, whenever it comes
                return await self._again(stored, command, entry, fingerprint)
        now = self.clock()
        start_at = self._start_at(command.start_at, now)
        made = self._tables(command, bulk_id, start_at)
        record = BulkRecord(
            id=bulk_id, owner=caller.scope, start_at=start_at, tables=tuple(
                BulkTable(game_id=m.record.id, seats=_seats(m)) for m in made
            ), fingerprint=fingerprint, created_at=now, updated_at=now,
        )  # fmt: skip
        tokens = BulkTokens(fingerprint=fingerprint, tokens=tuple(_tokens(m) for m in made))
        await self.scheduled.take(caller.scope, bulk_id, now)
        await self._queue_starts(record)  # before the save: a process dying after it
        remembered = None if entry is None else (entry, tokens)
        stored = await self.store.create_bulk(record, self._ttl(record), remembered)
        if stored is not None:  # a copy of this create was first
            assert entry is not None
            return await self._again(stored, command, entry, fingerprint)
        record = await self._make(record, made)
        if record.start_at <= self.clock():
            await self._start(record)
        return await self.shown(record, tokens.tokens)

    def _check_caller(self, caller: Caller) -> None:
        """The platform; anyone while identities are open (nothing verified anywhere)."""
        if caller.platform or self.identities_open:
            return
        if caller.kind == "anonymous":
            raise ServiceError("authentication_required")
        raise ServiceError("platform_only")

    def _start_at(self, asked: float | None, now: float) -> float:
        if asked is None:
            return now
        if asked < now - PAST_GRACE or asked > now + MOST_AHEAD:
            raise ServiceError(
                "invalid_bulk_pairing",
                "start_at must be at most {days} days ahead, and not in the past.",
                days=int(MOST_AHEAD // 86400),
            )
        return max(asked, now)

    def _tables(
        self,
        command: CreateBulk,
        bulk_id: str,
        start_at: float,
        tokens: Sequence[Sequence[str | None]] | None = None,
    ) -> list[TableCreated]:
        """Every table as the lobby makes it (not stored), each checked: the first refused
        is the bulk's refusal, naming it."""
        made = []
        for index, table in enumerate(command.tables):
            create = CreateTable(
                caller=command.caller, seats=table.seats, rules=table.rules, clock=table.clock
            )
            given = None if tokens is None else tokens[index]
            try:
                if any(s.bot is None and s.player_id is None for s in table.seats):
                    raise ServiceError("invalid_table")  # a player by id, or a bot
                made.append(
                    self.lobby.creation.scheduled(
                        create, bulk_game_id(bulk_id, index), start_at, given
                    )
                )
            except (ServiceError, RuleError) as refused:
                error = ServiceError(
                    "invalid_bulk_pairing",
                    "Table {table} cannot be made ({reason}).",
                    table=index,
                    reason=refused.code,
                )
                error.members = {"table": index, "reason": refused.code}
                raise error from None
        return made

    async def _make(self, record: BulkRecord, made: Sequence[TableCreated]) -> BulkRecord:
        """Store the tables' games not stored yet, many at once; then the bulk is `made`."""
        await _bounded(self.lobby.creation.store_scheduled, made)
        return await self._save(
            record.id, lambda r: None if r.made else msgspec.structs.replace(r, made=True)
        )

    async def _again(
        self, stored: BulkRecord, command: CreateBulk, entry: str, fingerprint: str
    ) -> BulkShown:
        """A copy of a keyed create: the games the first left unmade made (with the tokens
        it handed out), its tables started if their time came, the first answer."""
        if not hmac.compare_digest(stored.fingerprint, fingerprint):
            raise ServiceError("idempotency_key_reused")
        kept = await self.store.remembered_bulk(stored.id, entry)
        if kept is None:
            raise ServiceError("idempotency_key_reused")
        record = stored
        if not record.made and not record.cancelled:
            made = self._tables(command, record.id, record.start_at, kept.tokens)
            record = await self._make(record, made)
        shown = await self.shown(record, kept.tokens)
        waiting = [t.index for t in shown.tables if t.status == "open"]
        if waiting and not record.cancelled and record.start_at <= self.clock():
            await self._start(record, waiting)  # a create cut short before its start
            shown = await self.shown(record, kept.tokens)
        return msgspec.structs.replace(shown, replayed=True)

    async def _queue_starts(self, record: BulkRecord) -> None:
        """The start jobs, due `LEAD` before the time (a bulk started now: as a failsafe,
        once the create had the time to start it itself), each carrying its bulk's creation
        time: queued before the bulk is stored, a job may run before it is (`run_job`)."""
        now = self.clock()
        at = record.start_at - LEAD if record.start_at > now else now + LEASE
        created = repr(record.created_at).encode()
        for chunk in chunks(record):
            await self.queue.put(job_id(record.id, chunk), created, at)
        self.wake()

    def _ttl(self, record: BulkRecord) -> int:
        return int(max(0.0, record.start_at - self.clock())) + KEEP

    # ------------------------------------------------------------ reading

    async def get(self, caller: Caller, bulk_id: str) -> BulkShown:
        self._check_caller(caller)
        return await self.shown(await self._load(bulk_id))

    async def shown(
        self, record: BulkRecord, tokens: Sequence[Sequence[str | None]] | None = None
    ) -> BulkShown:
        """The bulk with each table's game's status now (its tokens: the create's answer)."""
        games = await _bounded(self.lobby.store.load, [t.game_id for t in record.tables])
        tables = tuple(
            TableShown(
                index=i,
                game_id=t.game_id,
                status=status_of(game),
                seats=t.seats,
                tokens=None if tokens is None else tuple(tokens[i]),
            )
            for i, (t, game) in enumerate(zip(record.tables, games, strict=True))
        )
        return BulkShown(record=record, status=status_at(record, self.clock()), tables=tables)

    async def _load(self, bulk_id: str) -> BulkRecord:
        record = await self.store.load_bulk(bulk_id) if _is_id(bulk_id) else None
        if record is None:
            raise ServiceError("bulk_pairing_not_found")
        return record

    async def _still_scheduled(self, bulk_ids: Sequence[str]) -> dict[str, bool]:
        found = {}
        for bulk_id in bulk_ids:
            record = await self.store.load_bulk(bulk_id)
            if record is not None:
                found[bulk_id] = status_at(record, self.clock()) == "scheduled"
        return found

    # ------------------------------------------------------------ starting and cancelling

    async def start(self, caller: Caller, bulk_id: str) -> BulkShown:
        """Start every table not started, now."""
        self._check_caller(caller)

        def now(record: BulkRecord) -> BulkRecord | None:
            if record.cancelled:
                raise ServiceError("bulk_pairing_cancelled")
            at = self.clock()
            return None if record.start_at <= at else msgspec.structs.replace(record, start_at=at)

        record = await self._save(bulk_id, now)
        await self._start(record)
        return await self.shown(record)

    async def _start(
        self,
        record: BulkRecord,
        indexes: Iterable[int] | None = None,
        ready: dict[str, Ready] | None = None,
        *,
        relay_now: bool = True,
    ) -> None:
        """Its tables started (those of `indexes`; None: all), from their deals made ahead
        (`ready`) where there are; `relay_now` False: their reactions left to the relay's
        workers (`Lobby.start_scheduled`)."""
        picked = range(len(record.tables)) if indexes is None else indexes
        ahead = ready or {}

        async def start(game_id: str) -> None:
            await self._start_table(game_id, ahead.get(game_id), relay_now=relay_now)

        await _bounded(start, [record.tables[i].game_id for i in picked], self._starts())

    def _starts(self) -> asyncio.Semaphore:
        """The process's gate of table starts: STARTS_AT_ONCE at most, whatever the number
        of start jobs under way (more at once only queue for the store's connections)."""
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate[0] is not loop:
            self._gate = (loop, asyncio.Semaphore(STARTS_AT_ONCE))
        return self._gate[1]

    async def _start_table(
        self, game_id: str, ready: Ready | None = None, *, relay_now: bool = True
    ) -> None:
        try:
            await self.lobby.start_scheduled(game_id, ready, relay_now=relay_now)
        except ServiceError as error:
            if error.code != "game_not_found":  # never made (a create cut short), or expired
                raise

    async def cancel(self, caller: Caller, bulk_id: str) -> BulkShown:
        """The bulk cancelled, and each of its tables not started (those started are left
        as they are, and shown so)."""
        self._check_caller(caller)
        record = await self._save(
            bulk_id, lambda r: None if r.cancelled else msgspec.structs.replace(r, cancelled=True)
        )
        await self._cancel_tables(record)
        return await self.shown(record)

    async def _cancel_tables(
        self, record: BulkRecord, indexes: Iterable[int] | None = None
    ) -> None:
        picked = range(len(record.tables)) if indexes is None else indexes
        await _bounded(self._cancel_table, [record.tables[i].game_id for i in picked])

    async def _cancel_table(self, game_id: str) -> None:
        try:
            await self.lobby.cancel(CancelTable(caller=PLATFORM, game_id=game_id))
        except ServiceError as error:
            if error.code not in ("game_not_open", "game_not_found"):  # started, or gone
                raise

    async def _save(
        self, bulk_id: str, change: Callable[[BulkRecord], BulkRecord | None]
    ) -> BulkRecord:
        """`change` saved with the version compared, judged again on the bulk as stored when
        another writer won (`service.core.unit_of_work.write`); None: nothing to save."""

        async def attempt(record: BulkRecord) -> BulkRecord:
            new = change(record)
            if new is None:
                return record
            new = msgspec.structs.replace(new, version=record.version + 1, updated_at=self.clock())
            await self.store.save_bulk(new, self._ttl(new))
            return new

        record = await self._load(bulk_id)
        return await write(
            record, attempt, self.retry, gone="bulk_pairing_not_found",
            reread=lambda: self._load(bulk_id),
        )  # fmt: skip

    # ------------------------------------------------------------ the start jobs

    async def run_job(self, job: str, created: bytes = b"") -> float | None:
        """One start job (`CHUNK` tables of a bulk; `created`, its payload: the bulk's
        creation time): the time it waits for, else its tables started (or, the bulk
        cancelled, cancelled) and None. A bulk not stored (yet: its create queues the jobs
        first) is waited for while its create may still store it (`MAKING`), then the job
        is dropped."""
        bulk_id, _, number = job.rpartition(":")
        if not _is_id(bulk_id) or not number.isdigit():
            return None
        record = await self.store.load_bulk(bulk_id)
        if record is None:
            now, since = self.clock(), _time(created)
            return now + 1.0 if since is not None and now < since + MAKING else None
        chunk = int(number)
        indexes = range(chunk * CHUNK, min(len(record.tables), (chunk + 1) * CHUNK))
        if record.cancelled:  # a cancel cut short: its tables not started yet
            await self._cancel_tables(record, indexes)
            return None
        now = self.clock()
        if now < record.start_at - LEAD:
            return record.start_at - LEAD
        if not record.made and now < record.created_at + MAKING:
            return now + 1.0  # its create is storing its games still
        ready = None
        if now < record.start_at:  # its tables dealt ahead: at the time, a save each
            ready = await self._ready(record, indexes)
            await self.sleep(max(0.0, record.start_at - self.clock()))
        # many tables at one time: their saves first, their reactions (the webhooks) by the
        # relay's workers of every replica once due, a few seconds later
        await self._start(record, indexes, ready, relay_now=False)
        return None

    async def _ready(self, record: BulkRecord, indexes: Iterable[int]) -> dict[str, Ready]:
        """The tables of `indexes` read, and dealt ahead of their time (`Lobby.ready_to_start`,
        in a worker thread): what is left for their start is a save each."""
        games = await _bounded(self.lobby.store.load, [record.tables[i].game_id for i in indexes])
        found = [game for game in games if game is not None]
        made = await asyncio.to_thread(lambda: [self.lobby.ready_to_start(g) for g in found])
        return {r.record.id: r for r in made if r is not None}

    def worker(self, **options: object) -> Worker:
        """The start jobs' worker (every replica runs one): many jobs at once, each waiting
        for its time (a sleep, not a slot held busy)."""

        async def handle(job: Job) -> float | None:
            return await self.run_job(job.id, job.payload)

        options.setdefault("lease", LEASE)
        options.setdefault("concurrency", 64)
        options.setdefault("batch", 16)
        worker = Worker(self.queue, handle, **options)  # type: ignore[arg-type]
        self.wake = worker.wake
        return worker


def _seats(made: TableCreated) -> tuple[BulkSeat, ...]:
    assert made.record.table is not None
    return tuple(
        BulkSeat(name=s.name or "", player_id=s.player_id, bot=s.bot)
        for s in made.record.table.seats
    )


def _tokens(made: TableCreated) -> tuple[str | None, ...]:
    assert made.record.table is not None
    by_seat = dict(made.tokens)
    return tuple(by_seat.get(i) for i in range(len(made.record.table.seats)))


def _time(payload: bytes) -> float | None:
    """A start job's bulk creation time (None: a job queued without it, or unreadable, or
    not a finite time: a job never waits for good)."""
    try:
        created = float(payload.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return created if math.isfinite(created) else None


def _is_id(bulk_id: str) -> bool:
    return len(bulk_id) == 20 and all(c in "0123456789abcdef" for c in bulk_id)


async def _bounded(
    call: Callable[[T], Awaitable[R]], items: Sequence[T], gate: asyncio.Semaphore | None = None
) -> list[R]:
    """`call` on every item, STARTS_AT_ONCE at most at once (or as `gate` lets them); the
    answers in order."""
    gate = gate if gate is not None else asyncio.Semaphore(STARTS_AT_ONCE)

    async def one(item: T) -> R:
        async with gate:
            return await call(item)

    return list(await asyncio.gather(*(one(item) for item in items)))
