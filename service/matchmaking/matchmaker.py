"""The matchmaker: one idempotent step per pool (live or correspondence, rated or casual),
run by a `service.jobs.worker.Worker` on any replica, keyed by the pool's name; the step
answers the time of its next one while tickets wait, so the pool is stepped on any replica
and across restarts, and no task sleeps.

A step reads the pool's tickets not final, then:
1. finishes every match a step left unfinished (a replica died after its claim);
2. expires the tickets a day old;
3. pairs the waiting ones (`domain.matchmaking.pairing.pair`) and, for each table proposed,
   claims its tickets at once: one compare-and-set of all of them, from `waiting` to
   `matching`, each naming the match (its id, tickets in seat order, size, bots). A ticket
   cancelled or claimed by another step meanwhile refuses the claim: no table is made, the
   next step pairs again. So a ticket is in one match at most.
4. finishes each match claimed: the table is made by the lobby's create (the one write path
   of `POST /v1/games`), by the platform with every player seated verified, keyed by the
   match's id, so a step that makes it again (after a crash) gets the same game and seat
   tokens; the webhooks `ticket_matched` are queued (each once: its id is the ticket's);
   then each ticket is saved `matched` with the game, its holder's seat and that seat's
   token; in open mode (no identity configured: `hand_party`) also its party's seats and
   their tokens, since its holder is then the only one the service can hand them to (a
   member has no JWT, and no platform reissues a seat's token).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

import msgspec

from domain.matchmaking.pairing import Waiting, pair
from service.core.callers import PLATFORM
from service.core.errors import ServiceError
from service.core.unit_of_work import Retry, write
from service.games.commands import CreateTable, SeatRequest
from service.jobs.worker import Job, LeasedQueue, Worker
from service.matchmaking.records import (
    CLOCKS,
    LEASE,
    STEP,
    WINDOW,
    Match,
    PartySeat,
    TicketConflict,
    TicketRecord,
    TicketStore,
)
from service.reactions.webhook_delivery import Message
from service.reactions.webhook_payloads import TicketMatchedData, TicketMatchedWebhook
from service.reactions.webhooks import message

log = logging.getLogger("ten.matchmaking")
MAX_POOL = 20_000  # tickets a step reads of a pool (the oldest)
# tables a step makes at most (each is a game made): a step stays well within its lease
# however many tickets arrived at once; the next one runs at once and makes the rest
MAX_TABLES = 200


def waiting_of(record: TicketRecord) -> Waiting:
    """A ticket as the pairing step sees it."""
    return Waiting(
        id=record.id, pool=record.pool, sizes=record.sizes, created_at=record.created_at,
        players=len(record.players), rating=record.rating,
        fill_bots_after=record.fill_bots_after,
    )  # fmt: skip


class Made(msgspec.Struct, frozen=True, kw_only=True):
    """What a step did: tables made, tickets expired, and the tickets still waiting."""

    tables: int = 0
    expired: int = 0
    waiting: int = 0


class Matchmaker:
    """The steps and their worker (see the module docstring). `create` makes a table: the
    lobby's `create` (`service.lobby.use_cases.Lobby.create`); `announce` queues webhooks
    (`service.reactions.webhooks.Webhooks.announce`); `hand_party`: a ticket's holder gets
    its party's seat tokens (open mode)."""

    def __init__(
        self,
        store: TicketStore,
        queue: LeasedQueue,
        create: Callable[[CreateTable], Awaitable[object]],
        *,
        announce: Callable[[Sequence[Message]], Awaitable[None]] | None,
        clock: Callable[[], float],
        retry: Retry,
        random_hex: Callable[[int], str],
        hand_party: bool = False,
    ) -> None:
        self.store = store
        self.hand_party = hand_party
        self.queue = queue
        self.create_game = create
        self.announce = announce
        self.clock = clock
        self.retry = retry
        self.random_hex = random_hex
        self.wake: Callable[[], None] = lambda: None  # the worker's, once it is made
        self.last = Made()

    async def due_now(self, pool: str) -> None:
        await self.queue.put(pool, b"", self.clock())
        self.wake()

    async def step(self, pool: str) -> float | None:
        """One step of a pool; the time of the next one (None: nothing waits)."""
        now = self.clock()
        tickets = await self.store.pool(pool, MAX_POOL)
        tables = expired = 0
        unfinished: dict[str, Match] = {}
        for record in tickets:
            if record.status == "matching" and record.match is not None:
                unfinished.setdefault(record.match.id, record.match)
        for match in unfinished.values():
            tables += await self.finish(match)
        waiting = [t for t in tickets if t.status == "waiting"]
        for record in waiting:
            if record.expires_at <= now:
                expired += await self._expire(record)
        waiting = [t for t in waiting if t.expires_at > now]
        by_id = {t.id: t for t in waiting}
        seated = 0
        for proposed in pair([waiting_of(t) for t in waiting], now, WINDOW):
            if tables >= MAX_TABLES:
                self.last = Made(tables=tables, expired=expired, waiting=len(waiting) - seated)
                return now  # more to make: the next step at once
            match = Match(
                id=self.random_hex(10), tickets=proposed.tickets, size=proposed.size,
                bots=proposed.bots,
            )  # fmt: skip
            if await self._claim(match, [by_id[i] for i in proposed.tickets]):
                tables += await self.finish(match)
                seated += len(proposed.tickets)
        left = len(waiting) - seated
        self.last = Made(tables=tables, expired=expired, waiting=left)
        return now + STEP if left > 0 else None

    async def _claim(self, match: Match, tickets: Sequence[TicketRecord]) -> bool:
        """All the tickets `matching` for this match, or none (see the module docstring)."""
        now = self.clock()
        claimed = [
            msgspec.structs.replace(
                t, status="matching", match=match, updated_at=now, version=t.version + 1
            )
            for t in tickets
        ]
        try:
            await self.store.save_tickets(claimed)
        except TicketConflict:
            return False  # one of them changed (cancelled, claimed): the next step pairs again
        return True

    async def _expire(self, record: TicketRecord) -> int:
        async def attempt(current: TicketRecord) -> int:
            if current.status != "waiting":
                return 0
            new = msgspec.structs.replace(
                current, status="expired", updated_at=current.expires_at,
                version=current.version + 1,
            )  # fmt: skip
            await self.store.save_tickets([new])
            return 1

        return await self._write(record, attempt, 0)

    async def finish(self, match: Match) -> int:
        """Make the match's table (again: the same one) and mark its tickets matched; 1 when
        this call made it, 0 when there was nothing to finish."""
        tickets = [await self.store.load_ticket(i) for i in match.tickets]
        if any(t is None or t.match != match for t in tickets):
            log.warning("match %s names a ticket it does not hold: left", match.id)
            return 0
        found = [t for t in tickets if t is not None]
        if all(t.status == "matched" for t in found):
            return 0
        try:
            made: object = await self.create_game(self.table(match, found))
        except ServiceError as refused:
            if refused.retry_after is not None:
                raise  # busy: the worker waits, the match is finished by a later step
            log.warning("match %s refused by the lobby (%s): back to waiting", match.id, refused)
            await self._release(match, found)
            return 0
        record = made.record  # type: ignore[attr-defined]
        tokens = dict(made.tokens)  # type: ignore[attr-defined]
        seats = self.seats(match, found)
        if self.announce is not None:
            at = datetime.fromtimestamp(self.clock(), UTC)
            await self.announce([
                message(
                    f"msg_mm_{t.id}_matched",
                    TicketMatchedWebhook(timestamp=at, data=TicketMatchedData(
                        ticket_id=t.id, game_id=record.id, seat=seats[t.id],
                        player_id=t.player_id,
                    )),
                )
                for t in found
            ])  # fmt: skip
        for ticket in found:
            seat = seats[ticket.id]
            party = self.party_seats(ticket, seat, tokens) if self.hand_party else ()
            await self._matched(ticket, record.id, seat, tokens.get(seat), party)
        return 1

    @staticmethod
    def party_seats(
        ticket: TicketRecord, seat: int, tokens: dict[int, str]
    ) -> tuple[PartySeat, ...]:
        """The party's seats (each member after its holder, in the party's order) and their
        tokens."""
        return tuple(
            PartySeat(player_id=m.player_id, seat=seat + i, seat_token=tokens[seat + i])
            for i, m in enumerate(ticket.party, start=1)
            if seat + i in tokens
        )

    async def _matched(
        self,
        ticket: TicketRecord,
        game_id: str,
        seat: int,
        token: str | None,
        party: tuple[PartySeat, ...],
    ) -> int:
        async def attempt(current: TicketRecord) -> int:
            if current.status != "matching" or current.match != ticket.match:
                return 0
            new = msgspec.structs.replace(
                current, status="matched", game_id=game_id, seat=seat, seat_token=token,
                party_seats=party, updated_at=self.clock(), version=current.version + 1,
            )  # fmt: skip
            await self.store.save_tickets([new])
            return 1

        return await self._write(ticket, attempt, 0)

    async def _release(self, match: Match, tickets: Sequence[TicketRecord]) -> None:
        for ticket in tickets:

            async def attempt(current: TicketRecord) -> int:
                if current.status != "matching" or current.match != match:
                    return 0
                new = msgspec.structs.replace(
                    current, status="waiting", match=None, updated_at=self.clock(),
                    version=current.version + 1,
                )  # fmt: skip
                await self.store.save_tickets([new])
                return 1

            await self._write(ticket, attempt, 0)

    async def _write(self, record: TicketRecord, attempt, gone: int) -> int:
        """`attempt` through the one write loop; `gone` when the ticket is no more."""
        try:
            return await write(
                record, attempt, self.retry, gone="ticket_not_found",
                reread=lambda: self._reload(record.id),
            )  # fmt: skip
        except ServiceError as error:
            if error.code == "ticket_not_found":
                return gone
            raise

    async def _reload(self, ticket_id: str) -> TicketRecord:
        record = await self.store.load_ticket(ticket_id)
        if record is None:
            raise ServiceError("ticket_not_found")
        return record

    @staticmethod
    def seats(match: Match, tickets: Sequence[TicketRecord]) -> dict[str, int]:
        """Each ticket's holder's seat: the tickets in the match's order, each holder then
        its party."""
        seats, at = {}, 0
        for ticket in tickets:
            seats[ticket.id] = at
            at += len(ticket.players)
        return seats

    @staticmethod
    def table(match: Match, tickets: Sequence[TicketRecord]) -> CreateTable:
        """The match's table, made from the match and its tickets alone (the same on every
        step that makes it), keyed by the match's id."""
        seats = []
        for ticket in tickets:
            seats.append(SeatRequest(name=ticket.name, player_id=ticket.player_id))
            seats.extend(SeatRequest(name=m.name, player_id=m.player_id) for m in ticket.party)
        anchor = tickets[0]
        seats.extend(
            SeatRequest(name=f"Bot {len(seats) + i + 1}", bot=anchor.bot) for i in range(match.bots)
        )
        return CreateTable(
            caller=PLATFORM, seats=tuple(seats), fill_bot=anchor.bot,
            clock=CLOCKS[anchor.mode], ranked=anchor.rated, idempotency_key=f"match/{match.id}",
        )  # fmt: skip

    def worker(self, **options: object) -> Worker:
        """The matchmaker's worker (every replica runs one)."""

        async def handle(job: Job) -> float | None:
            return await self.step(job.id)

        options.setdefault("lease", LEASE)
        options.setdefault("poll", STEP)
        worker = Worker(self.queue, handle, **options)  # type: ignore[arg-type]
        self.wake = worker.wake
        return worker
