"""Instructions per human action of 1 human (uniformly random) + 3 basic bots, as the
service plays them (`domain.bots.clock.play`, then the bots' moves). Run under callgrind twice,
`warm` (the warm-up games only) and `both` (warm-up and measured games):
`PYTHONHASHSEED=0 valgrind --tool=callgrind .venv/bin/python bench/callgrind_basic.py both`;
the difference of the two totals over the printed actions is the measured figure."""

from __future__ import annotations

import random
import sys

from domain.bots import basic as bots
from domain.bots.clock import play
from domain.bots.simulation import play_bots
from domain.game.engine import new_game, to_act
from domain.game.legal import legal_actions

GAMES = 30


def run(r: int, decisions: list[int]) -> int:
    """The human actions of `GAMES` seeded games; `decisions[0]` counts the basic ones."""
    inner = bots.BOTS["basic"]

    def counted(view, seat, rng):  # type: ignore[no-untyped-def]
        decisions[0] += 1
        return inner(view, seat, rng)

    bots.BOTS["basic"] = counted
    try:
        rng = random.Random(r)
        actions = 0
        for g in range(GAMES):
            seats = [("human", None), ("a", "basic"), ("b", "basic"), ("c", "basic")]
            state, _ = new_game(seats, f"bench-basic/{r}/{g}")
            state, _ = play_bots(state)
            while (seat := to_act(state)) is not None:
                state, _ = play(state, seat, rng.choice(legal_actions(state, seat)), 0.0)
                actions += 1
    finally:
        bots.BOTS["basic"] = inner
    return actions


def main() -> None:
    run(-1, [0])
    if sys.argv[1:] == ["both"]:
        decisions = [0]
        actions = run(0, decisions)
        print("actions", actions, "basic decisions", decisions[0])


if __name__ == "__main__":
    main()
