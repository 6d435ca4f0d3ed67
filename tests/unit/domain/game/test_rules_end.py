"""rules.md 4 (end of the game), 5 (scoring), 6 (winner) and 7 (one player)."""

from __future__ import annotations

import pytest

from domain.game.engine import new_game
from domain.game.legal import legal_actions
from domain.game.model import (
    Bid,
    Busted,
    Buy,
    BuyDeclined,
    CardBought,
    CardDrawn,
    ColorResult,
    Decline,
    Draw,
    FinalBuyStarted,
    GameFinished,
    Pass,
    Payment,
    Rules,
    Stop,
    Stopped,
    TurnStarted,
)

DRAW = Draw()
DECLINE = Decline()
NUMBERS = Stop(take="numbers")
CURRENCY = Stop(take="currency")
NO_RUN = ColorResult(points=0, run=())


# ------------------------------------------------------------------ 4. end of the game


def test_last_card_ends_the_draw_then_the_turn_and_a_final_buy_round(ten) -> None:
    # 3 players, Bob (seat 1) draws the only card: his turn ends as usual (stop, buy
    # phase), then the final buy round goes Cid, Ann, Bob
    state = ten.start(["B2"], players=3, starting_seat=1)
    state, events = ten.play(state, 1, DRAW)
    assert ten.strip(events) == [ten.expect(CardDrawn, seat=1, card="B2", draw_pile_size=0)]
    assert (state.phase, state.active_seat, state.draw_pile) == ("draw", 1, ())
    assert legal_actions(state, 1) == [NUMBERS, CURRENCY]
    ten.refuse(state, 1, DRAW, "draw_pile_empty")

    state, _ = ten.play(state, 1, NUMBERS)
    assert (state.phase, state.active_seat) == ("buy", 1)  # his own buy phase first
    state, events = ten.play(state, 1, DECLINE)
    assert ten.strip(events) == [
        ten.expect(BuyDeclined, seat=1),
        ten.expect(FinalBuyStarted, order=(2, 0, 1)),
    ]
    seen = []
    while state.phase == "final_buy":
        seat = state.final_queue[0]
        seen.append(seat)
        ten.refuse(state, (seat + 1) % 3, DECLINE, "not_your_turn")
        ten.refuse(state, seat, DRAW, "illegal_action")
        state, events = ten.play(state, seat, DECLINE)
    assert seen == [2, 0, 1]
    assert state.phase == "finished"
    assert state.results is not None
    assert [(r.seat, r.score, r.rank, r.winner) for r in state.results] == [
        (0, 0, 2, False),
        (1, 1, 1, True),
        (2, 0, 2, False),
    ]
    assert ten.strip(events) == [
        ten.expect(BuyDeclined, seat=1),
        ten.expect(GameFinished, results=state.results),
    ]
    ten.refuse(state, 0, DRAW, "game_finished")
    ten.refuse(state, 1, DECLINE, "game_finished")


def test_final_buy_round_players_may_buy(ten) -> None:
    # Ann busts with R5 + B6 (market R5 B6). Bob draws the last card G1, stops for
    # numbers and buys R5 for 5. Final round: Ann buys B6 (5 currency + 1 bust token ->
    # 3 currency + 1 bust token paid automatically), then Bob has nothing to buy.
    state = ten.start(["R5", "B6", "G1"])
    state, _ = ten.play(state, 0, DRAW, DRAW)
    assert state.market == ("R5", "B6")
    state, _ = ten.play(state, 1, DRAW, NUMBERS, Buy(card="R5", payment=Payment(currency=5)))
    assert (state.phase, state.final_queue) == ("final_buy", (0, 1))
    state, events = ten.play(state, 0, Buy(card="B6"))
    assert ten.strip(events) == [
        ten.expect(CardBought, seat=0, card="B6", payment=Payment(currency=3, bust=1, cards=()))
    ]
    assert [(p.currency, p.bust, p.cards) for p in state.players] == [
        (2, 0, ("B6",)),
        (0, 0, ("G1", "R5")),
    ]
    assert (state.phase, state.final_queue) == ("final_buy", (1,))
    assert legal_actions(state, 1) == [DECLINE]
    state, _ = ten.play(state, 1, DECLINE)
    assert state.phase == "finished"
    assert state.results is not None
    # Ann: B6 -> 1 point; Bob: G1, R5 -> 2 points
    assert [(r.seat, r.score, r.rank, r.winner) for r in state.results] == [
        (0, 1, 2, False),
        (1, 2, 1, True),
    ]
    assert (state.supply_currency, state.supply_bust) == (48, 15)


def test_last_card_a_wild_is_auctioned_then_the_player_must_stop(ten) -> None:
    state = ten.start(["W#"])
    state, _ = ten.play(state, 0, DRAW)
    state, _ = ten.run(state, (1, Bid(amount=1)), (0, Bid(amount=2)))
    assert (state.phase, state.active_seat, state.draw_pile) == ("draw", 0, ())
    assert [(p.currency, p.cards) for p in state.players] == [(3, ("W#",)), (5, ())]
    assert legal_actions(state, 0) == [NUMBERS, CURRENCY]
    ten.refuse(state, 0, DRAW, "draw_pile_empty")
    state, events = ten.play(state, 0, CURRENCY)
    assert ten.strip(events) == [
        ten.expect(Stopped, seat=0, take="currency", cards=(), to_discard=(), gains=()),
        ten.expect(FinalBuyStarted, order=(1, 0)),
    ]
    state, _ = ten.run(state, (1, DECLINE), (0, DECLINE))
    assert state.phase == "finished"
    assert state.results is not None
    assert [(r.score, r.winner) for r in state.results] == [(1, True), (0, False)]


def test_last_card_a_wild_that_everyone_passes(ten) -> None:
    state = ten.start(["R2", "W3"])
    state, _ = ten.play(state, 0, DRAW, DRAW)
    state, _ = ten.run(state, (1, Pass()), (0, Pass()))
    assert state.discard == ("W3",)
    state, _ = ten.play(state, 0, NUMBERS, DECLINE)
    assert (state.phase, state.final_queue) == ("final_buy", (1, 0))


def test_last_card_busting_ends_the_turn_and_starts_the_final_buy_round(ten) -> None:
    # Ann: R9 + B2 = 11 with the last card. No buy phase for her, no next turn.
    state = ten.start(["R9", "B2"])
    state, events = ten.play(state, 0, DRAW, DRAW)
    assert ten.strip(events[2:]) == [
        ten.expect(
            Busted,
            seat=0,
            kind="numbers",
            to_market=("R9", "B2"),
            to_discard=(),
            bust_token=True,
            gains=(),
        ),
        ten.expect(FinalBuyStarted, order=(1, 0)),
    ]
    assert not ten.of_type(events, TurnStarted)
    assert (state.phase, state.final_queue, state.active_seat) == ("final_buy", (1, 0), 0)
    # Bob can pay for B2 but not R9; Ann (5 currency + 1 bust token = 8) cannot pay R9
    assert legal_actions(state, 1) == [
        DECLINE,
        Buy(card="B2", payment=Payment(currency=2)),
    ]
    state, _ = ten.play(state, 1, Buy(card="B2"))
    assert legal_actions(state, 0) == [DECLINE]
    ten.refuse(state, 0, Buy(card="R9"), "insufficient_payment")
    state, _ = ten.play(state, 0, DECLINE)
    assert state.phase == "finished"
    assert state.results is not None
    assert [(r.seat, r.score, r.currency, r.bust, r.cards) for r in state.results] == [
        (0, 0, 5, 1, 0),
        (1, 1, 3, 0, 1),
    ]


def test_a_currency_stop_on_the_last_card_goes_straight_to_the_final_round(ten) -> None:
    state = ten.start(["R3", "$2"], players=3)
    state, _ = ten.play(state, 0, DRAW, DRAW)
    state, events = ten.play(state, 0, CURRENCY)
    assert ten.strip(events[1:]) == [ten.expect(FinalBuyStarted, order=(1, 2, 0))]
    assert state.market == ("R3",)
    assert state.players[0].currency == 7


def test_to_act_follows_the_final_buy_order(ten) -> None:
    state = ten.start(["R1"], players=4, starting_seat=2)
    state, _ = ten.play(state, 2, DRAW, NUMBERS, DECLINE)
    order = []
    while state.phase == "final_buy":
        seat = state.final_queue[0]
        assert legal_actions(state, seat) == [DECLINE]
        order.append(seat)
        state, _ = ten.play(state, seat, DECLINE)
    assert order == [3, 0, 1, 2]


# ------------------------------------------------------------------ 5. scoring, 6. winner


def finish(ten, *hands, rules=None):
    """Results of a game that ends now, each hand being (currency, bust, cards) of a seat."""
    state = ten.start(["R1"], players=len(hands), rules=rules)
    state = ten.arrange(
        state,
        seats={
            seat: {"currency": c, "bust": b, "cards": tuple(cards)}
            for seat, (c, b, cards) in enumerate(hands)
        },
        draw_pile=(),
        discard=("R1",),
        phase="final_buy",
        final_queue=(0,),
    )
    state, events = ten.play(state, 0, DECLINE)
    assert state.phase == "finished"
    assert ten.of_type(events, GameFinished)[0].results == state.results
    return state.results


def test_only_the_longest_run_of_a_colour_counts(ten) -> None:
    (result,) = finish(ten, (5, 0, ["B1", "B2", "B3", "B5", "B7"]))
    assert result.score == 3
    assert result.colors == {
        "R": NO_RUN,
        "B": ColorResult(points=3, run=("B1", "B2", "B3")),
        "O": NO_RUN,
        "G": NO_RUN,
    }


def test_duplicates_add_nothing(ten) -> None:
    (result,) = finish(ten, (5, 0, ["R1", "R1", "R2", "R2"]))
    assert result.score == 2
    assert result.colors["R"] == ColorResult(points=2, run=("R1", "R2"))


def test_the_score_sums_the_four_colours(ten) -> None:
    # R 4-5-6 (3), B 9 (1), O 1-2 (2), G nothing
    (result,) = finish(ten, (5, 0, ["R4", "R5", "R6", "B9", "O1", "O2", "R8"]))
    assert result.score == 6
    assert [result.colors[c].points for c in "RBOG"] == [3, 1, 2, 0]


def test_a_colour_wild_fills_its_own_colour_only(ten) -> None:
    # R1 R2 R# R4 -> red 4; B# cannot go into red: blue B# alone scores 1
    (result,) = finish(ten, (5, 0, ["R1", "R2", "R#", "R4", "B#"]))
    assert result.score == 5
    assert result.colors["R"] == ColorResult(points=4, run=("R1", "R2", "R#", "R4"))
    assert result.colors["B"] == ColorResult(points=1, run=("B#",))


def test_a_numbered_wildcard_fills_its_number_in_any_colour(ten) -> None:
    # G7 W8 G9 -> green 3: W8 is the green 8 (elsewhere it would make 1 + 1 + 1)
    (result,) = finish(ten, (5, 0, ["G7", "G9", "W8"]))
    assert result.score == 3
    assert result.colors["G"] == ColorResult(points=3, run=("G7", "W8", "G9"))


def test_each_wild_card_counts_once_in_the_best_place(ten) -> None:
    # W3 in red makes R1-R4 (4); W# in blue makes B1-B3 (3): 7. Any other placement
    # scores less (W# in red and W3 elsewhere: 4 + 1 + 1 = 6).
    (result,) = finish(ten, (5, 0, ["R1", "R2", "R4", "B1", "B3", "W3", "W#"]))
    assert result.score == 7
    assert result.colors["R"] == ColorResult(points=4, run=("R1", "R2", "W3", "R4"))
    assert result.colors["B"] == ColorResult(points=3, run=("B1", "W#", "B3"))


def test_a_perfect_colour_scores_ten_by_default(ten) -> None:
    red = [f"R{n}" for n in range(1, 10)]
    (result,) = finish(ten, (5, 0, red))
    assert result.score == 10
    assert result.colors["R"] == ColorResult(points=10, run=tuple(red))


def test_a_perfect_colour_made_with_a_wild_earns_the_bonus(ten) -> None:
    cards = ["O1", "O2", "O3", "O4", "O#", "O6", "O7", "O8", "O9"]
    (result,) = finish(ten, (5, 0, cards))
    assert result.score == 10
    assert result.colors["O"].run == tuple(cards)


@pytest.mark.parametrize(("bonus", "score"), [(0, 9), (1, 10), (3, 12)])
def test_the_perfect_bonus_is_a_rule_option(ten, bonus: int, score: int) -> None:
    (result,) = finish(
        ten, (5, 0, [f"G{n}" for n in range(1, 10)] + ["R1"]), rules=Rules(perfect_bonus=bonus)
    )
    assert result.score == score + 1


def test_eight_in_a_row_earns_no_bonus(ten) -> None:
    (result,) = finish(ten, (5, 0, [f"B{n}" for n in range(2, 10)]), rules=Rules(perfect_bonus=5))
    assert result.score == 8


def test_the_highest_score_wins(ten) -> None:
    results = finish(
        ten,
        (10, 5, ["R1"]),  # 1 point, many tokens
        (0, 0, ["B1", "B2", "B3"]),  # 3 points
        (5, 0, ["G1", "G2"]),  # 2 points
    )
    assert [(r.score, r.rank, r.winner) for r in results] == [
        (1, 3, False),
        (3, 1, True),
        (2, 2, False),
    ]


def test_a_tie_goes_to_the_most_currency_tokens_and_bust_tokens_do_not_count(ten) -> None:
    results = finish(
        ten,
        (4, 5, ["R1", "R2"]),  # 2 points, 4 currency (+ 15 in bust tokens)
        (5, 0, ["B5", "B6"]),  # 2 points, 5 currency
    )
    assert [(r.rank, r.winner, r.currency, r.bust) for r in results] == [
        (2, False, 4, 5),
        (1, True, 5, 0),
    ]


def test_then_the_fewest_cards_in_the_collection(ten) -> None:
    results = finish(
        ten,
        (5, 0, ["R1", "R2", "R2"]),  # 2 points, 3 cards
        (5, 0, ["B5", "B6"]),  # 2 points, 2 cards
    )
    assert [(r.rank, r.winner, r.cards) for r in results] == [(2, False, 3), (1, True, 2)]


def test_still_tied_the_win_is_shared(ten) -> None:
    results = finish(
        ten,
        (5, 1, ["R1", "R2"]),
        (5, 0, ["G8", "G9"]),
        (5, 0, ["B1"]),
    )
    assert [(r.seat, r.score, r.winner) for r in results] == [
        (0, 2, True),
        (1, 2, True),
        (2, 1, False),
    ]
    assert results[0].rank == results[1].rank == 1
    assert results[2].rank > 1


# ------------------------------------------------------------------ 7. one player


def test_one_player_game_uses_the_81_card_deck() -> None:
    state, _ = new_game([("Ann", None)], seed="solo")
    assert len(state.draw_pile) == 81
    assert state.supply_currency == 45
    assert state.active_seat == 0


def test_one_player_nobody_else_gains(ten) -> None:
    state = ten.start(["R1", "$3", "B2", "G5"], players=1)
    state, events = ten.play(state, 0, DRAW, DRAW, DRAW, NUMBERS)
    assert ten.of_type(events, Stopped)[0].gains == ()
    assert (state.players[0].currency, state.players[0].cards) == (5, ("R1", "B2"))
    assert state.supply_currency == 45
    state, events = ten.play(state, 0, DECLINE)
    assert ten.strip(events[1:]) == [ten.expect(TurnStarted, seat=0)]  # the turn comes back


def test_one_player_final_buy_round_is_the_players_alone_and_the_result_is_the_score(ten) -> None:
    state = ten.start(["R2", "R1"], players=1)
    state, _ = ten.play(state, 0, DRAW, CURRENCY)  # R2 to the market
    state, events = ten.play(state, 0, DRAW, NUMBERS)
    assert (state.phase, state.active_seat) == ("buy", 0)
    state, events = ten.play(state, 0, DECLINE)
    assert ten.strip(events) == [
        ten.expect(BuyDeclined, seat=0),
        ten.expect(FinalBuyStarted, order=(0,)),
    ]
    state, events = ten.play(state, 0, Buy(card="R2", payment=Payment(currency=2)))
    assert state.phase == "finished"
    assert state.results is not None
    (result,) = state.results
    assert (result.seat, result.score, result.rank, result.winner) == (0, 2, 1, True)
    assert result.colors["R"] == ColorResult(points=2, run=("R1", "R2"))
    assert (result.currency, result.bust, result.cards) == (3, 0, 2)
