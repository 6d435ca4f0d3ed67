"""The application's model of a stored game: the record the stores keep (the engine state,
the seat credentials, the lobby's table) and the rules of its seats and listings. Pure data
and rules; no I/O (the stores in `infra/` keep it, the use cases change it)."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.game.model import BotLevel, GameState, Rules, TimeControl
from domain.tournaments.rules import Entrant, Round, TableResult
from domain.tournaments.rules import Settings as TournamentSettings

GameStatus = Literal["open", "active", "finished", "cancelled", "aborted", "abandoned"]
OPEN_INDEX = "open"  # the index of the public tables waiting for players


def player_index(player_id: str) -> str:
    """The index of a player's games (open tables they sit at and live games)."""
    return f"player:{player_id}"


def host_index(host: str) -> str:
    """The index of the open tables one caller hosts (`GameRecord.host`, the owner of their
    quota: `service.core.quotas.owner_of`); never listed over the API."""
    return f"host:{host}"


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    """A seat of a table created open, as the lobby sees it."""

    name: str | None = None  # who sits there (a player's or a bot's name); None while empty
    bot: str | None = None  # the level of a bot seat
    player_id: str | None = None  # reserved for this player, or taken by them
    verified: bool = False  # player_id proven: a player JWT with that `sub`, or the platform
    open: bool = False  # created open to anyone (else reserved for player_id, or a bot)
    # what its player added to the deal when taking it (`domain.game.fairness`); "": none
    entropy: str = ""

    @property
    def taken(self) -> bool:
        return self.name is not None


class Table(msgspec.Struct, frozen=True, kw_only=True):
    """A game created open, while it waits for its players: its seats and how it starts."""

    seats: tuple[Seat, ...]
    invite_hash: str | None = None  # private table: sha256 of its invite code (never listed)
    fill: Literal["bots", "drop"] = "bots"  # what empty seats become if the host starts early
    fill_bot: str = "basic"
    starting_seat: int | None = None
    deck: tuple[str, ...] | None = None
    rules: Rules | None = None
    clock: TimeControl | None = None  # the game's time control, started with the game
    # the game's secret seed, chosen at creation (a tournament's deal:
    # `service.tournaments.records.game_seed`) and committed to in the table's views; None
    # (tables stored before the fair deals): drawn when dealt
    seed: str | None = None
    version: int = 0  # +1 per join, leave and reissued token while open
    cancelled: bool = False
    # scheduled (unix s): every seat assigned at creation, its seats fixed, and its game dealt
    # at that time by the lobby's start (`Lobby.start_scheduled`), not when it filled
    starts_at: float | None = None

    @property
    def private(self) -> bool:
        return self.invite_hash is not None

    @property
    def scheduled(self) -> bool:
        return self.starts_at is not None


class TableRef(msgspec.Struct, frozen=True, array_like=True):
    """A tournament's table: which tournament, round and table a game is, and whether the
    tournament is ranked (an unranked one's games are not: `service.core.ranking`)."""

    tournament_id: str
    round: int
    table: int
    ranked: bool = True


class GameRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A game as stored: the engine state (secrets included) and the seat credentials; a game
    created open has no state until it starts (`table` says who sits where until then)."""

    id: str
    state: GameState | None
    token_hashes: tuple[str | None, ...]  # sha256 of each human seat's token; None for bots
    created_at: float  # unix seconds
    updated_at: float
    player_ids: tuple[str | None, ...] = ()  # the calling platform's id of each seat's player
    verified: tuple[bool, ...] = ()  # per seat: player_id proven (JWT `sub` or the platform)
    custom_deck: bool = False  # dealt from a deck the creator gave (never ranked)
    casual: bool = False  # created casual (a casual matchmaking ticket's table: never ranked)
    table: Table | None = None  # the lobby: present for games created open
    host_id: str | None = None  # the host's player_id (a JWT), or None
    host_token_hash: str | None = None  # sha256 of the host credential of an anonymous host
    # whose quota of open tables this table counts in (`Lobby.create`): `player:<sub>`, or
    # `address:<digest of the client's address>` for an anonymous host; None: no quota
    host: str | None = None
    aborted: bool = False  # stopped by the host or the platform while live (never ranked)
    abandoned: bool = False  # ended by its idle expiry: nobody acted for TEN_IDLE_TTL
    # When something must next happen to it with nobody calling (unix seconds): its clock's
    # deadline, else its idle expiry; None once ended. Set by the use cases on every save;
    # the stores keep an index of it (`GameStore.due_games`).
    due: float | None = None
    # Set by every save of this release (`successor`); -1 in records made otherwise (older
    # releases, tests), where the version alone tells saves apart.
    revision: int = -1
    # the tournament table this game is (`TableRef`), None for any other game
    tournament: TableRef | None = None

    @property
    def stamp(self) -> int:
        """What the stores compare-and-set on: it grows with every save, also a save that
        does not change the game's version (a seat token reissued in a live game). The
        version until such a save, so a replica of an older release, mid-upgrade, agrees."""
        return self.revision if self.revision > self.version else self.version

    def successor(self, **changes: object) -> GameRecord:
        """This record changed, to be saved: its stamp moves past the old one."""
        new = msgspec.structs.replace(self, **changes)
        msgspec.structs.force_setattr(new, "revision", max(self.stamp + 1, new.version))
        return new

    @property
    def version(self) -> int:
        if self.state is None:
            assert self.table is not None
            return self.table.version
        return self.state.version

    @property
    def status(self) -> GameStatus:
        if self.state is None:
            return "cancelled" if self.table is not None and self.table.cancelled else "open"
        if self.aborted:
            return "aborted"
        if self.abandoned:
            return "abandoned"
        return "finished" if self.state.phase == "finished" else "active"

    @property
    def idle_since(self) -> float:
        """Since when it counts as untouched (its idle expiry runs from there): its last
        change, or a scheduled table's start time when that is later (it waits for its time,
        it is not idle)."""
        table = self.table
        if self.state is None and table is not None and table.starts_at is not None:
            return max(self.updated_at, table.starts_at)
        return self.updated_at

    @property
    def stopped(self) -> bool:
        """Ended while live, with no results: aborted by its host or the platform, or
        abandoned (its idle expiry)."""
        return self.aborted or self.abandoned

    @property
    def ended(self) -> bool:
        """Nothing more will happen to it (finished, aborted, abandoned or cancelled)."""
        return self.status in ("finished", "aborted", "cancelled", "abandoned")

    def verified_seat_of(self, player_id: str | None) -> int | None:
        """The seat `player_id` holds with a proven identity (a table's taken seat while
        open, the game's seat since), None if none."""
        if player_id is None:
            return None
        if self.state is None:
            assert self.table is not None
            for seat, s in enumerate(self.table.seats):
                if s.taken and s.verified and s.player_id == player_id:
                    return seat
            return None
        verified = self.verified
        for seat, pid in enumerate(self.player_ids):
            if pid == player_id and seat < len(verified) and verified[seat]:
                return seat
        return None

    def indexes(self) -> frozenset[str]:
        """The listings this game belongs in now (`GameStore.list_games`): a public open
        table in the lobby's; an open or live game in each of its players'; an open table,
        public or private, in its host's (`host_index`)."""
        status = self.status
        if status not in ("open", "active"):
            return frozenset()
        found = set()
        if status == "open":
            assert self.table is not None
            if not self.table.private and not self.table.scheduled:  # a scheduled one: full
                found.add(OPEN_INDEX)
            ids = [s.player_id for s in self.table.seats]
            if self.host is not None:
                found.add(host_index(self.host))
        else:
            ids = list(self.player_ids)
        found.update(player_index(p) for p in ids if p is not None)
        return frozenset(found)


# ---------------------------------------------------------------- tournaments

TournamentStatus = Literal["registering", "running", "paused", "finished", "stopped"]


class TournamentRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A tournament as stored (`service.tournaments.use_cases`): its settings (`settings.seed` is
    secret: the deals come from it), who may enter, the entrants once it started, the
    rounds paired and the tables' results so far. `version` grows by one with every save
    (the stores compare-and-set on it). `pending`: the webhooks a change called for, not
    queued yet (the director queues them, then clears them: `Director.advance`)."""

    id: str
    name: str
    organiser: str  # the creator's `Caller.scope`: "platform" or "player:<sub>"
    settings: TournamentSettings
    clock: TimeControl | None = None  # None (made before every tournament had one): the default
    bot_level: BotLevel = "basic"  # the bots that fill the places nobody registered for
    ranked: bool = True
    places: int  # entrants at the start: the registered players, then bots
    invited: tuple[str, ...] | None = None  # None: open registration (up to `places`)
    registered: tuple[str, ...] = ()  # player ids, in order of registration
    status: TournamentStatus = "registering"
    entrants: tuple[Entrant, ...] = ()  # fixed at the start
    rounds: tuple[Round, ...] = ()
    results: tuple[TableResult, ...] = ()
    pending: tuple[str, ...] = ()  # webhooks to queue: "started", "round:<n>", "finished"
    starts_at: float | None = None  # unix s: it starts itself then (unless started before)
    round_interval: float = 0.0  # seconds from a round's end to the next round's pairing
    next_round_at: float | None = None  # unix s: the next round's pairing (in an interval)
    fingerprint: str = ""  # what the create asked (`service.core.idempotency.fingerprint`)
    remembered: tuple[tuple[str, str], ...] = ()  # (idempotency entry, fingerprint) done
    created_at: float
    updated_at: float
    version: int = 0

    @property
    def ended(self) -> bool:
        return self.status in ("finished", "stopped")

    def result_of(self, round_number: int, table: int) -> TableResult | None:
        for result in self.results:
            if result.round == round_number and result.table == table:
                return result
        return None
