"""What a tournament's use cases take and give besides the record itself: the create
command, the pages and read models, the ids and seeds of its tables' games, its standings
and the webhooks of its changes, and the limits a create is held to."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

import msgspec

from domain.game.model import BankClock, BotLevel, TimeControl
from domain.tournaments.rules import (
    DealMode,
    Format,
    RankedBy,
    Round,
    Standing,
    StandingsBy,
    Table,
    TableResult,
    standings,
)
from service.core import idempotency
from service.core.callers import PLATFORM, Caller
from service.core.model import TournamentRecord
from service.reactions.webhook_delivery import Message
from service.reactions.webhook_payloads import (
    RoundStartedData,
    RoundStartedWebhook,
    RoundTableOut,
    StandingOut,
    TournamentEntrantOut,
    TournamentFinishedData,
    TournamentFinishedWebhook,
    TournamentStartedData,
    TournamentStartedWebhook,
)
from service.reactions.webhooks import message

QUEUE = "tournaments"  # the director's leased queue (service.jobs.worker)
MAX_PLACES = 64
MAX_ROUNDS = 20
REMEMBERED = 100  # idempotency entries a tournament keeps (the latest)
GRACE = 5.0  # seconds a decision's job waits for the process that saved it (`_directed`)
# seconds a director's step holds its job: a replica dying mid-step (after a round was paired
# and announced, before its games were dealt: nothing else queues the job again) delays the
# tournament this long; a step outlasting it is run again by another replica meanwhile,
# which is safe (every step is) and deals nothing twice
LEASE = 15.0
# seconds a luck-adjusted tournament's director waits before it reads again the reviews still
# computed (about one review's time: service.history.reviews)
REVIEW_WAIT = 2.0
BOT_PREFIX = "bot:"  # a bot entrant's id: bot:1, bot:2 ... (player ids cannot hold ':')
MAX_AHEAD = 30 * 86400.0  # seconds: how far ahead a tournament's `starts_at` may be
MAX_ROUND_INTERVAL = 3600.0  # seconds: the longest `round_interval`
RETRY_OPEN = (
    60  # Retry-After of a create past the organiser's quota (a tournament's end is not foreseen)
)
KEEP_OPEN = 90 * 86400  # seconds an organiser's quota outlives its last create
# the clock of a tournament created without one: a no-show's seat is played by a bot after
# 2 minutes and 2 more decisions of 5 s (3 timeouts), and a game of about 75 decisions a
# seat leaves each player 2 minutes plus 5 s a decision
DEFAULT_CLOCK = BankClock(initial_seconds=120, increment_seconds=5, takeover_after=3)

Announce = Callable[[Sequence[Message]], Awaitable[None]]


class CreateTournament(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    name: str
    table_size: int = 4
    format: Format = "swiss"
    deal_mode: DealMode = "duplicate"
    rounds: int = 3
    clock: TimeControl | None = None  # None: DEFAULT_CLOCK
    bot_level: BotLevel = "basic"
    ranked: bool = True
    places: int = 8
    invited: tuple[str, ...] | None = None
    starts_at: float | None = None  # unix s, in the future: it starts itself then
    round_interval: float = 0.0  # seconds from a round's end to the next round's pairing
    standings_by: StandingsBy = "results"  # domain.tournaments.rules (luck-adjusted standings)
    ranked_by: RankedBy = "points"  # the standings' first key (domain.tournaments.rules)
    idempotency_key: str | None = None

    def fingerprint_fields(self) -> tuple:
        fields = (
            self.name, self.table_size, self.format, self.deal_mode, self.rounds,
            tournament_clock(self.clock), self.bot_level, self.ranked, self.places,
            self.invited, self.starts_at, self.round_interval,
        )  # fmt: skip
        # the defaults add nothing: a keyed create made before a setting keeps its fingerprint
        if self.standings_by != "results":
            fields = (*fields, self.standings_by)
        return fields if self.ranked_by == "points" else (*fields, "ranked_by", self.ranked_by)


def tournament_clock(clock: TimeControl | None) -> TimeControl:
    """The clock of a tournament's games: the one asked for, else DEFAULT_CLOCK (a tournament
    always plays with a clock: a no-show is played by a bot after its timeouts)."""
    return DEFAULT_CLOCK if clock is None else clock


class TournamentPage(msgspec.Struct, frozen=True, kw_only=True):
    tournaments: list[TournamentRecord]
    next_cursor: str | None


class NextTable(msgspec.Struct, frozen=True, kw_only=True):
    """Where a player plays now: the current round's table, its game and seat; all None
    when the player sits out this round (a bye), or the tournament is not running."""

    round: int | None = None
    table: int | None = None
    game_id: str | None = None
    seat: int | None = None
    bye: bool = False


def game_id(tournament_id: str, round_number: int, table: int) -> str:
    """The id of a table's game: the lobby's id of a create by the platform keyed so."""
    return idempotency.created_game_id(PLATFORM.scope, game_key(tournament_id, round_number, table))


def game_key(tournament_id: str, round_number: int, table: int) -> str:
    return f"tournament/{tournament_id}/{round_number}/{table}"


def game_seed(table: Table) -> str:
    """The seed a table's game is dealt from: a digest of its deal (see the docstring)."""
    return hashlib.sha256(f"ten-tournament-deal|{table.deal}".encode()).hexdigest()[:32]


def void_result(round_number: int, table: Table) -> TableResult:
    """A table whose game ended without results: every seat tied, game score 0."""
    n = len(table.seats)
    return TableResult(
        round=round_number, table=table.number, deal=table.deal, seats=table.seats,
        ranks=(1,) * n, scores=(0,) * n,
    )  # fmt: skip


def current_standings(record: TournamentRecord) -> list[Standing]:
    return standings(record.settings, record.entrants, record.rounds, record.results)


def standings_out(record: TournamentRecord) -> tuple[StandingOut, ...]:
    """The standings; luck-adjusted ones with each entrant's points and matchpoints by the
    results too (the same standings by results: `result_points`, `result_matchpoints`)."""
    by_results: dict[str, Standing] = {}
    if record.settings.standings_by != "results":
        plain = msgspec.structs.replace(record.settings, standings_by="results")
        found = standings(plain, record.entrants, record.rounds, record.results)
        by_results = {s.entrant: s for s in found}
    rows = []
    for s in current_standings(record):
        plain_row = by_results.get(s.entrant)
        rows.append(
            StandingOut(
                position=s.position, entrant=s.entrant, points=s.points,
                matchpoints=s.matchpoints, margin=s.margin, buchholz=s.buchholz, score=s.score,
                result_points=None if plain_row is None else plain_row.points,
                result_matchpoints=None if plain_row is None else plain_row.matchpoints,
                result_margin=None if plain_row is None else plain_row.margin,
                strength=s.strength,
                result_strength=None if plain_row is None else plain_row.strength,
            )
        )  # fmt: skip
    return tuple(rows)


def round_tables(record: TournamentRecord, played: Round) -> tuple[RoundTableOut, ...]:
    """A round's tables as told (never their deals: the seeds come from them)."""
    return tuple(
        RoundTableOut(
            table=t.number, game_id=game_id(record.id, played.number, t.number), seats=t.seats
        )
        for t in played.tables
    )


def tournament_messages(record: TournamentRecord, kinds: Sequence[str]) -> list[Message]:
    """The webhooks of `kinds` ("started", "round:<n>", "finished"), each with an id fixed
    by its fact: `msg_t_<id>_started`, `msg_t_<id>_round_<n>`, `msg_t_<id>_finished`."""
    at = datetime.fromtimestamp(record.updated_at, UTC)
    settings, found = record.settings, []
    for kind in kinds:
        if kind == "started":
            entrants = tuple(TournamentEntrantOut(entrant=e.id, bot=e.bot) for e in record.entrants)
            data = TournamentStartedData(
                tournament_id=record.id, name=record.name, format=settings.format,
                deal_mode=settings.deal_mode, table_size=settings.table_size,
                rounds=settings.rounds, entrants=entrants,
            )  # fmt: skip
            found.append(
                message(
                    f"msg_t_{record.id}_started", TournamentStartedWebhook(timestamp=at, data=data)
                )
            )
        elif kind.startswith("round:"):
            played = record.rounds[int(kind.partition(":")[2]) - 1]
            told = RoundStartedData(
                tournament_id=record.id, round=played.number,
                tables=round_tables(record, played), byes=played.byes,
            )  # fmt: skip
            payload = RoundStartedWebhook(timestamp=at, data=told)
            found.append(message(f"msg_t_{record.id}_round_{played.number}", payload))
        elif kind == "finished":
            end = TournamentFinishedData(
                tournament_id=record.id, status="stopped" if record.status == "stopped" else "finished",
                rounds_played=len(record.rounds), standings=standings_out(record),
            )  # fmt: skip
            payload = TournamentFinishedWebhook(timestamp=at, data=end)
            found.append(message(f"msg_t_{record.id}_finished", payload))
    return found
