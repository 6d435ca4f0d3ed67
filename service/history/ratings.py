"""Player ratings: one rule, here only. Weng-Lin Bayesian ratings (the `openskill` package)
of the players of ranked games, updated once per rated game in the order the archive
rated them.

The model is openskill's `BradleyTerryFull` (every pair of seats compared, logistic), its
parameters pinned here so that a new default of the package cannot change the numbers.
Not `PlackettLuce`: in openskill 6.2.0 it rewards a worse placing when there are ties (at
[1, 1, 2, 3] from equal priors the third gains as much as the three tied winners; at
[1, 1, 1, 2, 3] the second gains more than the winners), which tests/unit/service/history/test_ratings.py
shows; with `BradleyTerryFull` a better placing never gains less and tied seats from
equal ratings move alike.

Who is rated (`rated_table`): in a ranked game, the seats whose result counts for their
player (`service.core.ranking`: a seat a bot took over does not, a resigned one does, ranked
last), played by a human with a player id; bots never. A game is rated when two or more
such seats remain; they are placed by their results' ranks (equal ranks: a tie).

A player's `ordinal` (mu - 3 sigma, openskill's conservative estimate) orders the
leaderboard by rating; a player never rated has the prior (mu 25, sigma 25/3).

`python -m service.cli ratings rebuild [--url URL]` recomputes every rating from the archive
(`service.history.archiving.rebuild_ratings`): the same numbers as the ratings updated game by game, to
the last bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec
from openskill.models import BradleyTerryFull, BradleyTerryFullRating

MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = MU / 300  # uncertainty added before each game, so ratings keep moving
KAPPA = 0.0001
Z = 3.0  # the ordinal: mu - Z * sigma
MIN_SEATS = 2  # rated seats a game needs to be rated
MAX_TABLE = 5  # seats of a proposed table (`predict`)
MODEL = BradleyTerryFull(mu=MU, sigma=SIGMA, beta=BETA, kappa=KAPPA, tau=TAU)


class Rating(msgspec.Struct, frozen=True, kw_only=True):
    """A player's rating: `mu` the estimated skill, `sigma` its uncertainty, `ordinal` the
    conservative estimate the leaderboard orders by, `games` the rated games so far."""

    mu: float
    sigma: float
    ordinal: float
    games: int


PRIOR = Rating(mu=MU, sigma=SIGMA, ordinal=MU - Z * SIGMA, games=0)


class RatedSeat(msgspec.Struct, frozen=True, kw_only=True):
    """A seat of a rated game: its player and its place (1 = first; equal: a tie)."""

    player_id: str
    rank: int


class SeatOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one game did to one player's rating."""

    player_id: str
    rank: int
    before: Rating
    after: Rating


class SeatFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What the archive knows of a seat of an ended game."""

    player_id: str | None
    bot: str | None
    counts: bool  # the game is ranked and the seat's result counts (`service.core.ranking`)
    rank: int | None  # None without a result (an aborted or abandoned game)


def rated_table(seats: Iterable[SeatFacts]) -> list[RatedSeat]:
    """The seats of a game that are rated, in the order given; empty when the game is not
    rated (fewer than two such seats)."""
    table = [
        RatedSeat(player_id=s.player_id, rank=s.rank)
        for s in seats
        if s.counts and s.bot is None and s.player_id is not None and s.rank is not None
    ]
    return table if len(table) >= MIN_SEATS else []


def rating(mu: float, sigma: float, games: int) -> Rating:
    return Rating(mu=mu, sigma=sigma, ordinal=_model_rating(mu, sigma).ordinal(z=Z), games=games)


def _model_rating(mu: float, sigma: float) -> BradleyTerryFullRating:
    return MODEL.rating(mu=mu, sigma=sigma)


def rate(before: Mapping[str, Rating], table: Sequence[RatedSeat]) -> list[SeatOutcome]:
    """One game's update: each seat of `table` from its player's rating in `before` (the
    prior when absent) to the new one, in the table's order."""
    if len(table) < MIN_SEATS or len({s.player_id for s in table}) != len(table):
        raise ValueError("a rated game has two or more seats of distinct players")
    prior = [before.get(s.player_id, PRIOR) for s in table]
    teams = [[_model_rating(r.mu, r.sigma)] for r in prior]
    updated = MODEL.rate(teams, ranks=[float(s.rank) for s in table])
    return [
        SeatOutcome(
            player_id=s.player_id,
            rank=s.rank,
            before=old,
            after=rating(team[0].mu, team[0].sigma, old.games + 1),
        )
        for s, old, team in zip(table, prior, updated, strict=True)
    ]


def replay(
    tables: Iterable[Sequence[RatedSeat]],
) -> tuple[dict[str, Rating], list[list[SeatOutcome]]]:
    """Every rating after the games `tables`, rated one after the other from the prior; and
    each game's outcomes. What the rebuild computes."""
    ratings: dict[str, Rating] = {}
    outcomes = []
    for table in tables:
        done = rate(ratings, table)
        ratings.update((o.player_id, o.after) for o in done)
        outcomes.append(done)
    return ratings, outcomes


class Prediction(msgspec.Struct, frozen=True, kw_only=True):
    win: list[float]  # each seat's chance to win, in the table's order (they sum to 1)
    draw: float  # the model's chance that the table ends in a draw


def predict(table: Sequence[Rating]) -> Prediction:
    """Each seat's chance to win a proposed table of 2 to 5 players (openskill's
    `predict_win`), and of a draw (`predict_draw`)."""
    if not MIN_SEATS <= len(table) <= MAX_TABLE:
        raise ValueError(f"a table has {MIN_SEATS} to {MAX_TABLE} players")
    teams = [[_model_rating(r.mu, r.sigma)] for r in table]
    return Prediction(win=list(MODEL.predict_win(teams)), draw=MODEL.predict_draw(teams))
