"""The tournament's records: its settings, entrants, rounds and tables, results and standings
(the rules that make and read them: `domain.tournaments.rules`)."""

from __future__ import annotations

from typing import Literal

import msgspec

Format = Literal["swiss", "round_robin"]
DealMode = Literal["duplicate", "fresh"]
StandingsBy = Literal["results", "luck_adjusted"]
RankedBy = Literal["points", "margin", "strength"]


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    format: Format = "swiss"
    deal_mode: DealMode = "duplicate"
    table_size: int = 4  # 2 to 5
    rounds: int = 5
    seed: str = "tournament"
    # duplicate mode: the standings' first key, matchpoints second ("matchpoints": the
    # reverse, as duplicate tournaments were ranked before points came first; they keep it)
    duplicate_primary: Literal["matchpoints", "points"] = "points"
    # what a table counts for in the standings: its results, or its luck-adjusted results
    # (`TableResult.adjusted`: the ranks and scores of the game's review)
    standings_by: StandingsBy = "results"
    # the standings' first key: place points (in duplicate mode, as `duplicate_primary`
    # says), or the margin, the sum of each game's score less the mean of its table's
    # other scores (counted as `standings_by` says); the other keys then break ties
    ranked_by: RankedBy = "points"

    def __post_init__(self) -> None:
        if not 2 <= self.table_size <= 5:
            raise ValueError("table_size must be between 2 and 5")


class Entrant(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    bot: str | None = None  # a bot level, or None for a human


class Table(msgspec.Struct, frozen=True, kw_only=True):
    number: int  # 0, 1, ... within the round
    seats: tuple[str, ...]  # entrant ids in seat order
    deal: str  # the game's seed


class Round(msgspec.Struct, frozen=True, kw_only=True):
    number: int  # 1, 2, ...
    tables: tuple[Table, ...]
    byes: tuple[str, ...] = ()


class Adjusted(msgspec.Struct, frozen=True, kw_only=True):
    """A table's luck-adjusted result (`domain.bots.review.luck_adjusted`), per seat."""

    ranks: tuple[int, ...]  # 1 = first; tied seats share a rank
    scores: tuple[float, ...]


class TableResult(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    table: int
    deal: str
    seats: tuple[str, ...]  # entrant ids in seat order
    ranks: tuple[int, ...]  # per seat, 1 = first; tied seats share a rank
    scores: tuple[int, ...]  # per seat, the game score
    # standings_by "luck_adjusted": the game's review's luck-adjusted ranks and scores, once
    # read (None before, and for a table counted by its results: `unadjusted`)
    adjusted: Adjusted | None = None
    # standings_by "luck_adjusted": no review can adjust this table (it failed, or the game
    # ended without results): the standings count its results
    unadjusted: bool = False


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    entrant: str
    points: float
    matchpoints: float
    margin: float  # the sum of the game margins counted (`domain.tournaments.standings.margins`)
    # ranked by strength: the margin per game with the opponents' strengths taken out
    # (`domain.tournaments.standings.strengths`); None otherwise
    strength: float | None = None
    buchholz: float
    score: int
    position: int  # 1, 2, ... (no ties: the last tie-break is the seeding)
