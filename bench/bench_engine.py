"""Engine speed: whole 4-player games per second with random bots, and microseconds per
`apply`. Run: `.venv/bin/python bench/bench_engine.py` (prints figures, asserts nothing).

Goal on the 2-core reference machine: at least 300 games/s in one process.

A game is `domain.bots.simulation.play_game`: setup from the seed (the shuffle included), and
every decision a random bot's (`domain.bots.basic.random_bot`): the public view built, the
seat's legal actions listed from it, one drawn uniformly, its payment chosen as the service would (the optimal scoring runs when
cards are spent), then `apply`; the final scoring and results included.
"""

from __future__ import annotations

import statistics
import time

from domain.bots.basic import random_bot
from domain.bots.simulation import play_game
from domain.game.engine import apply, information_state
from domain.game.legal import legal_actions
from domain.game.rng import SeededRandom
from domain.game.views import public_view

GAMES = 300
BENCH_RNG = SeededRandom("bench")
REPEATS = 3


def games_per_second() -> tuple[float, float]:
    rates, actions = [], 0
    for r in range(REPEATS):
        actions = 0
        start = time.perf_counter()
        for i in range(GAMES):
            actions += play_game(["random"] * 4, f"bench/{r}/{i}").actions
        rates.append(GAMES / (time.perf_counter() - start))
    return statistics.median(rates), actions / GAMES


def per_call_us() -> dict[str, float]:
    recorded = []
    for i in range(40):
        play_game(
            ["random"] * 4,
            f"apply/{i}",
            on_action=lambda before, seat, action, _after: recorded.append((before, seat, action)),
        )
    timings: dict[str, float] = {}
    for name, call in (
        ("apply", apply),
        ("legal_actions", lambda s, seat, a: legal_actions(s, seat)),
        ("public_view", lambda s, seat, a: public_view(s)),
        (
            "random_bot (a bot's move)",
            lambda s, seat, a: random_bot(information_state(s), seat, BENCH_RNG),
        ),
    ):
        runs = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            for state, seat, action in recorded:
                call(state, seat, action)
            runs.append((time.perf_counter() - start) / len(recorded) * 1e6)
        timings[name] = min(runs)
    return timings


def main() -> None:
    rate, actions = games_per_second()
    print(f"4-player games, random bots: {rate:8.1f} games/s  (goal >= 300)")
    print(f"actions per game             {actions:8.0f}")
    for name, us in per_call_us().items():
        print(f"{name:<28} {us:8.2f} us per call")


if __name__ == "__main__":
    main()
