"""The simulator's random seats decide with `random_move` (no view built): it must be the
random bot itself, the same action from the same random source, in every phase."""

from __future__ import annotations

import copy

import pytest

from domain.bots import random_bot, random_move
from domain.engine import apply, new_game, to_act
from domain.rng import SeededRandom
from domain.views import public_view

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_random_move_is_random_bot_on_the_public_view(players: int) -> None:
    state, _ = new_game([(f"p{i}", "random") for i in range(players)], f"fast/{players}")
    rng = SeededRandom(f"fast-rng/{players}")
    phases: set[str] = set()
    spent_cards = 0
    while (seat := to_act(state)) is not None:
        twin = copy.deepcopy(rng)
        fast = random_move(state, seat, rng)
        slow = random_bot(public_view(state), seat, twin)
        assert fast == slow
        assert rng.randbelow(1 << 30) == twin.randbelow(1 << 30)  # same draws consumed
        phases.add(state.phase)
        spent_cards += len(getattr(getattr(fast, "payment", None), "cards", ()) or ())
        state, _ = apply(state, seat, fast)
    assert phases == {"draw", "auction", "buy", "final_buy"}
    assert spent_cards > 0  # payments with cards (the scoring-based spend order) were made


def test_random_move_refuses_a_finished_game() -> None:
    state, _ = new_game([("a", "random"), ("b", "random")], "fast/refuse")
    rng = SeededRandom("r")
    while (seat := to_act(state)) is not None:
        state, _ = apply(state, seat, random_move(state, seat, rng))
    assert state.phase == "finished"
    with pytest.raises(ValueError, match="not this seat"):
        random_move(state, 0, rng)
