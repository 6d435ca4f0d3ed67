"""A matchmaking ticket as stored, its store's port, the create command, and the limits a
ticket is held to.

A `TicketRecord` is written whole with a compare-and-set on its `version` (as a tournament
is). Schema evolution: a field added later has a default and the decoders ignore fields
they do not know, so a record of an older release reads in a newer one and back (rolling
upgrades); a field is never renamed nor its meaning changed.

Its life: `waiting` (in its pool, read by the matchmaker's steps), then `matching` (claimed
by a step for one table, `match` says which: a step that dies leaves it to the next one,
which makes the same table), then `matched` (`game_id`, `seat`, `seat_token` of its holder;
in open mode also `party_seats`, its party's seats and their tokens, which its holder hands
on: nothing else would); or `cancelled` by its holder, or `expired` (a day without a
table)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol

import msgspec

from domain.game.model import BankClock, BotLevel, DeadlineClock, TimeControl
from domain.matchmaking.pairing import WindowRule
from service.core.callers import Caller
from service.core.unit_of_work import Conflict
from service.history.ratings import MU, SIGMA

QUEUE = "matchmaking"  # the matchmaker's leased queue (service.jobs.worker): a job per pool
Mode = Literal["live", "correspondence"]
TicketStatus = Literal["waiting", "matching", "matched", "cancelled", "expired"]
FINAL: frozenset[str] = frozenset(("matched", "cancelled", "expired"))
MODES: tuple[Mode, ...] = ("live", "correspondence")
LIFETIME = 86400.0  # seconds a ticket waits at most, then it expires
STEP = 1.0  # seconds between two steps of a pool with tickets waiting
GRACE = 5.0  # seconds a create's job waits for the process that saves the ticket
LEASE = 30.0  # seconds a step holds its pool's job (a step is a few stores' round trips)
MAX_BOTS_AFTER = int(LIFETIME)
MAX_PARTY = 4  # other players of a party: a table seats five at most
MAX_WAITING = 10  # waiting tickets one caller (a player, an anonymous address) holds at once
KEY_KEPT = 2 * LIFETIME  # seconds an Idempotency-Key names its ticket (its life, and more)
DEFAULT_RATING = MU  # a player the ratings do not know yet
# the window of every rated ticket (domain.matchmaking.pairing): the ladder's spread
WINDOW = WindowRule(sigma=SIGMA)
# the clock of a matched table: live play on a bank (a seat left alone is played by a bot
# after its timeouts), correspondence a day per decision
CLOCKS: dict[str, TimeControl] = {
    "live": BankClock(initial_seconds=120, increment_seconds=5, takeover_after=3),
    "correspondence": DeadlineClock(hours=24),
}
# a ticket's id: its mode's initial, then 19 hex digits (the mode names the keys' slot);
# matched whole (`fullmatch`: `$` would let a trailing newline through)
TICKET_ID = re.compile(r"[lc][0-9a-f]{19}")


def ticket_id_for(mode: str, digest: str) -> str:
    return f"{mode[0]}{digest[-19:]}"


class KeyClaim(msgspec.Struct, frozen=True, kw_only=True):
    """What a keyed create's Idempotency-Key names: the ticket it makes (a random id: the
    key does not give it away) and what the create asked."""

    ticket_id: str
    fingerprint: str


def mode_of(ticket_id: str) -> Mode:
    return "live" if ticket_id.startswith("l") else "correspondence"


def pool_of(mode: str, rated: bool) -> str:
    """The pool a ticket waits in: tickets of two pools never sit together."""
    return f"{mode}:{'rated' if rated else 'casual'}"


class PartyMember(msgspec.Struct, frozen=True, kw_only=True):
    player_id: str
    name: str


class PartySeat(msgspec.Struct, frozen=True, kw_only=True):
    """A party member's seat of a matched table and its token (open mode: the ticket's
    holder is the one credential the service knows, so it is handed every seat of it)."""

    player_id: str
    seat: int
    seat_token: str


class Match(msgspec.Struct, frozen=True, kw_only=True):
    """The table a step claimed a ticket for: every ticket of it names the same match, its
    tickets in seat order, its size and its bots (the table is made from these alone)."""

    id: str
    tickets: tuple[str, ...]
    size: int
    bots: int = 0


class TicketRecord(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    mode: Mode
    rated: bool
    sizes: tuple[int, ...]
    player_id: str
    name: str
    party: tuple[PartyMember, ...] = ()
    fill_bots_after: float | None = None
    bot: BotLevel = "basic"
    rating: float | None = None  # the players' mean rating (rated tickets)
    status: TicketStatus = "waiting"
    created_at: float
    expires_at: float
    updated_at: float
    token_hash: str | None = None  # the ticket token's (a caller without JWT or key)
    owner: str | None = None  # whose quota it counts in (`service.core.quotas.owner_of`)
    fingerprint: str = ""  # what the create asked (`service.core.idempotency.fingerprint`)
    match: Match | None = None
    game_id: str | None = None
    seat: int | None = None  # the holder's seat
    seat_token: str | None = None  # the holder's seat token: only the holder's reads show it
    # open mode: the party's seats and their tokens, for the holder to hand on (only the
    # holder's reads show them); empty with identities configured (the members' JWTs, or
    # the platform's reissue, reach their seats)
    party_seats: tuple[PartySeat, ...] = ()
    version: int = 0

    @property
    def pool(self) -> str:
        return pool_of(self.mode, self.rated)

    @property
    def players(self) -> tuple[str, ...]:
        return (self.player_id, *(m.player_id for m in self.party))

    @property
    def final(self) -> bool:
        return self.status in FINAL

    @property
    def ended(self) -> bool:  # a stream of it ends (`service.tournaments.feeds`)
        return self.final


class CreateTicket(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    mode: Mode
    sizes: tuple[int, ...] = (2, 3, 4, 5)
    rated: bool = True
    name: str
    player_id: str | None = None
    party: tuple[PartyMember, ...] | None = None
    fill_bots_after: int | None = None
    bot: BotLevel = "basic"
    idempotency_key: str | None = None
    origin: str | None = None  # the client's address (an anonymous caller's quota)

    def fingerprint_fields(self) -> tuple:
        return (
            self.mode, self.sizes, self.rated, self.name, self.player_id, self.party,
            self.fill_bots_after, self.bot,
        )  # fmt: skip


class TicketConflict(Conflict[TicketRecord]):
    """`TicketStore.save_tickets` refused: a ticket is no longer at the version read.
    `current`: that ticket as stored then (None: there is none)."""

    def __init__(self, current: TicketRecord | None) -> None:
        super().__init__("the ticket changed", current=current)


class TicketHeld(Exception):
    """A player of the ticket holds a waiting ticket of its mode already (`ticket_id`)."""

    def __init__(self, ticket_id: str) -> None:
        super().__init__(ticket_id)
        self.ticket_id = ticket_id


class TicketStore(Protocol):
    """The tickets (infra/memory_matchmaking.py, infra/redis_matchmaking.py): each written
    whole with a compare-and-set on its version; a pool's tickets not final are listed in
    the order they were made; a player holds one ticket not final per mode."""

    async def create_ticket(self, record: TicketRecord, now: float) -> TicketRecord | None:
        """Store a new ticket (version 0) in its pool, and make it its players' ticket of its
        mode; None when stored, else the ticket already stored under its id (nothing is
        overwritten). TicketHeld when one of its players holds another ticket of the mode
        that is not final and has not expired by `now`."""

    async def load_ticket(self, ticket_id: str) -> TicketRecord | None: ...

    async def claim_key(self, entry: str, claim: KeyClaim, keep: float) -> KeyClaim:
        """The ticket a keyed create makes: the first claim of `entry` (whatever its mode) is
        kept `keep` seconds, and every claim of it gets that first one back."""

    async def save_tickets(self, records: Sequence[TicketRecord]) -> None:
        """Replace every ticket if each is still at its `version - 1`, all or none; else
        TicketConflict with the first one that is not. A ticket saved final leaves its pool
        and is no longer its players' ticket."""

    async def pool(self, pool: str, limit: int) -> list[TicketRecord]:
        """The pool's tickets not final (waiting or matching), oldest first, at most `limit`."""
