"""Microbenchmark of domain/game/scoring.py: `python bench/bench_scoring.py`.

Prints microseconds per call (best of the repeats, and the median over a sample of
typical collections) next to the goals. No assertions: a report for people.

Each call scores its collection: the cache of whole results (`_best_runs`, which bots
hit) is emptied before it; the per-colour candidate lists stay cached, as in a game.
"""

from __future__ import annotations

import random
import statistics
import sys
import timeit
from pathlib import Path

TYPICAL_GOAL_US = 100.0
WORST_GOAL_US = 5000.0
REPEAT = 7

COLORS = ("R", "B", "O", "G")
NUMBER_CODES = [f"{c}{n}" for c in COLORS for n in range(1, 10)]
ALL_WILDS = [f"{c}#" for c in COLORS for _ in range(2)] + [f"W{n}" for n in range(1, 10)] + ["W#"]

# A typical collection late in a game: 15 number cards and 2 wild cards.
TYPICAL = [
    *("R1", "R2", "R3", "R5", "R5", "B4", "B5", "B6", "B8"),
    *("O1", "O2", "O7", "G3", "G5", "G6", "W4", "B#"),
]

# The worst case found by hill climbing over deck-legal collections (at most 3 copies of
# 1-6 and 1 of 7-9 per colour): all 18 wild cards and 30 number cards. Few number cards
# in each colour leave many candidate runs, and the colours compete for W1, W2, W6 ...
WORST = [
    *("B1", "B1", "B1", "B5", "B5", "B5", "B9", "G2", "G2", "G2", "G6", "G6", "G6"),
    *("G8", "G9", "O1", "O1", "O1", "O2", "O2", "O6", "O6", "O6", "R1", "R1", "R4"),
    *("R4", "R6", "R6", "R9"),
    *ALL_WILDS,
]

# More copies of number cards than the deck holds (so few distinct number cards, many
# candidate runs per colour): the worst found with no limit on copies; and the wild
# cards alone.
STRESS = ["B1", "B6", "G6", "O1", "R1", "R6"] * 5 + ALL_WILDS
WILDS_ONLY = list(ALL_WILDS)

# More copies of wild cards than the deck holds (a game stored before
# `domain.game.cards.check_copies`): the copies of a `Wn` or `W#` beyond the first are
# ignored, so these are scored as one of each; they show that setting the extra copies
# aside costs nothing.
NUMBER_WILDS = [f"W{n}" for n in range(1, 10)]
MANY_COPIES = ["W#"] * 10 + NUMBER_WILDS * 9
MANY_W5 = ["W#"] * 10 + ["W5"] * 9
# The slowest found by hill climbing over multisets (up to 10 copies of each code) for
# the former multi-copy search: few number cards, 1 to 4 copies of most Wn.
HARD_COPIES = [
    *("R2", "R6", "B4", "B6", "O1", "O9", "G6", "G8"),
    *("W1", "W2", "W2", "W3", "W3", "W4", "W4", "W4", "W4", "W5", "W5", "W6"),
    *("W7", "W7", "W7", "W9", "W#", "W#"),
]
# Deck-legal and slower than WORST (found by a later hill climb): 8 number cards, W2-W9
# and W#, no colour wilds to take the gaps.
LEGAL_HARD = [
    *("R5", "B3", "B8", "O3", "O5", "O8", "G5", "G8"),
    *(f"W{n}" for n in range(2, 10)),
    "W#",
]
# Deck-legal, found by hill climbing against the one solver: W1-W8, W# and 10 number
# cards, the colours competing for the same numbered wildcards.
LEGAL_CLIMBED = [
    *("B1", "B3", "G3", "G5", "G5", "O1", "O5", "O7", "R5", "R7"),
    *(f"W{n}" for n in range(1, 9)),
    "W#",
]


def per_call_us(func, cards: list[str], number: int) -> float:
    times = timeit.repeat(lambda: func(cards), number=number, repeat=REPEAT)
    return min(times) / number * 1e6


def number_for(func, cards: list[str]) -> int:
    """Calls per timing run: enough for about 0.05 s."""
    one = min(timeit.repeat(lambda: func(cards), number=1, repeat=3))
    return max(1, int(0.05 / max(one, 1e-7)))


def uncached(func, clear):
    """func with the cache of whole results emptied before each call (module docstring)."""

    def call(cards: list[str]) -> object:
        clear()
        return func(cards)

    call.__name__ = func.__name__
    return call


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from domain.game.scoring import _best_runs, best_total, score_collection

    best_total = uncached(best_total, _best_runs.cache_clear)
    score_collection = uncached(score_collection, _best_runs.cache_clear)

    assert len(WORST) == 48
    assert len(STRESS) == 48
    assert len(HARD_COPIES) == 26
    assert len(LEGAL_HARD) == 17
    assert len(LEGAL_CLIMBED) == 19
    rng = random.Random(2024)
    sample = [rng.choices(NUMBER_CODES, k=15) + rng.sample(ALL_WILDS, 2) for _ in range(200)]

    print(f"CPython {sys.version.split()[0]}; microseconds per call, best of {REPEAT}")
    print(f"{'case':<44} {'score_collection':>17} {'best_total':>11} {'goal':>7}")
    rows = [
        ("typical: 15 number cards + 2 wilds", TYPICAL, TYPICAL_GOAL_US),
        ("worst: 18 wilds + 30 number cards (legal)", WORST, WORST_GOAL_US),
        ("stress: 18 wilds + 30 cards, 6 distinct", STRESS, WORST_GOAL_US),
        ("stress: 18 wilds, no number cards", WILDS_ONLY, WORST_GOAL_US),
        ("copies: 10 W# + 9 of each Wn (1 counts)", MANY_COPIES, WORST_GOAL_US),
        ("copies: 10 W# + 9 W5 (1 counts)", MANY_W5, WORST_GOAL_US),
        ("legal: 8 number cards + W2-W9 + W#", LEGAL_HARD, WORST_GOAL_US),
        ("legal: 10 number cards + W1-W8 + W#", LEGAL_CLIMBED, WORST_GOAL_US),
        ("copies: formerly hardest (26 cards)", HARD_COPIES, WORST_GOAL_US),
    ]
    for label, cards, goal in rows:
        full = per_call_us(score_collection, cards, number_for(score_collection, cards))
        fast = per_call_us(best_total, cards, number_for(best_total, cards))
        print(f"{label:<44} {full:>17.1f} {fast:>11.1f} {goal:>7.0f}")

    for func in (score_collection, best_total):
        times = [per_call_us(func, cards, 50) for cards in sample]
        times.sort()
        print(
            f"{func.__name__} on 200 random typical collections: "
            f"median {statistics.median(times):.1f}, 90th percentile "
            f"{times[int(len(times) * 0.9)]:.1f}, max {times[-1]:.1f} "
            f"(goal {TYPICAL_GOAL_US:.0f})"
        )


if __name__ == "__main__":
    main()
