"""Matchmaking tickets as a service: created, read and cancelled here, each change one save
of a `TicketRecord` with its version compared (`service.core.unit_of_work.write`); tables are
made by the matchmaker (`service.matchmaking.matchmaker`), which every create wakes.

Who holds a ticket (cancels it, reads its seat token): the player of a player JWT naming
its `player_id`, the platform, or the bearer of the ticket's token (handed, once, to a
creator without JWT or key; stored hashed, as a table's host token is). Anyone holding a
ticket's id reads the rest of it (the id is unguessable: random, a keyed create's too).
In open mode a party's other players have no credential of their own (no JWT, no platform
to reissue a seat's token): the holder reads their seats' tokens too (`party_seats`), and
hands them on.

A create with an Idempotency-Key claims the key first (`TicketStore.claim_key`, whatever the
mode: the same key with another mode or anything else asked otherwise is
`idempotency_key_reused`), naming the ticket it makes; a copy gets that ticket, or makes it
under that id when the first create saved nothing. The keys of a caller without JWT or key
are its address's (as its quota is). A copy never gets the ticket token: an anonymous
caller keeps the token of its first answer (a caller sharing its address and its key must
not get it)."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from domain.matchmaking.pairing import window
from service.core import idempotency
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.quotas import Quota, QuotaStore, owner_of
from service.core.unit_of_work import Retry, write
from service.games.use_cases import hash_token, token_matches
from service.history.ratings import Rating
from service.jobs.worker import LeasedQueue
from service.matchmaking.matchmaker import Matchmaker, waiting_of
from service.matchmaking.records import (
    DEFAULT_RATING,
    GRACE,
    KEY_KEPT,
    LIFETIME,
    MAX_WAITING,
    TICKET_ID,
    WINDOW,
    CreateTicket,
    KeyClaim,
    PartyMember,
    PartySeat,
    TicketHeld,
    TicketRecord,
    TicketStore,
    ticket_id_for,
)
from service.reactions.webhook_delivery import Message

Ratings = Callable[[Sequence[str]], Awaitable[dict[str, Rating]]]
Announce = Callable[[Sequence[Message]], Awaitable[None]]


class Created(msgspec.Struct, frozen=True, kw_only=True):
    record: TicketRecord
    ticket_token: str | None  # for a creator without JWT or key, on the create answer only
    # (never on a copy's)
    replayed: bool = False


class Shown(msgspec.Struct, frozen=True, kw_only=True):
    """A ticket as a read shows it now: its status (one past its expiry reads expired), the
    seconds it waited (until now, or its end), its window then, its seat token when the
    reader holds it."""

    record: TicketRecord
    status: str
    waited: float
    window: tuple[float, float] | None
    seat_token: str | None
    party_seats: tuple[PartySeat, ...] = ()  # the holder's reads only (open mode)


class Matchmaking:
    def __init__(
        self,
        store: TicketStore,
        queue: LeasedQueue,
        create: Callable[..., Awaitable[object]],
        *,
        ratings: Ratings,
        announce: Announce | None = None,
        clock: Callable[[], float] = time.time,
        random_hex: Callable[[int], str] = secrets.token_hex,
        identities_open: bool = True,
        retry: Retry | None = None,
        quotas: QuotaStore | None = None,
    ) -> None:
        self.store = store
        self.queue = queue
        self.ratings = ratings
        self.random_hex = random_hex
        self.identities_open = identities_open
        self.retry = retry if retry is not None else Retry(8)
        self._clock = clock
        self.matchmaker = Matchmaker(
            store, queue, create, announce=announce, clock=self.now, retry=self.retry,
            random_hex=random_hex, hand_party=identities_open,
        )  # fmt: skip
        # a caller's waiting tickets (`service.core.quotas`; none without a store)
        self.waiting = Quota(
            quotas, "waiting-tickets", MAX_WAITING if quotas is not None else 0,
            "too_many_tickets", self._still_waiting, keep=int(2 * LIFETIME),
            retry_after=lambda oldest, now: oldest + LIFETIME - now, clock=self.now,
        )  # fmt: skip

    def now(self) -> float:
        return self._clock()

    def set_clock(self, clock: Callable[[], float]) -> None:
        """Another clock for every step and read (a simulation's)."""
        self._clock = clock

    # ------------------------------------------------------------ create

    async def create(self, command: CreateTicket) -> Created:
        """A waiting ticket (see the module docstring); with an `idempotency_key`, the key
        names it and a copy of the create gets the first one (`replayed`)."""
        caller = command.caller
        holder, party = self._players(command)
        self._check(command, holder, party)
        fingerprint = idempotency.fingerprint("create_ticket", *command.fingerprint_fields())
        ticket_id = ticket_id_for(command.mode, self.random_hex(10))
        if command.idempotency_key is not None:
            scope = idempotency.key_scope(caller, command.origin)
            entry = idempotency.entry_key("create_ticket", scope, command.idempotency_key)
            mine = KeyClaim(ticket_id=ticket_id, fingerprint=fingerprint)
            first = await self.store.claim_key(entry, mine, KEY_KEPT)
            _same(first.fingerprint, fingerprint)
            if first.ticket_id != ticket_id:
                ticket_id = first.ticket_id
                stored = await self.store.load_ticket(ticket_id)
                if stored is not None:
                    return _replayed(stored, fingerprint)
        token = token_hash = None
        if caller.kind == "anonymous":
            token = f"{ticket_id}.ticket.{secrets.token_urlsafe(32)}"
            token_hash = hash_token(token)
        now = self.now()
        players = (holder, *(m.player_id for m in party))
        record = TicketRecord(
            id=ticket_id, mode=command.mode, rated=command.rated,
            sizes=tuple(sorted(set(command.sizes))), player_id=holder, name=command.name,
            party=party,
            fill_bots_after=None if command.fill_bots_after is None
            else float(command.fill_bots_after),
            bot=command.bot,
            rating=await self._rating(players) if command.rated else None,
            created_at=now, expires_at=now + LIFETIME, updated_at=now, token_hash=token_hash,
            owner=owner_of(caller, command.origin), fingerprint=fingerprint,
        )  # fmt: skip
        await self.waiting.take(record.owner, ticket_id, now)
        # queued first: a ticket saved has its pool's step (a process dying after the save
        # leaves it to another replica after GRACE)
        await self.queue.put(record.pool, b"", now + GRACE)
        try:
            stored = await self.store.create_ticket(record, now)
        except TicketHeld:
            raise ServiceError("ticket_exists") from None
        if stored is not None:
            return _replayed(stored, fingerprint)
        await self.matchmaker.due_now(record.pool)
        return Created(record=record, ticket_token=token)

    def _players(self, command: CreateTicket) -> tuple[str, tuple[PartyMember, ...]]:
        """The ticket's holder and party, as this caller may name them."""
        caller, party = command.caller, command.party or ()
        if caller.kind == "player":
            assert caller.player_id is not None
            if command.player_id not in (None, caller.player_id) or party:
                raise ServiceError("player_id_not_yours")
            return caller.player_id, ()
        if caller.platform:
            if command.player_id is None:
                raise ServiceError("invalid_ticket", "The platform names the player_id.")
            return command.player_id, party
        if not self.identities_open:
            raise ServiceError("authentication_required")
        # open mode: a player_id is whatever the caller says; none: a guest of its own
        return command.player_id or f"guest-{self.random_hex(8)}", party

    def _check(self, command: CreateTicket, holder: str, party: Sequence[PartyMember]) -> None:
        players = [holder, *(m.player_id for m in party)]
        if len(set(players)) != len(players):
            raise ServiceError("duplicate_player_id")
        if not command.sizes:
            raise ServiceError("invalid_ticket", "Name one table size at least.")
        if min(command.sizes) < len(players):
            raise ServiceError(
                "party_too_large", "Every table size must seat the party's {n} players.",
                n=len(players),
            )  # fmt: skip

    async def _rating(self, players: Sequence[str]) -> float:
        known = await self.ratings(players)
        values = [known[p].mu if p in known else DEFAULT_RATING for p in players]
        return sum(values) / len(values)

    async def _still_waiting(self, ticket_ids: Sequence[str]) -> dict[str, bool]:
        found = {}
        now = self.now()
        for ticket_id in ticket_ids:
            record = await self.store.load_ticket(ticket_id)
            if record is not None:
                found[ticket_id] = not record.final and record.expires_at > now
        return found

    # ------------------------------------------------------------ read and cancel

    async def load(self, ticket_id: str) -> TicketRecord:
        record = await self.store.load_ticket(ticket_id) if TICKET_ID.fullmatch(ticket_id) else None
        if record is None:
            raise ServiceError("ticket_not_found")
        return record

    def holds(self, caller: Caller, record: TicketRecord) -> bool:
        """Whether the caller holds the ticket (see the module docstring)."""
        if caller.platform:
            return True
        if caller.kind == "player":
            return caller.player_id == record.player_id
        return token_matches(record.token_hash, caller.seat_token)

    def shown(self, record: TicketRecord, caller: Caller) -> Shown:
        now = self.now()
        status: str = record.status
        if status == "matching":
            status = "waiting"  # its table is being made
        end = now
        if record.final:
            end = record.updated_at
        elif record.expires_at <= now:
            status, end = "expired", record.expires_at
        shown_window = None
        if record.rating is not None:
            shown_window = window(waiting_of(record), end, WINDOW)
        holder = self.holds(caller, record)
        return Shown(
            record=record, status=status, waited=max(0.0, end - record.created_at),
            window=shown_window, seat_token=record.seat_token if holder else None,
            party_seats=record.party_seats if holder else (),
        )  # fmt: skip

    async def get(self, caller: Caller, ticket_id: str) -> Shown:
        return self.shown(await self.load(ticket_id), caller)

    async def cancel(self, caller: Caller, ticket_id: str) -> Shown:
        """The holder calls the ticket off while it waits; a ticket ended stays as it is."""
        record = await self.load(ticket_id)
        if not self.holds(caller, record):
            if caller.seat_token is not None and caller.kind == "anonymous":
                raise ServiceError("unauthorized")
            raise ServiceError("not_your_ticket")

        async def attempt(current: TicketRecord) -> TicketRecord:
            if current.status in ("matching", "matched"):
                raise ServiceError("ticket_already_matched")
            if current.final:
                return current
            now = self.now()
            status = "expired" if current.expires_at <= now else "cancelled"
            new = msgspec.structs.replace(
                current, status=status, updated_at=now, version=current.version + 1
            )
            await self.store.save_tickets([new])
            return new

        saved = await write(
            record, attempt, self.retry, gone="ticket_not_found",
            reread=lambda: self.load(ticket_id),
        )  # fmt: skip
        return self.shown(saved, caller)


def _same(first: str, fingerprint: str) -> None:
    """Refuse (`idempotency_key_reused`) a create that asks otherwise than the key's first."""
    if not hmac.compare_digest(first, fingerprint):
        raise ServiceError("idempotency_key_reused")


def _replayed(stored: TicketRecord, fingerprint: str) -> Created:
    """The ticket a keyed create made before, if this create asks what it asked; without
    its ticket token (see the module docstring)."""
    _same(stored.fingerprint, fingerprint)
    return Created(record=stored, ticket_token=None, replayed=True)
