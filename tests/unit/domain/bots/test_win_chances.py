"""`domain.bots.winning`: each seat's chance of winning, from the learned table (issue 24)."""

from __future__ import annotations

import math

import pytest
from msgspec.structs import replace

from domain.bots.expert import equity
from domain.bots.simulation import play_game
from domain.bots.win_table import BETA, KNOTS
from domain.bots.winning import beta, win_chances
from domain.game.engine import information_state, new_game


def positions(players: int, games: int, seed: str):
    """(state, final results) at every turn start of expert games not used in training."""
    out = []
    for g in range(games):
        seen = []

        def keep(_before, _seat, _action, after, seen=seen) -> None:
            if after.phase == "draw" and not after.drawn:
                seen.append(after)

        game = play_game(["expert"] * players, f"{seed}/{players}/{g}", on_action=keep)
        out.extend((state, game.state.results) for state in seen)
    return out


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_chances_predict_games_it_was_not_fitted_on(players: int) -> None:
    """Mean log loss well below the uniform guess's (log n) on other seeds."""
    loss = 0.0
    data = positions(players, 30, "win-check")
    for state, results in data:
        chances = win_chances(state)
        assert math.isclose(sum(chances), 1.0)
        winners = [r.seat for r in results if r.winner]
        loss -= sum(math.log(chances[s]) for s in winners) / len(winners)
    assert loss / len(data) < 0.95 * math.log(players)  # held out: 0.78-0.87 of it


def test_more_equity_more_chance_and_equal_seats_equal_chances() -> None:
    state, _ = new_game([("a", None), ("b", None), ("c", None)], "eq")
    assert win_chances(state) == pytest.approx((1 / 3,) * 3)
    for state, _ in positions(3, 3, "win-order"):
        chances = win_chances(state)
        eq = [equity(p, state.rules.perfect_bonus) for p in state.players]
        for i in range(3):
            for j in range(3):
                if eq[i] > eq[j]:
                    assert chances[i] > chances[j]
                elif eq[i] == eq[j]:
                    assert chances[i] == pytest.approx(chances[j])


def test_a_lead_counts_more_as_the_pile_runs_out() -> None:
    """The table's own shape: beta at the end of the pile above beta at its start."""
    for players in range(2, 6):
        assert beta(players, 0.0) > beta(players, 1.0)
        assert len(BETA[players]) == KNOTS
        assert beta(players, 0.05) == pytest.approx((BETA[players][0] + BETA[players][1]) / 2)


def test_a_finished_game_is_its_result_and_the_pile_order_is_not_read() -> None:
    game = play_game(["expert", "basic", "expert"], "win-end")
    assert game.state.results is not None
    winners = [r.seat for r in game.state.results if r.winner]
    assert win_chances(game.state) == tuple(
        1 / len(winners) if s in winners else 0.0 for s in range(3)
    )
    state, _ = new_game([("a", None), ("b", None)], "hidden")
    state = replace(
        state, players=(replace(state.players[0], cards=("R5", "R6")), state.players[1])
    )
    assert win_chances(state) == win_chances(information_state(state))
    assert win_chances(state)[0] > 0.5
