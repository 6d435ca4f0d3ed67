"""Grades against known strength: `python bench/bench_grades.py [--games N]`.

Plays seeded four-player games of one bot of each level (random, basic, expert, master; seats
rotated game by game), reviews each (`domain.bots.review.review`) and prints, per level, in
the same run:
- today's accuracy (`seat_accuracy`: over the non-obvious decisions, from their mean loss)
  and the earlier one (the mean of every graded decision's `move_accuracy`), each with its
  95% interval over the games;
- the share of games in which basic grades above random, by each;
- the performance figure (`performance_rating`): its mean per level, and its error against
  the level's rating (root mean square over single games, and of the mean);
- the levels' ratings on a ladder of the same games (each level one player of
  `service.history.ratings`'s model, rated by the games' ranks): the bots' known strength;
  with `--calibrate` also the (accuracy, rating) points that `PERFORMANCE_POINTS` holds.
No assertions: a report (bench/README.md).
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict

from bench_review import (
    interval,  # the sibling module: `python bench/bench_grades.py` puts bench/ first
)

from domain.bots.review import performance_rating, review
from domain.bots.simulation import play_game
from service.history.ratings import RatedSeat, replay

LEVELS = ["random", "basic", "expert", "master"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--seed", default="bench-grades")
    parser.add_argument("--calibrate", action="store_true")
    args = parser.parse_args()
    new: dict[str, list[float]] = defaultdict(list)
    old: dict[str, list[float]] = defaultdict(list)
    performance: dict[str, list[float]] = defaultdict(list)
    above = {"new": [], "old": []}
    tables = []
    for g in range(args.games):
        k = g % len(LEVELS)
        bots = LEVELS[k:] + LEVELS[:k]
        game = play_game(bots, f"{args.seed}/{g}")
        assert game.state.results is not None
        tables.append([RatedSeat(player_id=bots[r.seat], rank=r.rank) for r in game.state.results])
        reviewed = review(game.events)
        shown: dict[str, dict[str, float]] = {"new": {}, "old": {}}
        for seat in reviewed.seats:
            level = bots[seat.seat]
            mine = [d.accuracy for d in reviewed.decisions if d.seat == seat.seat]
            if seat.accuracy is not None:
                new[level].append(seat.accuracy)
                shown["new"][level] = seat.accuracy
                performance[level].append(performance_rating(seat.accuracy))
            if mine:
                old[level].append(statistics.fmean(mine))
                shown["old"][level] = statistics.fmean(mine)
        for how, by in shown.items():
            if "basic" in by and "random" in by:
                above[how].append(by["basic"] > by["random"])
    ratings, _ = replay(tables)
    report(args.games, new, old, above, performance, {lv: ratings[lv].mu for lv in LEVELS})
    if args.calibrate:
        points = pooled(sorted((statistics.fmean(new[lv]), ratings[lv].mu) for lv in LEVELS))
        print("  PERFORMANCE_POINTS:", ", ".join(f"({a:.1f}, {r:.1f})" for a, r in points))


def pooled(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The (accuracy, rating) points by accuracy with neighbours whose ratings fall out of
    order pooled into their mean (pool-adjacent-violators), so the map rises."""
    blocks: list[list[tuple[float, float]]] = []
    for point in points:
        blocks.append([point])
        while len(blocks) > 1 and _mean(blocks[-2])[1] > _mean(blocks[-1])[1]:
            last = blocks.pop()
            blocks[-1].extend(last)
    return [_mean(b) for b in blocks]


def _mean(block: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.fmean(a for a, _ in block), statistics.fmean(r for _, r in block)


def report(
    games: int,
    new: dict[str, list[float]],
    old: dict[str, list[float]],
    above: dict[str, list[bool]],
    performance: dict[str, list[float]],
    rating: dict[str, float],
) -> None:
    print(f"{games} four-player games of {','.join(LEVELS)} (seats rotated)")
    print(
        f"  {'level':<8} {'accuracy (95%)':>18} {'earlier (95%)':>18} {'rating':>7}"
        f" {'performance (95%)':>18} {'rms error':>9}"
    )
    for level in LEVELS:
        errors = [p - rating[level] for p in performance[level]]
        rms = math.sqrt(statistics.fmean(e * e for e in errors))
        print(
            f"  {level:<8} {interval(new[level]):>18} {interval(old[level]):>18}"
            f" {rating[level]:7.2f} {interval(performance[level]):>18} {rms:9.2f}"
        )
    for how, name in (("new", "accuracy"), ("old", "earlier accuracy")):
        print(
            f"  basic above random in single games, by {name}: {statistics.fmean(above[how]):.3f}"
        )


if __name__ == "__main__":
    main()
