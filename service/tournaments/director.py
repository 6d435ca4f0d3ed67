"""The tournaments' director: it plays every tournament once started, pairing each round
(`domain.tournaments.rules`: every rule of pairing, seats, deals and scoring is stated there),
dealing its games through the lobby's game creation and scoring their results.

- The director (`Director.advance`) is one idempotent step, run by a
  `service.jobs.worker.Worker` on any replica, keyed by the tournament's id: queue the
  webhooks a change left pending, deal the current round's games not dealt yet (each game's
  id comes from the tournament, round and table: `game_id`, so a step run twice deals each
  game once), and once every table of the round has its result, pair the next round (dealt
  by the next step: one round per step) or finish. A replica dying anywhere leaves the job
  to another after its lease (LEASE, short: a step is one round's deals at most): nothing is
  lost and nothing done twice.
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
- Luck-adjusted standings (`standings_by` "luck_adjusted", `domain.tournaments.rules`): each
  step reads the luck-adjusted result of every table that has its result but not yet that
  one, from its game's post-game review (`adjusted`: `service.history.reviews.Reviews.luck_adjusted`,
  whose first read queues the review) and keeps it with the table's result. A round is
  complete (`round_complete`) once every table has it, so the next round is paired, or the
  tournament finishes, only then; while a review is computed the step answers its worker a
  time REVIEW_WAIT ahead, and the job is run again then (no task waits). A table whose
  review failed for good (`review_failed`: set aside by the reviews' queue) or whose game
  ended without results is kept `unadjusted`: it counts by its results (said in the
  rounds' answer, and logged), so a failed review never stalls the tournament.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeVar

import msgspec

from domain.bots.review import LuckAdjusted
from domain.tournaments.rules import Adjusted, Round, Table, TableResult, next_round, settled
from service.core.callers import PLATFORM
from service.core.errors import ServiceError
from service.core.model import GameRecord, TableRef, TournamentRecord
from service.games.commands import CreateTable, SeatRequest
from service.jobs.worker import Job, LeasedQueue, Worker
from service.reactions.relay import Change
from service.tournaments.checks import (
    advanced,
    result_of,
    round_complete,
    started,
    table_of,
    waits_for_reviews,
)
from service.tournaments.records import (
    BOT_PREFIX,
    GRACE,
    LEASE,
    REVIEW_WAIT,
    Announce,
    game_id,
    game_key,
    game_seed,
    tournament_clock,
    tournament_messages,
)
from service.tournaments.saving import TournamentWrites

T = TypeVar("T")
log = logging.getLogger("ten.tournaments")
# a game's luck-adjusted result by its id, None while its review is computed
LuckOf = Callable[[str], Awaitable[Sequence[LuckAdjusted] | None]]
# a review's refusals that no later read mends: its table counts by its results
NO_REVIEW = ("review_failed", "game_not_reviewable")


class Director:
    """The director's steps and its worker (see the module docstring). `create` deals a
    table's game: the lobby's `create` (`service.lobby.use_cases.Lobby.create`); `announce`
    queues the webhooks a change called for (`service.reactions.webhooks.Webhooks.announce`);
    `adjusted` reads a game's luck-adjusted result (None: no reviews, so a luck-adjusted
    tournament's tables all count by their results)."""

    def __init__(
        self,
        writes: TournamentWrites,
        queue: LeasedQueue,
        create: Callable[[CreateTable], Awaitable[object]],
        *,
        announce: Announce | None,
        clock: Callable[[], float],
        adjusted: LuckOf | None = None,
    ) -> None:
        self.writes = writes
        self.adjusted = adjusted
        self.queue = queue
        self.create_game = create
        self.announce = announce
        self.clock = clock
        self.wake: Callable[[], None] = lambda: None  # the worker's, once it is made

    async def follow(self, tournament_id: str, decide: Callable[[], Awaitable[T]]) -> T:
        """An organiser's decision the director follows up (`decide`: its save): its job is
        queued before the save, due after GRACE seconds (a process dying after the save
        leaves it to another replica), then due at once after the save (due before the save,
        a director could run before it and find nothing to do)."""
        await self.queue.put(tournament_id, b"", self.clock() + GRACE)
        answer = await decide()
        await self._due_now(tournament_id)
        return answer

    async def _due_now(self, tournament_id: str) -> None:
        await self.queue.put(tournament_id, b"", self.clock())
        self.wake()

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
            result = result_of(game, ref.round, table, record.settings.standings_by)
            return advanced(record, self.clock(), results=(*record.results, result))

        if await self.writes.save(ref.tournament_id, change) is not None:
            await self._due_now(ref.tournament_id)

    async def advance(self, tournament_id: str) -> float | None:
        """The director's step (see the module docstring): one round at most; idempotent,
        safe on any replica at once (every save compares the version). A step that pairs
        the next round queues its job again at once and ends: that round's deals are the
        next step, so a step lasts one round's deals, well within the worker's LEASE.
        Answers the time the tournament waits for (its `starts_at`, its `next_round_at`, a
        review's REVIEW_WAIT): the worker keeps its job due then; None when it waits for no
        time."""
        record = await self.writes.store.load_tournament(tournament_id)
        if record is None:
            return None
        if record.status == "registering" and record.starts_at is not None:
            if self.clock() < record.starts_at:
                return record.starts_at
            record = await self.writes.save(tournament_id, self._on_time, pairs=True)
            if record is None:
                return None
        if record.pending:
            record = await self._announce(record)
            if record is None:
                return None
        if record.status != "running":
            return None
        await self._deal(record)
        if waits_for_reviews(record):
            record = await self._adjust(record)
            if record is None:
                return None
        paired = await self.writes.save(tournament_id, self._paired, pairs=True)
        if paired is not None and paired.pending:
            await self._due_now(tournament_id)
            return None
        if paired is not None and paired.status == "running":
            if waits_for_reviews(paired):
                return self.clock() + REVIEW_WAIT
            return paired.next_round_at
        return None

    async def _adjust(self, record: TournamentRecord) -> TournamentRecord | None:
        """Luck-adjusted standings: the luck-adjusted result of each table that has its
        result but not that one yet, read from its game's review (the read queues a review
        not computed yet), kept with the result; a table whose review failed for good is
        kept `unadjusted` (see the module docstring). Reviews still computed: kept as they
        are, read again by a later step."""
        by = record.settings.standings_by
        found: dict[tuple[int, int], TableResult] = {}
        for result in record.results:
            if not settled(result, by):
                read = await self._adjusted(record.id, result)
                if read is not None:
                    found[(result.round, result.table)] = read
        if not found:
            return record

        def change(current: TournamentRecord) -> TournamentRecord | None:
            results = tuple(
                found.get((r.round, r.table), r) if not settled(r, by) else r
                for r in current.results
            )
            return (
                None
                if results == current.results
                else advanced(current, self.clock(), results=results)
            )

        return await self.writes.save(record.id, change)

    async def _adjusted(self, tournament_id: str, result: TableResult) -> TableResult | None:
        """The table's result with its luck-adjusted result, or `unadjusted` when no review
        will give one; None while its review is computed (or the reviews are busy:
        `too_many_reviews`)."""
        if self.adjusted is None:
            return msgspec.structs.replace(result, unadjusted=True)
        try:
            seats = await self.adjusted(game_id(tournament_id, result.round, result.table))
        except ServiceError as error:
            if error.code not in NO_REVIEW:
                return None
            log.warning(
                "tournament %s round %d table %d: no review (%s): counted by its results",
                tournament_id, result.round, result.table, error.code,
            )  # fmt: skip
            return msgspec.structs.replace(result, unadjusted=True)
        if seats is None:
            return None
        adjusted = Adjusted(
            ranks=tuple(s.rank for s in seats), scores=tuple(s.score for s in seats)
        )
        return msgspec.structs.replace(result, adjusted=adjusted)

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

        return await self.writes.save(record.id, change)

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
    table's result is recorded (`Director.record_result`, at least once, kept once)."""

    name = "tournaments"
    durable: Literal[True] = True

    def __init__(self, record: Callable[[GameRecord], Awaitable[None]]) -> None:
        self.record = record

    async def react(self, change: Change) -> None:
        record = change.new  # listed for GAME_ENDED: any game's end, a tournament's or not
        if record.tournament is not None and record.ended:
            await self.record(record)
