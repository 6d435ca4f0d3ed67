"""The `basic` bot's cost in a served table: domain CPU per human action of 1 human + 3
basic bots, the human acting uniformly at random, as the service's `domain.bots.clock.play`
runs it (the human's action, then the bots' until the human decides again). Run:
`.venv/bin/python bench/bench_basic.py` (prints figures, asserts nothing). To compare with
another checkout's domain: `PYTHONPATH=/path/to/checkout .venv/bin/python bench/bench_basic.py`.

Each round plays fresh seeds (the scoring caches are warm from earlier rounds, not with
the same collections, as in a process serving many games); the median and the best of
the rounds are printed, with the basic bot's share measured apart (its decisions alone,
timed around each call).
"""

from __future__ import annotations

import random
import statistics
import time

import domain
from domain.bots import basic as bots
from domain.bots.clock import play
from domain.bots.simulation import play_bots
from domain.game.engine import new_game, to_act
from domain.game.legal import legal_actions

GAMES = 40
ROUNDS = 5


def one_round(r: int) -> tuple[float, float, int]:
    """(us of domain CPU per human action, us per basic decision, decisions) of a round."""
    inner = bots.BOTS["basic"]
    spent = [0.0, 0]

    def timed(view, seat, rng):  # type: ignore[no-untyped-def]
        start = time.process_time()
        action = inner(view, seat, rng)
        spent[0] += time.process_time() - start
        spent[1] += 1
        return action

    bots.BOTS["basic"] = timed
    try:
        rng = random.Random(r)
        actions = 0
        start = time.process_time()
        for g in range(GAMES):
            seats = [("human", None), ("a", "basic"), ("b", "basic"), ("c", "basic")]
            state, _ = new_game(seats, f"bench-basic/{r}/{g}")
            state, _ = play_bots(state)
            while (seat := to_act(state)) is not None:
                action = rng.choice(legal_actions(state, seat))
                state, _ = play(state, seat, action, 0.0)
                actions += 1
        cpu = time.process_time() - start
    finally:
        bots.BOTS["basic"] = inner
    return cpu / actions * 1e6, spent[0] / spent[1] * 1e6, int(spent[1])


def main() -> None:
    print(f"domain from {domain.__file__}")
    one_round(-1)  # warm up
    rows = [one_round(r) for r in range(ROUNDS)]
    per_action = [row[0] for row in rows]
    per_decision = [row[1] for row in rows]
    print(
        f"rounds {ROUNDS} x {GAMES} games of 1 human + 3 basic, {rows[0][2]} decisions in round 0"
    )
    print(
        f"us per human action   median {statistics.median(per_action):6.1f}"
        f"  best {min(per_action):6.1f}"
    )
    print(
        f"us per basic decision median {statistics.median(per_decision):6.1f}"
        f"  best {min(per_decision):6.1f}"
    )


if __name__ == "__main__":
    main()
