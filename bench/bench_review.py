"""The post-game review against known strength: `python bench/bench_review.py [--games N]`.

Plays seeded four-player games of one bot of each level (`--levels`, default random,
basic, expert, expert: a level twice when fewer than four are given; seats rotated game by
game so that no level keeps the first seat), reviews each (`domain.bots.review.review`) and
prints, per level, the mean accuracy over games (a seat's accuracy in a game is the mean
over its graded decisions) with its 95% interval, the share of its graded decisions the
judge calls best, what it lost per game (percentage points of winning chance, the points
floor included: `domain.bots.review.drop`) and its luck per game (points). The judge is
`master`'s search, so `master`'s decisions are all best by construction. Then the luck of two equal bots heads-up (`--equal`, default expert): each
seat's mean luck per game with its 95% interval (0 expected), and the CPU time of a
four-player game's review (median and largest, `time.process_time`). No assertions: a
report (bench/README.md).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections import defaultdict

from domain.bots.review import review
from domain.bots.simulation import play_game


def interval(values: list[float]) -> str:
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0
    return f"{mean:7.2f} ± {half:5.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--levels", default="random,basic,expert,expert")
    parser.add_argument("--equal", default="expert")
    parser.add_argument("--seed", default="bench-review")
    args = parser.parse_args()
    levels = args.levels.split(",")
    accuracy: dict[str, list[float]] = defaultdict(list)
    lost: dict[str, list[float]] = defaultdict(list)
    best: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    luck: dict[str, list[float]] = defaultdict(list)
    seconds: list[float] = []
    for g in range(args.games):
        k = g % len(levels)
        bots = levels[k:] + levels[:k]
        game = play_game(bots, f"{args.seed}/{g}")
        started = time.process_time()
        reviewed = review(game.events)
        seconds.append(time.process_time() - started)
        for seat in reviewed.seats:
            level = bots[seat.seat]
            if seat.accuracy is not None:
                accuracy[level].append(seat.accuracy)
            lost[level].append(seat.lost)
            best[level][0] += seat.grades["best"]
            best[level][1] += seat.decisions
            luck[level].append(seat.luck)
    print(f"{args.games} four-player games of {','.join(levels)} (seats rotated)")
    print(
        f"  {'level':<8} {'accuracy (95%)':>18} {'best':>6} {'lost/game':>10}"
        f" {'luck/game (95%)':>18}"
    )
    for level in dict.fromkeys(levels):
        share = best[level][0] / max(best[level][1], 1)
        print(
            f"  {level:<8} {interval(accuracy[level]):>18} {share:6.3f}"
            f" {statistics.fmean(lost[level]):10.2f} {interval(luck[level]):>18}"
        )
    seconds.sort()
    print(
        f"  review CPU per game: median {statistics.median(seconds):.3f} s, max {seconds[-1]:.3f} s"
    )
    pair = [args.equal, args.equal]
    equal: dict[int, list[float]] = defaultdict(list)
    for g in range(args.games):
        for seat in review(play_game(pair, f"{args.seed}/equal/{g}").events).seats:
            equal[seat.seat].append(seat.luck)
    print(f"{args.games} heads-up games of {args.equal} against {args.equal}: luck per game")
    for seat, values in equal.items():
        print(f"  seat {seat}: {interval(values)}")


if __name__ == "__main__":
    main()
