"""Luck-adjusted results against the results: `python bench/bench_luck.py [--games N] [--jobs J]`.

Plays seeded games (seeds `bench-luck/{table}/{i}`, none of them a game the weights were
fitted on) for each table: four players of one level (basic, expert, master), two and three
experts, and four players of the four levels (seats rotated game by game). Reviews each
(`domain.bots.review.review`) and prints, per table, in the same run:

- the mean of the luck-adjusted margin less the margin (the luck taken out, with the sign
  changed) of one seat (seat 0) and of the seat that started, with its 95% interval over the
  games: a control variate's expectation is 0, so each interval should hold 0; for the
  table of four levels, per level;
- the variance of the seats' margins (about their level's mean), of their luck-adjusted margins and the ratio (the
  share of the results' spread left once the luck is out), and the same for the luck the
  review counted before its weights were fitted (the drawer's better stop after the card,
  unsettled, valued by `winning.margins`: `train_luck._before_weights`).
No assertions: a report (bench/README.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from bench_review import interval  # the sibling module: bench/ is first on the path
from train_luck import _before_weights

from domain.bots.odds import chance_outcomes
from domain.bots.review import review
from domain.bots.simulation import play_game
from domain.game.engine import evolve
from domain.game.model import CardDrawn, GameStarted, GameState

LEVELS = ["random", "basic", "expert", "master"]
TABLES = {
    "4 basic": ["basic"] * 4,
    "4 expert": ["expert"] * 4,
    "4 master": ["master"] * 4,
    "2 expert": ["expert"] * 2,
    "3 expert": ["expert"] * 3,
    "4 levels": LEVELS,
}

# one seat: its level, whether it started, its margin, the luck taken out, the luck before
Seat = tuple[str, bool, float, float, float]


def before_luck(events: list) -> list[float]:
    """Each seat's sum of the luck counted before the weights."""
    state: GameState | None = None
    total: list[float] = []
    for event in events:
        if state is not None and type(event) is CardDrawn:
            outcomes = chance_outcomes(state)
            if event.card in dict(outcomes):
                values = {c: _before_weights(state, event.seat, c) for c, _ in outcomes}
                for s in range(len(total)):
                    expected = sum(float(p) * values[c][s] for c, p in outcomes)
                    total[s] += values[event.card][s] - expected
        state = evolve(state, event)
        if not total:
            total = [0.0] * len(state.players)
    return total


def one_game(args: tuple[str, int]) -> list[Seat]:
    name, i = args
    bots = TABLES[name]
    if name == "4 levels":
        k = i % len(bots)
        bots = bots[k:] + bots[:k]
    game = play_game(bots, f"bench-luck/{name}/{i}")
    reviewed = review(game.events)
    start = next(e for e in game.events if type(e) is GameStarted).starting_seat
    old = before_luck(game.events)
    return [
        (bots[s.seat], s.seat == start, s.margin, s.adjusted_margin - s.margin, old[s.seat])
        for s in reviewed.seats
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=150)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tables", default=",".join(TABLES))
    args = parser.parse_args()
    with ProcessPoolExecutor(args.jobs) as pool:
        for name in args.tables.split(","):
            t0 = time.perf_counter()
            games = list(pool.map(one_game, [(name, i) for i in range(args.games)]))
            report(name, games, time.perf_counter() - t0)


def report(name: str, games: list[list[Seat]], seconds: float) -> None:
    seats = [s for g in games for s in g]
    print(f"{name}: {len(games)} games, {len(seats)} seats ({seconds:.0f} s)")
    print(f"  adjusted - raw, seat 0:            {interval([g[0][3] for g in games])}")
    print(f"  adjusted - raw, the starting seat: {interval([s[3] for s in seats if s[1]])}")
    if name == "4 levels":
        for level in LEVELS:
            print(
                f"  adjusted - raw, {level:<8}          {interval([s[3] for s in seats if s[0] == level])}"
            )
    # about each level's mean margin: the spread of equal players' results
    mean = {lv: statistics.fmean(s[2] for s in seats if s[0] == lv) for lv in {s[0] for s in seats}}
    raw = statistics.pvariance([s[2] - mean[s[0]] for s in seats])
    now = statistics.pvariance([s[2] - mean[s[0]] + s[3] for s in seats])
    old = statistics.pvariance([s[2] - mean[s[0]] - s[4] for s in seats])
    print(
        f"  variance: margin {raw:.2f}; luck-adjusted {now:.2f} (ratio {now / raw:.3f});"
        f" with the luck counted before {old:.2f} (ratio {old / raw:.3f})",
        flush=True,
    )


if __name__ == "__main__":
    main()
