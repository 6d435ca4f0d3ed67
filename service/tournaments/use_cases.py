"""Tournaments as a service: created, read, entered, started, paused, resumed and stopped
through this use case, each change one save of a `TournamentRecord` with its version
compared (`service.tournaments.saving`). Once started, a tournament is played by its director
(`service.tournaments.director`), which every decision here that moves it on wakes.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence

from domain.tournaments.rules import Settings as TournamentSettings
from service.core import idempotency
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.model import TournamentRecord
from service.core.ports import TournamentStore
from service.core.quotas import Quota, QuotaStore, owner_of
from service.core.settings import Settings
from service.core.unit_of_work import Retry
from service.games.commands import CreateTable
from service.jobs.worker import LeasedQueue
from service.lobby.records import decode_cursor, encode_cursor
from service.tournaments.checks import (
    advanced,
    check_create,
    check_organiser,
    check_times,
    registering,
    replayed,
    started,
)
from service.tournaments.director import Director, LuckOf
from service.tournaments.records import (
    BOT_PREFIX,
    KEEP_OPEN,
    RETRY_OPEN,
    Announce,
    CreateTournament,
    NextTable,
    TournamentPage,
    game_id,
    tournament_clock,
)
from service.tournaments.saving import TournamentWrites

log = logging.getLogger("ten.tournaments")


class Tournaments:
    """The tournaments' use cases (see the module docstring), and their `director`, made
    with `create` and `announce` (`service.tournaments.director.Director`)."""

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
        adjusted: LuckOf | None = None,
    ) -> None:
        """`adjusted`: a game's luck-adjusted result, for luck-adjusted standings
        (`service.history.reviews.Reviews.luck_adjusted`; `Director`)."""
        self.store = store
        self.writes = TournamentWrites(
            store, retry if retry is not None else Retry(Settings().games.act_retries)
        )
        self.queue = queue
        self.director = Director(
            self.writes, queue, create, announce=announce, clock=clock, adjusted=adjusted
        )
        self.clock = clock
        self.random_hex = random_hex
        self.identities_open = identities_open
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
            rounds=command.rounds, seed=self.random_hex(16), standings_by=command.standings_by,
            ranked_by=command.ranked_by,
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
        return await self.writes.load(tournament_id)

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

        return await self.writes.update(tournament_id, change, key, caller, ("register", pid))

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

        return await self.writes.update(tournament_id, change, key, caller, ("withdraw", pid))

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

        return await self.writes.update(tournament_id, change, key, caller, ("pause",))

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
        """A change the director follows up (`Director.follow`), of a tournament stored."""
        await self.get(tournament_id)
        return await self.director.follow(
            tournament_id,
            # a start pairs round 1
            lambda: self.writes.update(
                tournament_id, change, key, caller, (operation,), pairs=operation == "start"
            ),
        )
