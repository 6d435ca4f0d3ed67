"""Tournaments as a service: created, entered, started, paused, resumed and
stopped through this use case; played by its director, which pairs each round
(`domain.tournaments.rules`: every rule of pairing, seats, deals and scoring is stated there),
deals its games through the lobby's game creation and scores their results.

- A tournament is a `TournamentRecord` in a `TournamentStore`, every change one save with
  its version compared, judged again on the tournament as stored when another writer won.
- The director (`advance`) is one idempotent step, run by a `service.jobs.worker.Worker` on any
  replica, keyed by the tournament's id: queue the webhooks a change left pending, deal
  the current round's games not dealt yet (each game's id comes from the tournament, round
  and table: `game_id`, so a step run twice deals each game once), and once every table of
  the round has its result, pair the next round (dealt by the next step: one round per
  step) or finish. A replica dying anywhere leaves the job to another after its lease
  (LEASE, short: a step is one round's deals at most): nothing is lost and nothing done
  twice.
- A tournament game's end reaches the director through the one outbox: the relay's durable
  `TournamentReaction` records the table's result (`record_result`, once: it is kept per
  round and table) and queues the tournament's job.
- Deals: a game's seed is a digest of its table's deal (`game_seed`), so every table of a
  duplicate round plays the same pile and starting seat, and a game's seed, public in the
  archive once it ended, tells nothing of the tournament's secret seed or other deals.
- Times: a tournament created with `starts_at` starts itself then, as its organiser's
  start would (who may still start it earlier); with a `round_interval` the next round is
  paired that long after the previous one's games all ended (`next_round_at`, set by the
  step that finds the round complete). Both are the director's job due at that time (a
  step waiting for a time answers it to its worker: `service.jobs.worker`), so they hold on any
  replica and across restarts, and no task sleeps.
- A table whose game ended without results (aborted, or abandoned: nobody acted for
  TEN_IDLE_TTL) scores as a tie of every seat with game score 0. Every tournament game has
  a clock (`DEFAULT_CLOCK` when the create names none), so a player who does not show up
  is played by the game's bot after the clock's timeouts (`domain.bots.clock`): the seat scores
  what it makes, and the round never waits on them longer than the clock says.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

import msgspec

from domain.tournaments.rules import (
    Round,
    Table,
    next_round,
)
from domain.tournaments.rules import Settings as TournamentSettings
from service.core import idempotency
from service.core.callers import PLATFORM, Caller
from service.core.errors import ServiceError
from service.core.model import GameRecord, TableRef, TournamentRecord
from service.core.ports import TournamentStore
from service.core.quotas import Quota, QuotaStore, owner_of
from service.core.settings import Settings
from service.core.unit_of_work import Retry, write
from service.games.commands import CreateTable, SeatRequest
from service.jobs.worker import Job, LeasedQueue, Worker
from service.lobby.records import decode_cursor, encode_cursor
from service.reactions.relay import Change
from service.tournaments.checks import (
    advanced,
    check_create,
    check_organiser,
    check_times,
    is_id,
    registering,
    replayed,
    result_of,
    round_complete,
    started,
    table_of,
)
from service.tournaments.records import (
    BOT_PREFIX,
    GRACE,
    KEEP_OPEN,
    LEASE,
    REMEMBERED,
    RETRY_OPEN,
    Announce,
    CreateTournament,
    NextTable,
    TournamentPage,
    game_id,
    game_key,
    game_seed,
    tournament_clock,
    tournament_messages,
)

log = logging.getLogger("ten.tournaments")


class Tournaments:
    """The tournaments' use cases and their director (see the module docstring). `create`
    deals a table's game: the lobby's `create` (`service.lobby.use_cases.Lobby.create`); `announce`
    queues the webhooks a change called for (`service.reactions.webhooks.Webhooks.announce`)."""

    def __init__(
        self,
        store: TournamentStore,
        queue: LeasedQueue,
        create: Callable[[CreateTable], Awaitable[object]],
        *,
        announce: Announce | None = None,
        clock: Callable[[], float] = time.time,
        random_hex: Callable[[int], str] = secrets.token_hex,
        identities_open: bool = True,
        retry: Retry | None = None,
        quotas: QuotaStore | None = None,
        max_open: int = 0,
    ) -> None:
        self.store = store
        self.retry = retry if retry is not None else Retry(Settings().act_retries)
        self.queue = queue
        self.create_game = create
        self.announce = announce
        self.clock = clock
        self.random_hex = random_hex
        self.identities_open = identities_open
        self.wake: Callable[[], None] = lambda: None  # the worker's, once it is made
        # an organiser's tournaments not ended (`service.core.quotas`; none without a store)
        self.open = Quota(
            quotas, "open-tournaments", max_open if quotas is not None else 0,
            "too_many_open_tournaments", self._not_ended, keep=KEEP_OPEN,
            retry_after=lambda oldest, now: RETRY_OPEN, clock=clock,
        )  # fmt: skip

    # ------------------------------------------------------------ creating and reading

    async def create(self, command: CreateTournament) -> tuple[TournamentRecord, bool]:
        """A tournament taking registrations; (it, replayed). By the platform or a verified
        player (its organiser). With an `idempotency_key` its id comes from the key: a copy
        of the create gets the first one (`replayed`)."""
        caller = command.caller
        if caller.kind == "anonymous":
            raise ServiceError("authentication_required")
        check_create(command)
        operation = "create_tournament"
        fingerprint = idempotency.fingerprint(operation, *command.fingerprint_fields())
        if command.idempotency_key is None:
            tournament_id = self.random_hex(10)
        else:
            tournament_id = idempotency.created_game_id(
                caller.scope, f"{operation}|{command.idempotency_key}"
            )
            # a copy is answered as the first one was, even once its `starts_at` passed
            stored = await self.store.load_tournament(tournament_id)
            if stored is not None:
                return replayed(stored, fingerprint), True
        now = self.clock()
        check_times(command, now)
        settings = TournamentSettings(
            format=command.format, deal_mode=command.deal_mode, table_size=command.table_size,
            rounds=command.rounds, seed=self.random_hex(16),
        )  # fmt: skip
        record = TournamentRecord(
            id=tournament_id, name=command.name, organiser=caller.scope, settings=settings,
            clock=tournament_clock(command.clock), bot_level=command.bot_level,
            ranked=command.ranked, places=command.places, invited=command.invited,
            starts_at=command.starts_at, round_interval=command.round_interval,
            fingerprint=fingerprint, created_at=now, updated_at=now,
        )  # fmt: skip
        await self.open.take(owner_of(caller, None), tournament_id, now)
        if command.starts_at is not None:  # queued first: a tournament saved has its start
            await self.queue.put(tournament_id, b"", command.starts_at)
        stored = await self.store.create_tournament(record)
        if stored is None:
            return record, False
        if command.idempotency_key is None:
            raise ServiceError("idempotency_key_reused")
        return replayed(stored, fingerprint), True

    async def _not_ended(self, tournament_ids: Sequence[str]) -> dict[str, bool]:
        """Of these tournaments, the ones stored, and whether each has yet to end."""
        found = {}
        for tournament_id in tournament_ids:
            record = await self.store.load_tournament(tournament_id)
            if record is not None:
                found[tournament_id] = not record.ended
        return found

    async def get(self, tournament_id: str) -> TournamentRecord:
        record = await self.store.load_tournament(tournament_id) if is_id(tournament_id) else None
        if record is None:
            raise ServiceError("tournament_not_found")
        return record

    async def list(self, cursor: str | None, limit: int) -> TournamentPage:
        found = await self.store.list_tournaments(decode_cursor(cursor), limit + 1)
        more = len(found) > limit
        found = found[:limit]
        last = found[-1] if found and more else None
        return TournamentPage(
            tournaments=found,
            next_cursor=None if last is None else encode_cursor(last.created_at, last.id),
        )

    async def next_table(self, tournament_id: str, player_id: str) -> NextTable:
        record = await self.get(tournament_id)
        if record.status not in ("running", "paused") or not record.rounds:
            return NextTable()
        current = record.rounds[-1]
        if player_id in current.byes:
            return NextTable(round=current.number, bye=True)
        for table in current.tables:
            if player_id in table.seats:
                return NextTable(
                    round=current.number, table=table.number,
                    game_id=game_id(record.id, current.number, table.number),
                    seat=table.seats.index(player_id),
                )  # fmt: skip
        return NextTable()

    # ------------------------------------------------------------ entering

    async def register(
        self, caller: Caller, tournament_id: str, player_id: str | None, key: str | None = None
    ) -> tuple[TournamentRecord, bool]:
        """Enter a player (themself with a JWT, anyone by the platform): while registering,
        invited or open registration, within the places. Entering twice changes nothing."""
        pid = self._player(caller, player_id)

        if pid.startswith(BOT_PREFIX):
            raise ServiceError("invalid_tournament", "A player id starting with bot: names a bot.")

        def change(record: TournamentRecord) -> TournamentRecord | None:
            registering(record)
            if pid in record.registered:
                return None
            if record.invited is not None and pid not in record.invited:
                raise ServiceError("not_invited")
            if len(record.registered) >= record.places:
                raise ServiceError("tournament_full")
            return advanced(record, self.clock(), registered=(*record.registered, pid))

        return await self._update(tournament_id, change, key, caller, ("register", pid))

    async def withdraw(
        self, caller: Caller, tournament_id: str, player_id: str | None, key: str | None = None
    ) -> tuple[TournamentRecord, bool]:
        """Leave before the start (a player not entered: nothing changes)."""
        pid = self._player(caller, player_id)

        def change(record: TournamentRecord) -> TournamentRecord | None:
            registering(record)
            if pid not in record.registered:
                return None
            kept = tuple(p for p in record.registered if p != pid)
            return advanced(record, self.clock(), registered=kept)

        return await self._update(tournament_id, change, key, caller, ("withdraw", pid))

    def _player(self, caller: Caller, player_id: str | None) -> str:
        if caller.kind == "player":
            if player_id is not None and player_id != caller.player_id:
                raise ServiceError("player_id_not_yours")
            assert caller.player_id is not None
            return caller.player_id
        if caller.platform and player_id is not None:
            return player_id
        if caller.platform:
            raise ServiceError("invalid_tournament", "The platform names the player_id.")
        raise ServiceError("authentication_required")

    # ------------------------------------------------------------ the organiser's decisions

    async def start(
        self, caller: Caller, tournament_id: str, key: str | None = None
    ) -> tuple[TournamentRecord, bool]:
        """Start (`started`); a tournament with `starts_at` starts so by itself then
        (`advance`), unless its organiser started it before."""

        def change(record: TournamentRecord) -> TournamentRecord:
            check_organiser(caller, record)
            registering(record)
            return started(record, self.clock())

        return await self._directed(tournament_id, change, key, caller, "start")

    async def pause(
        self, caller: Caller, tournament_id: str, key: str | None = None
    ) -> tuple[TournamentRecord, bool]:
        """No new round starts (the games being played go on, and their results count)."""

        def change(record: TournamentRecord) -> TournamentRecord:
            check_organiser(caller, record)
            if record.status != "running":
                raise ServiceError("tournament_not_running")
            return advanced(record, self.clock(), status="paused")

        return await self._update(tournament_id, change, key, caller, ("pause",))

    async def resume(
        self, caller: Caller, tournament_id: str, key: str | None = None
    ) -> tuple[TournamentRecord, bool]:
        def change(record: TournamentRecord) -> TournamentRecord:
            check_organiser(caller, record)
            if record.status != "paused":
                raise ServiceError("tournament_not_paused")
            return advanced(record, self.clock(), status="running")

        return await self._directed(tournament_id, change, key, caller, "resume")

    async def stop(
        self, caller: Caller, tournament_id: str, key: str | None = None
    ) -> tuple[TournamentRecord, bool]:
        """End it now: the standings stay as the results so far make them."""

        def change(record: TournamentRecord) -> TournamentRecord:
            check_organiser(caller, record)
            if record.ended:
                raise ServiceError("tournament_over")
            pending = (
                record.pending if record.status == "registering" else (*record.pending, "finished")
            )
            return advanced(
                record, self.clock(), status="stopped", pending=pending, next_round_at=None
            )

        return await self._directed(tournament_id, change, key, caller, "stop")

    async def _directed(
        self,
        tournament_id: str,
        change: Callable[[TournamentRecord], TournamentRecord | None],
        key: str | None,
        caller: Caller,
        operation: str,
    ) -> tuple[TournamentRecord, bool]:
        """A change the director follows up: its job is queued before the save, due after
        GRACE seconds (a process dying after the save leaves it to another replica), then
        due at once after the save (due before the save, a director could run before it
        and find nothing to do)."""
        await self.get(tournament_id)
        await self.queue.put(tournament_id, b"", self.clock() + GRACE)
        # a start pairs round 1
        answer = await self._update(
            tournament_id, change, key, caller, (operation,), pairs=operation == "start"
        )
        await self.queue.put(tournament_id, b"", self.clock())
        self.wake()
        return answer

    # ------------------------------------------------------------ saving

    async def _update(
        self,
        tournament_id: str,
        change: Callable[[TournamentRecord], TournamentRecord | None],
        key: str | None,
        caller: Caller,
        fields: tuple,
        *,
        pairs: bool = False,
    ) -> tuple[TournamentRecord, bool]:
        """Apply `change` and save with the version compared, judged again on the stored
        tournament when another writer won; (the tournament, replayed). `change` None:
        nothing to save. With an Idempotency-Key (`key`), the entry is saved with the change
        and a copy is answered with the tournament as it is (`replayed`)."""
        fingerprint = idempotency.fingerprint("tournament", *fields)
        entry = None if key is None else idempotency.entry_key("tournament", caller.scope, key)

        async def attempt(record: TournamentRecord) -> tuple[TournamentRecord, bool]:
            if entry is not None:
                prior = dict(record.remembered).get(entry)
                if prior is not None:
                    if prior != fingerprint:
                        raise ServiceError("idempotency_key_reused")
                    return record, True
            # one that may pair a round (`next_round`) is decided off the event loop
            new = await asyncio.to_thread(change, record) if pairs else change(record)
            if new is None:
                return record, False
            if entry is not None:
                kept = (*record.remembered, (entry, fingerprint))[-REMEMBERED:]
                new = msgspec.structs.replace(new, remembered=kept)
            await self.store.save_tournament(new)
            return new, False

        record = await self.get(tournament_id)
        return await write(
            record, attempt, self.retry, gone="tournament_not_found",
            reread=lambda: self.get(tournament_id),
        )  # fmt: skip

    async def _save(
        self,
        tournament_id: str,
        change: Callable[[TournamentRecord], TournamentRecord | None],
        *,
        pairs: bool = False,
    ) -> TournamentRecord | None:
        """The director's saves: `_update` without a key; None for a tournament gone."""
        try:
            record, _ = await self._update(tournament_id, change, None, PLATFORM, (), pairs=pairs)
        except ServiceError as error:
            if error.code == "tournament_not_found":
                return None
            raise
        return record

    # ------------------------------------------------------------ the director

    async def record_result(self, game: GameRecord) -> None:
        """A tournament game ended (the relay's `TournamentReaction`): its table's result
        kept once, and the tournament's job queued for the director."""
        ref = game.tournament
        if ref is None or not game.ended:
            return

        def change(record: TournamentRecord) -> TournamentRecord | None:
            if record.ended or record.result_of(ref.round, ref.table) is not None:
                return None
            table = table_of(record, ref)
            if table is None:
                return None
            result = result_of(game, ref.round, table)
            return advanced(record, self.clock(), results=(*record.results, result))

        if await self._save(ref.tournament_id, change) is not None:
            await self.queue.put(ref.tournament_id, b"", self.clock())
            self.wake()

    async def advance(self, tournament_id: str) -> float | None:
        """The director's step (see the module docstring): one round at most; idempotent,
        safe on any replica at once (every save compares the version). A step that pairs
        the next round queues its job again at once and ends: that round's deals are the
        next step, so a step lasts one round's deals, well within the worker's LEASE.
        Answers the time the tournament waits for (its `starts_at`, its `next_round_at`):
        the worker keeps its job due then; None when it waits for no time."""
        record = await self.store.load_tournament(tournament_id)
        if record is None:
            return None
        if record.status == "registering" and record.starts_at is not None:
            if self.clock() < record.starts_at:
                return record.starts_at
            record = await self._save(tournament_id, self._on_time, pairs=True)
            if record is None:
                return None
        if record.pending:
            record = await self._announce(record)
            if record is None:
                return None
        if record.status != "running":
            return None
        await self._deal(record)
        paired = await self._save(tournament_id, self._paired, pairs=True)
        if paired is not None and paired.pending:
            await self.queue.put(tournament_id, b"", self.clock())
            self.wake()
            return None
        if paired is not None and paired.status == "running":
            return paired.next_round_at
        return None

    def _on_time(self, record: TournamentRecord) -> TournamentRecord | None:
        """Its `starts_at` came while it still takes registrations: it starts."""
        now = self.clock()
        if record.status != "registering" or record.starts_at is None or now < record.starts_at:
            return None
        return started(record, now)

    def _paired(self, record: TournamentRecord) -> TournamentRecord | None:
        """Once every table of the current round has its result: the end, or the next
        round, after the `round_interval` (`next_round_at` set by the step that first finds
        the round complete; the round paired by a step at that time or after it)."""
        if record.status != "running" or not record.rounds:
            return None
        if not round_complete(record):
            return None
        now = self.clock()
        if len(record.rounds) >= record.settings.rounds:
            return advanced(
                record, now, status="finished", pending=(*record.pending, "finished"),
                next_round_at=None,
            )  # fmt: skip
        due = record.next_round_at
        if due is None and record.round_interval > 0:
            return advanced(record, now, next_round_at=now + record.round_interval)
        if due is not None and now < due:
            return None
        played = next_round(record.settings, record.entrants, record.rounds, record.results)
        return advanced(
            record, now, rounds=(*record.rounds, played), next_round_at=None,
            pending=(*record.pending, f"round:{played.number}"),
        )  # fmt: skip

    async def _announce(self, record: TournamentRecord) -> TournamentRecord | None:
        """Queue the webhooks pending (each once per id: the outbox keeps one per id), then
        clear them."""
        if self.announce is not None:
            await self.announce(tournament_messages(record, record.pending))
        done = record.pending

        def change(current: TournamentRecord) -> TournamentRecord | None:
            left = tuple(p for p in current.pending if p not in done)
            return (
                None if left == current.pending else advanced(current, self.clock(), pending=left)
            )

        return await self._save(record.id, change)

    async def _deal(self, record: TournamentRecord) -> None:
        """The current round's games not dealt yet (a game dealt already is the lobby's
        keyed create answered again: nothing is dealt twice)."""
        current = record.rounds[-1]
        for table in current.tables:
            if record.result_of(current.number, table.number) is None:
                await self.create_game(self._table_game(record, current, table))

    def _table_game(self, record: TournamentRecord, played: Round, table: Table) -> CreateTable:
        entrants = {e.id: e for e in record.entrants}
        seats = []
        for entrant_id in table.seats:
            bot = entrants[entrant_id].bot
            if bot is None:
                seats.append(SeatRequest(name=entrant_id, player_id=entrant_id))
            else:
                seats.append(
                    SeatRequest(name=f"Bot {entrant_id.removeprefix(BOT_PREFIX)}", bot=bot)
                )
        return CreateTable(
            caller=PLATFORM,
            seats=tuple(seats),
            fill_bot=record.bot_level,
            clock=tournament_clock(record.clock),
            seed=game_seed(table),
            tournament=TableRef(record.id, played.number, table.number, record.ranked),
            idempotency_key=game_key(record.id, played.number, table.number),
        )

    def worker(self, **options: object) -> Worker:
        """The director's worker (every replica runs one)."""

        async def handle(job: Job) -> float | None:
            return await self.advance(job.id)

        options.setdefault("lease", LEASE)
        worker = Worker(self.queue, handle, **options)  # type: ignore[arg-type]
        self.wake = worker.wake
        return worker


class TournamentReaction:
    """The relay's durable reaction to a tournament game's end (`service.reactions.relay`): the
    table's result is recorded (`Tournaments.record_result`, at least once, kept once)."""

    name = "tournaments"
    durable: Literal[True] = True

    def __init__(self, record: Callable[[GameRecord], Awaitable[None]]) -> None:
        self.record = record

    async def react(self, change: Change) -> None:
        record = change.new  # listed for GAME_ENDED: any game's end, a tournament's or not
        if record.tournament is not None and record.ended:
            await self.record(record)
