"""The `master` bot (issue 24): legal moves, the public view only, no randomness, a
decision whose answer is known."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from domain.bots.basic import BOTS
from domain.bots.master import master_bot, master_policy, position_value, settle
from domain.bots.simulation import play_game
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.legal import legal_actions
from domain.game.model import BOT_LEVELS, Bid, Buy, Decline, Stop
from domain.game.rng import SeededRandom


def test_master_is_a_bot_level_the_service_can_seat() -> None:
    assert "master" in BOT_LEVELS
    assert BOTS["master"] is master_bot
    game = play_game(["master", "expert"], "master/seated")
    assert game.state.results is not None


LINEUPS = [["master"], ["master", "expert"], ["expert", "master", "expert"]]


@pytest.mark.parametrize("lineup", LINEUPS)
def test_master_moves_are_legal_and_blind_to_the_pile_order(lineup: list[str]) -> None:
    # each move is legal, and comes again from the pile reversed with another random source
    checked: list[int] = []

    def check(before, seat, action, _after) -> None:
        if before.players[seat].bot != "master":
            return
        view = information_state(before)
        assert action in legal_actions(view, seat)
        if len(checked) % 5 == 0:  # the replay costs a decision each
            shuffled = replace(before, draw_pile=tuple(reversed(before.draw_pile)))
            assert master_bot(information_state(shuffled), seat, SeededRandom("o")) == action
        checked.append(seat)

    game = play_game(lineup, f"m/{len(lineup)}", on_action=check)
    assert len(checked) > 20
    assert game.state.results is not None


def test_the_same_seed_replays_the_same_game() -> None:
    one = play_game(["master", "expert"], "master/replay")
    two = play_game(["master", "expert"], "master/replay")
    assert one.events == two.events


def _last_stop(tableau: tuple[str, ...]):
    """Seat 0 to stop with the pile empty (the last card drawn): R1-R4 against seat 1's
    B1-B5, an empty market, so the stop decides the game."""
    state, _ = new_game([("a", None), ("b", None)], "master/known", starting_seat=0)
    players = (
        replace(state.players[0], cards=("R1", "R2", "R3", "R4")),
        replace(state.players[1], cards=("B1", "B2", "B3", "B4", "B5")),
    )
    return replace(state, players=players, draw_pile=(), tableau=tableau, drawn=True)


def test_the_stop_that_wins_the_game_is_chosen() -> None:
    """R5 and R6 for numbers score 6 against 5: a win; for currency, 4 against 5."""
    state = _last_stop(("R5", "R6"))
    view = information_state(state)
    assert [type(a) for a in legal_actions(view, 0)] == [Stop, Stop]
    numbers = settle(apply(view, 0, Stop(take="numbers"))[0])
    assert numbers.results is not None
    assert position_value(numbers, 0) > 1
    assert master_bot(view, 0, SeededRandom("k")) == Stop(take="numbers")


def test_every_bid_is_searched_without_the_floor() -> None:
    """With no floor an auction's move is still a legal one, and a seat that cannot
    afford to bid passes."""
    bot = master_policy(bid_floor=False)
    auctions = 0
    state, _ = new_game([("a", None), ("b", None)], "master/floor")
    while (seat := to_act(state)) is not None:
        view = information_state(state)
        if state.phase == "auction":
            action = bot(view, seat, SeededRandom("f"))
            assert action in legal_actions(view, seat)
            if state.players[seat].bidding_power == 0:
                assert type(action) is not Bid
            auctions += 1
        else:
            action = BOTS["expert"](view, seat, SeededRandom("f"))
        state, _ = apply(state, seat, action)
    assert auctions > 5


def test_a_final_buy_that_wins_where_the_expert_declines_and_loses() -> None:
    """The last buy round of a game (seed f/45 of master against expert): buying R3 wins,
    declining (the expert's points-for-tokens choice) loses, seat 1's reply played by the
    expert either way; the result is the game's own, not the model's."""
    state, _ = new_game([("a", "master"), ("b", "expert")], "master/final", starting_seat=1)
    me = replace(state.players[0], currency=10, cards=tuple(FINAL_MINE.split()))
    other = replace(state.players[1], currency=7, bust=1, cards=tuple(FINAL_THEIRS.split()))
    state = replace(
        state,
        players=(me, other),
        draw_pile=(),
        market=tuple(FINAL_MARKET.split()),
        phase="final_buy",
        final_queue=(0, 1),
        supply_currency=33,
        supply_bust=14,
    )
    view = information_state(state)
    move = master_bot(view, 0, SeededRandom("k"))
    assert type(move) is Buy
    assert move.card == "R3"
    assert BOTS["expert"](view, 0, SeededRandom("k")) == Decline()
    for action, wins in ((move, True), (Decline(), False)):
        final = settle(apply(view, 0, action)[0])
        assert final.results is not None
        mine = next(r for r in final.results if r.seat == 0)
        assert mine.winner is wins


FINAL_MINE = "O3 G5 O2 G# W2 W3 W5 W7 W8 W9 B# G6 O1 R# B9 W1 O#"
FINAL_THEIRS = "G# O# O5 B5 R2 W# R# B3 O6 R1 R6 G1 B2 W4 B# W6 G8 R8 G2 B1"
FINAL_MARKET = "G3 O9 B7 R9 O4 R7 B8 B4 G7 R3 O8 R4 G4 G9 R5 O7 B6"
