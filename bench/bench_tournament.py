"""How many rounds a tournament needs to rank bots of known strength (issue 25):
`python bench/bench_tournament.py [--tournaments T] [--rounds R]`.

16 bot entrants, four of each level (master > expert > basic > random, the known order),
tables of 4, T tournaments per format (swiss, round_robin) and deal mode (duplicate with
the standings by matchpoints first, duplicate by place points first, fresh). Tournament i has the seed `bench/{i}` in every format and mode and seeds its
entrants in a shuffled order (`bench/{i}/entrants`). After each round r = 1..R the
standings are compared with the known order:

- `gamma`: over the pairs of entrants of different levels, (concordant - discordant) /
  (concordant + discordant), a pair concordant when the higher-standing entrant has the
  stronger level. This is Kendall's tau-b between standing and level rank divided by its
  ceiling: with 16 entrants in 4 tied levels and no tied standings, tau-b is at most
  96 / sqrt(96 * 120) = 0.894, so tau-b itself never reaches 0.9.
- `tau_b`: Kendall's tau-b between standing position and level rank (ties in level).
- `levels`: Kendall's tau-b between the four levels ordered by their entrants' mean
  position and the known order (1 when the four levels come out in the right order).

Prints, per format and mode, the mean of each over the tournaments after each round, and
the first round where the mean reaches 0.9. Bots are deterministic on a deal (the random
bot's stream comes from the deal's seed), so games are cached by (deal seed, levels in
seat order): duplicate tables with the same levels in the same seats are one game. No
assertions: a report. The defaults (8 tournaments, 10 rounds) take about 8 minutes of
one core (a game of four bots takes 0.1-0.8 s, the master's the longest).
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.rng import SeededRandom
from domain.simulation import play_game
from domain.tournament import (
    Entrant,
    Round,
    Settings,
    TableResult,
    next_round,
    standings,
    table_result,
)

LEVELS = ("master", "expert", "basic", "random")  # the known order, strongest first
FORMATS = ("swiss", "round_robin")
# deal mode and the standings' first key in duplicate mode
MODES = (("duplicate", "matchpoints"), ("duplicate", "points"), ("fresh", "points"))
GOAL = 0.9
_games: dict[tuple[str, tuple[str, ...]], tuple] = {}


def tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b of two paired lists (ties in either)."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else 0.0


def gamma(level_ranks: list[int]) -> float:
    """Goodman-Kruskal gamma of the standings (best first) against the level ranks."""
    concordant = discordant = 0
    for a, b in itertools.combinations(level_ranks, 2):
        concordant += a < b
        discordant += a > b
    return (concordant - discordant) / (concordant + discordant)


def measures(level_ranks: list[int]) -> tuple[float, float, float]:
    """(gamma, tau_b, levels) of standings given as level ranks, best first."""
    positions = list(range(len(level_ranks)))
    mean_position = [
        statistics.mean(p for p, r in zip(positions, level_ranks, strict=True) if r == level)
        for level in range(len(LEVELS))
    ]
    return (
        gamma(level_ranks),
        tau_b(positions, level_ranks),
        tau_b(mean_position, list(range(len(LEVELS)))),
    )


def play(deal: str, levels: tuple[str, ...]) -> tuple:
    key = (deal, levels)
    if key not in _games:
        _games[key] = play_game(levels, deal).state.results
    return _games[key]


def tournament(settings: Settings, index: int) -> list[tuple[float, float, float]]:
    """The measures after each round of one tournament."""
    pool = [Entrant(id=f"{level}{k}", bot=level) for level in LEVELS for k in range(4)]
    entrants = SeededRandom(f"bench/{index}/entrants").shuffled(pool)
    level_of = {e.id: e.bot for e in entrants}
    rounds: list[Round] = []
    results: list[TableResult] = []
    out = []
    for _ in range(settings.rounds):
        played = next_round(settings, entrants, rounds, results)
        rounds.append(played)
        for table in played.tables:
            levels = tuple(level_of[e] for e in table.seats)
            results.append(table_result(played.number, table, play(table.deal, levels)))
        order = standings(settings, entrants, rounds, results)
        out.append(measures([LEVELS.index(level_of[s.entrant]) for s in order]))
    return out


def report(name: str, per_tournament: list[list[tuple[float, float, float]]]) -> None:
    rounds = len(per_tournament[0])
    means = [
        [statistics.mean(t[r][m] for t in per_tournament) for r in range(rounds)] for m in range(3)
    ]
    print(f"{name}")
    print("  round  " + " ".join(f"{r + 1:>5}" for r in range(rounds)))
    for label, row in zip(("gamma", "tau_b", "levels"), means, strict=True):
        first = next((r + 1 for r, v in enumerate(row) if v >= GOAL), None)
        cells = " ".join(f"{v:5.3f}" for v in row)
        print(f"  {label:<6} {cells}   first round >= {GOAL}: {first or '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    print(
        f"16 entrants (4 each of {', '.join(LEVELS)}), tables of 4, "
        f"{args.tournaments} tournaments x {args.rounds} rounds per format and deal mode"
    )
    for fmt, (mode, primary) in itertools.product(FORMATS, MODES):
        start, games = time.process_time(), len(_games)
        runs = [
            tournament(
                Settings(
                    format=fmt,
                    deal_mode=mode,
                    duplicate_primary=primary,  # type: ignore[arg-type]
                    rounds=args.rounds,
                    seed=f"bench/{i}",
                ),
                i,
            )
            for i in range(args.tournaments)
        ]
        report(f"{fmt} / {mode}, standings by {primary} first", runs)
        print(f"  ({len(_games) - games} games played, {time.process_time() - start:.0f} s cpu)")


if __name__ == "__main__":
    main()
