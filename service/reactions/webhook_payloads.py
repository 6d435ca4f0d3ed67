"""The webhooks' bodies, as the platform receives them: `{"type", "timestamp", "data"}`,
one Struct per type (`WEBHOOK_PAYLOADS`, shown in the OpenAPI document's `webhooks`);
`data.game_id` in every game's, `data.tournament_id` in every tournament's."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from domain.game.model import TimeControl
from service.core.ranking import UnrankedReason


class WebhookSeat(msgspec.Struct, frozen=True, kw_only=True):
    """A seat of the game as it started."""

    seat: int
    name: str
    player_id: str | None = None  # the platform's id of the seat's player; None for a bot
    bot: str | None = None  # the bot level of a bot seat


class SeatResult(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's result: rank 1 wins (ties share the rank); a player who resigned ranks
    below every one who did not and never wins."""

    seat: int
    name: str
    player_id: str | None = None
    bot: str | None = None
    rank: int
    score: int
    winner: bool
    resigned: bool = False
    taken_over: bool = False  # a bot took the seat over after timeouts at some point
    ranked: bool = False  # counts for this player's stats and the leaderboard


class GameStartedData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    seats: tuple[WebhookSeat, ...]
    time_control: TimeControl | None = None  # None: no clock


class GameFinishedData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    results: tuple[SeatResult, ...]  # in seat order
    ranked: bool  # the game counts for stats and the leaderboard (each seat: `ranked`)
    unranked_reason: UnrankedReason | None = None  # why not, when it does not


class SeatTakenOverData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    seat: int
    player_id: str | None = None
    bot: str  # the bot level that plays the seat from now on
    reason: Literal["timeouts", "resigned"]


class GameAbortedData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    # aborted: stopped by its host or the platform; abandoned: nobody acted for TEN_IDLE_TTL
    reason: Literal["aborted", "abandoned"]


class TournamentEntrantOut(msgspec.Struct, frozen=True, kw_only=True):
    entrant: str  # the player id, or `bot:<n>` for a bot
    bot: str | None = None  # a bot's level


class TournamentStartedData(msgspec.Struct, frozen=True, kw_only=True):
    tournament_id: str
    name: str
    format: Literal["swiss", "round_robin"]
    deal_mode: Literal["duplicate", "fresh"]
    table_size: int
    rounds: int
    entrants: tuple[TournamentEntrantOut, ...]


class RoundTableOut(msgspec.Struct, frozen=True, kw_only=True):
    table: int
    game_id: str
    seats: tuple[str, ...]  # entrant ids in seat order


class RoundStartedData(msgspec.Struct, frozen=True, kw_only=True):
    tournament_id: str
    round: int
    tables: tuple[RoundTableOut, ...]
    byes: tuple[str, ...] = ()


class StandingOut(msgspec.Struct, frozen=True, kw_only=True):
    """An entrant's place in the standings (`domain.tournaments.rules.standings`)."""

    position: int
    entrant: str
    points: float
    matchpoints: float
    # the sum of the entrant's game margins (score less the mean of the table's other scores)
    margin: float
    buchholz: float
    score: int
    # luck-adjusted standings (`standings_by` "luck_adjusted"): `points`, `matchpoints` and
    # `margin` are the luck-adjusted ones they rank by, these the results' own; null in
    # standings by results
    result_points: float | None = None
    result_matchpoints: float | None = None
    result_margin: float | None = None
    # ranked by strength (`ranked_by` "strength"): the margin per game with the opponents'
    # strengths taken out (`domain.tournaments.rules.strengths`), and in luck-adjusted
    # standings the results' own; null in standings ranked otherwise
    strength: float | None = None
    result_strength: float | None = None


class TournamentFinishedData(msgspec.Struct, frozen=True, kw_only=True):
    tournament_id: str
    status: Literal["finished", "stopped"]  # stopped: by its organiser, before its last round
    rounds_played: int
    standings: tuple[StandingOut, ...]


_WEBHOOK = {"frozen": True, "kw_only": True, "tag_field": "type"}


class GameStartedWebhook(msgspec.Struct, tag="game_started", **_WEBHOOK):
    """A game started (dealt at once, or a table whose seats were taken)."""

    timestamp: datetime  # when it happened (UTC)
    data: GameStartedData


class GameFinishedWebhook(msgspec.Struct, tag="game_finished", **_WEBHOOK):
    """A game played to its end, with its results."""

    timestamp: datetime
    data: GameFinishedData


class SeatTakenOverWebhook(msgspec.Struct, tag="seat_taken_over", **_WEBHOOK):
    """A bot plays a seat from now on: its player timed out too often (they may take the
    seat back) or resigned."""

    timestamp: datetime
    data: SeatTakenOverData


class GameAbortedWebhook(msgspec.Struct, tag="game_aborted", **_WEBHOOK):
    """A game ended without results: aborted by its host or the platform, or abandoned."""

    timestamp: datetime
    data: GameAbortedData


class TournamentStartedWebhook(msgspec.Struct, tag="tournament_started", **_WEBHOOK):
    """A tournament started: its entrants are fixed (`data.tournament_id`)."""

    timestamp: datetime
    data: TournamentStartedData


class RoundStartedWebhook(msgspec.Struct, tag="round_started", **_WEBHOOK):
    """A round of a tournament was paired: its tables and their games."""

    timestamp: datetime
    data: RoundStartedData


class TournamentFinishedWebhook(msgspec.Struct, tag="tournament_finished", **_WEBHOOK):
    """A tournament ended (its last round played, or stopped), with its standings."""

    timestamp: datetime
    data: TournamentFinishedData


class TicketMatchedData(msgspec.Struct, frozen=True, kw_only=True):
    """A matchmaking ticket's table: its game and the ticket holder's seat in it."""

    ticket_id: str
    game_id: str
    seat: int
    player_id: str


class TicketMatchedWebhook(msgspec.Struct, tag="ticket_matched", **_WEBHOOK):
    """A matchmaking ticket was matched: its game is made (one per ticket)."""

    timestamp: datetime
    data: TicketMatchedData


class YourTurnData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    seat: int
    player_id: str | None = None  # the seat's player (None: a seat without a platform id)
    deadline: datetime | None = None  # when the seat's decision is due (UTC)


class YourTurnWebhook(msgspec.Struct, tag="your_turn", **_WEBHOOK):
    """A correspondence game (a deadline clock) waits on a player who is not watching it:
    tell them (the platform's own push channels). One per turn handed to the seat."""

    timestamp: datetime
    data: YourTurnData


WebhookPayload = (
    GameStartedWebhook
    | GameFinishedWebhook
    | SeatTakenOverWebhook
    | GameAbortedWebhook
    | TournamentStartedWebhook
    | RoundStartedWebhook
    | TournamentFinishedWebhook
    | TicketMatchedWebhook
    | YourTurnWebhook
)
# the body of each webhook by its `type` (the OpenAPI document's `webhooks`)
WEBHOOK_PAYLOADS: dict[str, type] = {
    str(kind.__struct_config__.tag): kind
    for kind in (
        GameStartedWebhook, GameFinishedWebhook, SeatTakenOverWebhook, GameAbortedWebhook,
        TournamentStartedWebhook, RoundStartedWebhook, TournamentFinishedWebhook,
        TicketMatchedWebhook,
        YourTurnWebhook,
    )
}  # fmt: skip
