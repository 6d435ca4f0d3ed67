"""Tournaments of several rounds: pairing, seats, deals, scoring, standings.

Pure and deterministic: every choice left to chance comes from `SeededRandom` on the
tournament's seed, so the same settings, entrants and results give the same rounds. This
module makes a round (`next_round`), its seats and its deals; the records are
`domain.tournaments.model`'s, Swiss pairing `swiss`'s, the round robin schedule
`round_robin`'s, scoring and standings `standings`'s (all importable from here too).

Rules stated:

- Formats. `swiss`: each round, tables are formed from the standings (`swiss_tables`: the
  fewest repeated meetings, then the tables closest in the standings);
  `round_robin`: tables come from a fixed schedule (`round_robin_groups`), the standings
  aside.
- Byes. When the entrants do not fill whole tables, `len(entrants) % table_size` sit out:
  the lowest in the standings who have had the fewest byes (`bye_entrants`); a bye scores
  the points of a median place (`BYE_POINTS`: the mean of a table's place points) and, in
  duplicate mode, half a matchpoint; it adds no game score and no opponents.
- Deals. `duplicate`: every table of a round plays one deal, the seed
  `{seed}/round/{r}` (the engine's pile and starting seat depend only on the seed and the
  player count); `fresh`: each table its own seed `{seed}/round/{r}/table/{t}`.
- Seats. Each table's seats are assigned so each entrant holds each seat as evenly as the
  rounds allow (`assign_seats`).
- Points per game: place p of N scores N - p (4 players: 3/2/1/0); tied places share the
  mean of the points of the places they span (`place_points`).
- Matchpoints (duplicate): per deal and seat, an entrant's game score against every other
  entrant who held that seat of that deal: 1 per score beaten, 0.5 per tie, divided by the
  number compared (so 0..1 per deal; 0.5 with no one to compare) (`matchpoints`).
- Standings (`standings`): first the primary score, points (in duplicate mode,
  matchpoints when `duplicate_primary` says so: duplicate tournaments created while
  matchpoints came first keep them first), then the other of the two, then Buchholz (the
  sum of the primary scores of every opponent met, once per meeting), then the total game
  score, then the seeding (the entrants' order as given). Points come first in duplicate
  mode too because they rank the players better (why: docs/design-notes.md).
- Margins (`margins`): a seat's game score less the mean of the other seats' scores at its
  table (they sum to 0 at a table; a bye's is 0). Ranked by margin (`ranked_by`
  "margin"), the standings' first key is the sum of an entrant's margins; the keys above
  follow it, Buchholz then summing the opponents' margins. A game's margin keeps what
  place points round away: by how much a seat won or lost.
- Luck-adjusted standings (`standings_by` "luck_adjusted"): a table counts by its game's
  review's luck-adjusted ranks (place points) and scores (matchpoints, margins) instead of its
  results (`counted`); the tie-breaks, byes and pairing as above, and the total game score
  is the one played. A table no review adjusts (`TableResult.unadjusted`) counts by its
  results; a round is paired, or the tournament ends, once every table of the round is
  `settled` (its luck-adjusted result known, or none to come).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence

from domain.game.rng import SeededRandom
from domain.tournaments.model import (
    Adjusted,
    DealMode,
    Entrant,
    Format,
    RankedBy,
    Round,
    Settings,
    Standing,
    StandingsBy,
    Table,
    TableResult,
)
from domain.tournaments.round_robin import affine_round, circle_round, round_robin_groups
from domain.tournaments.standings import (
    bye_points,
    counted,
    margins,
    matchpoints,
    meeting_counts,
    place_points,
    seat_counts,
    settled,
    standings,
    strengths,
    table_result,
)
from domain.tournaments.swiss import SEARCH_BUDGET, TABU_TENURE, bye_entrants, swiss_tables

__all__ = [
    "SEARCH_BUDGET",
    "TABU_TENURE",
    "Adjusted",
    "DealMode",
    "Entrant",
    "Format",
    "RankedBy",
    "Round",
    "Settings",
    "Standing",
    "StandingsBy",
    "Table",
    "TableResult",
    "affine_round",
    "assign_seats",
    "bye_entrants",
    "bye_points",
    "circle_round",
    "counted",
    "deal_seed",
    "margins",
    "matchpoints",
    "meeting_counts",
    "next_round",
    "place_points",
    "round_robin_groups",
    "seat_counts",
    "settled",
    "standings",
    "strengths",
    "swiss_tables",
    "table_result",
]


def assign_seats(
    groups: Sequence[Sequence[str]], counts: Mapping[str, Counter[int]], rng: SeededRandom
) -> list[tuple[str, ...]]:
    """Each table's seat order: of all orders, one where the most times an entrant has
    held its seat beyond its least held seat is least, then the sum of those excesses, a
    tie drawn from `rng`. Greedy round by round: a later table can find its entrants short
    of the same seat, so the counts can differ by more than one."""
    seated = []
    for group in groups:
        excess = _seat_excess(counts, group)
        orders = list(itertools.permutations(group))
        cost = [_seat_cost(excess, o) for o in orders]
        least = min(cost)
        best = [o for o, c in zip(orders, cost, strict=True) if c == least]
        seated.append(rng.choice(best))
    return seated


def _seat_excess(counts: Mapping[str, Counter[int]], group: Sequence[str]) -> dict[str, list[int]]:
    """entrant -> per seat of the table, how many more times it has held that seat than
    its least held seat."""
    excess = {}
    for entrant in group:
        mine = counts.get(entrant, Counter())
        held = [mine[seat] for seat in range(len(group))]
        excess[entrant] = [h - min(held) for h in held]
    return excess


def _seat_cost(excess: Mapping[str, Sequence[int]], order: Sequence[str]) -> tuple[int, int]:
    """The excess of each entrant at its seat (`_seat_excess`): the most, then the sum."""
    held = [excess[entrant][seat] for seat, entrant in enumerate(order)]
    return max(held), sum(held)


def deal_seed(settings: Settings, number: int, table: int) -> str:
    """The game's seed: one deal per round in duplicate mode, one per table in fresh."""
    if settings.deal_mode == "duplicate":
        return f"{settings.seed}/round/{number}"
    return f"{settings.seed}/round/{number}/table/{table}"


def next_round(
    settings: Settings,
    entrants: Sequence[Entrant],
    rounds: Sequence[Round],
    results: Sequence[TableResult],
) -> Round:
    """Round len(rounds) + 1 from the rounds played and their results. Swiss: the byes
    (`bye_entrants`) and tables (`swiss_tables`) from the standings; round robin: by the
    schedule (`round_robin_groups`). Then seats (`assign_seats`) and deals (`deal_seed`)."""
    number = len(rounds) + 1
    size = settings.table_size
    ids = [e.id for e in entrants]
    if len(ids) < size:
        raise ValueError("fewer entrants than a table's seats")
    if settings.format == "swiss":
        order = [s.entrant for s in standings(settings, entrants, rounds, results)]
        byes_had = Counter(e for played in rounds for e in played.byes)
        sitting = bye_entrants(order, byes_had, len(ids) % size)
        playing = [e for e in order if e not in sitting]
        groups = swiss_tables(playing, meeting_counts(rounds), size)
    else:
        groups, sitting = round_robin_groups(settings, ids, rounds, number)
    rng = SeededRandom(f"{settings.seed}/round/{number}/seats")
    seated = assign_seats(groups, seat_counts(rounds), rng)
    tables = tuple(
        Table(number=t, seats=seats, deal=deal_seed(settings, number, t))
        for t, seats in enumerate(seated)
    )
    return Round(number=number, tables=tables, byes=tuple(sitting))
