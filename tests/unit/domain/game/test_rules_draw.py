"""rules.md 3.1 (draw phase), 3.2 (stop and reward), 3.3 (bust) and 3.6 (gaining currency).

Ann is seat 0 and starts, Bob is seat 1 (Cid seat 2 ... in bigger games). Every expected
value is worked out by hand in the comments.
"""

from __future__ import annotations

import pytest

from domain.game.invariants import violations
from domain.game.legal import legal_actions
from domain.game.model import (
    Busted,
    BuyDeclined,
    CardDrawn,
    Decline,
    Draw,
    Gain,
    Stop,
    Stopped,
    TurnStarted,
)

DRAW = Draw()
NUMBERS = Stop(take="numbers")
CURRENCY = Stop(take="currency")


# ------------------------------------------------------------------ 3.1 draw phase


@pytest.mark.parametrize("take", ["numbers", "currency"])
def test_stop_before_drawing_is_must_draw(ten, take: str) -> None:
    state = ten.start(["R1", "B2"])
    ten.refuse(state, 0, Stop(take=take), "must_draw")
    assert legal_actions(state, 0) == [DRAW]


def test_first_draw_then_draw_again_or_stop(ten) -> None:
    state, _ = ten.play(ten.start(["R1", "B2"]), 0, DRAW)
    assert legal_actions(state, 0) == [DRAW, NUMBERS, CURRENCY]
    assert legal_actions(state, 1) == []


def test_number_and_currency_cards_go_to_the_tableau_in_draw_order(ten) -> None:
    state = ten.start(["R2", "$1", "B3", "O4"])
    state, events = ten.play(state, 0, DRAW, DRAW, DRAW)
    assert state.tableau == ("R2", "$1", "B3")
    assert state.draw_pile == ("O4",)
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 0, True)
    assert ten.strip(events) == [
        ten.expect(CardDrawn, seat=0, card="R2", draw_pile_size=3),
        ten.expect(CardDrawn, seat=0, card="$1", draw_pile_size=2),
        ten.expect(CardDrawn, seat=0, card="B3", draw_pile_size=1),
    ]


def test_events_and_versions_count_up_by_action(ten) -> None:
    state = ten.start(["R2", "$1", "B3"])
    state, events = ten.play(state, 0, DRAW, DRAW)
    assert state.version == 2
    assert [(e.seq, e.version) for e in events] == [(3, 1), (4, 2)]


def test_number_sum_ten_does_not_bust(ten) -> None:
    # 4 + 6 = 10 < 11
    state, events = ten.play(ten.start(["R4", "B6", "G1"]), 0, DRAW, DRAW)
    assert state.tableau == ("R4", "B6")
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 0, True)
    assert not ten.of_type(events, Busted)


def test_bust_by_numbers_at_exactly_eleven(ten) -> None:
    # 5 + 6 = 11: bust by numbers; no currency card, so nobody gains
    state, events = ten.play(ten.start(["R5", "B6", "G1"]), 0, DRAW, DRAW)
    assert state.tableau == ()
    assert state.market == ("R5", "B6")
    assert state.discard == ()
    assert [(p.currency, p.bust, p.cards) for p in state.players] == [(5, 1, ()), (5, 0, ())]
    assert (state.supply_currency, state.supply_bust) == (40, 14)
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 1, False)
    assert ten.strip(events) == [
        ten.expect(CardDrawn, seat=0, card="R5", draw_pile_size=2),
        ten.expect(CardDrawn, seat=0, card="B6", draw_pile_size=1),
        ten.expect(
            Busted,
            seat=0,
            kind="numbers",
            to_market=("R5", "B6"),
            to_discard=(),
            bust_token=True,
            gains=(),
        ),
        ten.expect(TurnStarted, seat=1),
    ]


def test_currency_cards_count_against_the_numbers(ten) -> None:
    # 9 + 3 - 2 = 10: safe, although the numbers alone make 12
    state, events = ten.play(ten.start(["R9", "$2", "B3", "G1"]), 0, DRAW, DRAW, DRAW)
    assert state.tableau == ("R9", "$2", "B3")
    assert (state.phase, state.active_seat) == ("draw", 0)
    assert not ten.of_type(events, Busted)


def test_bust_by_numbers_pays_the_others(ten) -> None:
    # Ann: R9, $2, B4 -> 13 - 2 = 11: bust by numbers. Bob and Cid each gain 2.
    state = ten.start(["R9", "$2", "B4", "G1"], players=3)
    state, events = ten.play(state, 0, DRAW, DRAW, DRAW)
    assert state.market == ("R9", "B4")
    assert state.discard == ("$2",)
    assert state.tableau == ()
    assert [(p.currency, p.bust) for p in state.players] == [(5, 1), (7, 0), (7, 0)]
    assert (state.supply_currency, state.supply_bust) == (35 - 4, 14)
    assert (state.phase, state.active_seat) == ("draw", 1)
    assert ten.strip(ten.of_type(events, Busted)) == [
        ten.expect(
            Busted,
            seat=0,
            kind="numbers",
            to_market=("R9", "B4"),
            to_discard=("$2",),
            bust_token=True,
            gains=(Gain(seat=1, amount=2), Gain(seat=2, amount=2)),
        )
    ]


def test_currency_sum_ten_does_not_bust(ten) -> None:
    state, events = ten.play(ten.start(["$5", "$5", "R1"]), 0, DRAW, DRAW)
    assert state.tableau == ("$5", "$5")
    assert (state.phase, state.active_seat) == ("draw", 0)
    assert not ten.of_type(events, Busted)


def test_bust_by_currency_pays_nobody(ten) -> None:
    # $5, R3, $4, $2: currency 5 + 4 + 2 = 11 -> bust by currency (numbers 3 - 11 < 11)
    state = ten.start(["$5", "R3", "$4", "$2", "G1"], players=3)
    state, events = ten.play(state, 0, DRAW, DRAW, DRAW, DRAW)
    assert state.market == ("R3",)
    assert state.discard == ("$5", "$4", "$2")
    assert state.tableau == ()
    assert [(p.currency, p.bust) for p in state.players] == [(5, 1), (5, 0), (5, 0)]
    assert (state.supply_currency, state.supply_bust) == (35, 14)
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 1, False)
    assert ten.strip(events[3:]) == [
        ten.expect(CardDrawn, seat=0, card="$2", draw_pile_size=1),
        ten.expect(
            Busted,
            seat=0,
            kind="currency",
            to_market=("R3",),
            to_discard=("$5", "$4", "$2"),
            bust_token=True,
            gains=(),
        ),
        ten.expect(TurnStarted, seat=1),
    ]


def test_bust_takes_no_token_when_the_supply_has_none(ten) -> None:
    # all 15 bust tokens are Bob's: Ann busts (6 + 5 = 11) and takes nothing
    state = ten.arrange(ten.start(["R6", "B5", "G1"]), seats={1: {"bust": 15}})
    assert state.supply_bust == 0
    state, events = ten.play(state, 0, DRAW, DRAW)
    assert [(p.currency, p.bust) for p in state.players] == [(5, 0), (5, 15)]
    assert state.supply_bust == 0
    (busted,) = ten.of_type(events, Busted)
    assert busted.bust_token is False
    assert (state.phase, state.active_seat) == ("draw", 1)


def test_bust_has_no_buy_phase_and_the_turn_passes_left(ten) -> None:
    # 3 players, Cid (seat 2) starts and busts: the turn passes to Ann (seat 0)
    state = ten.start(["R7", "B4", "G1"], players=3, starting_seat=2)
    state, events = ten.play(state, 2, DRAW, DRAW)
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 0, False)
    assert ten.strip(events[-1:]) == [ten.expect(TurnStarted, seat=0)]
    ten.refuse(state, 2, Decline(), "not_your_turn")


# ------------------------------------------------------------------ 3.2 stop and reward


def test_stop_numbers_takes_the_cards_and_pays_every_other_player(ten) -> None:
    # tableau R2, $3, B5, $1: numbers 7, currency 4 (7 - 4 = 3, safe)
    state = ten.start(["R2", "$3", "B5", "$1", "G1"], players=3)
    state, _ = ten.play(state, 0, DRAW, DRAW, DRAW, DRAW)
    state, events = ten.play(state, 0, NUMBERS)
    assert [(p.currency, p.cards) for p in state.players] == [
        (5, ("R2", "B5")),
        (9, ()),
        (9, ()),
    ]
    assert state.supply_currency == 35 - 8
    assert state.tableau == ()
    assert state.discard == ("$3", "$1")
    assert state.market == ()
    assert (state.phase, state.active_seat) == ("buy", 0)
    assert ten.strip(events) == [
        ten.expect(
            Stopped,
            seat=0,
            take="numbers",
            cards=("R2", "B5"),
            to_discard=("$3", "$1"),
            gains=(Gain(seat=1, amount=4), Gain(seat=2, amount=4)),
        )
    ]
    # then the buy phase: declining ends the turn
    state, events = ten.play(state, 0, Decline())
    assert ten.strip(events) == [
        ten.expect(BuyDeclined, seat=0),
        ten.expect(TurnStarted, seat=1),
    ]
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 1, False)


def test_stop_numbers_gains_go_in_order_from_the_left(ten) -> None:
    # 4 players, Cid (seat 2) active: the others gain in the order Dee, Ann, Bob
    state = ten.start(["$2", "R1", "G1"], players=4, starting_seat=2)
    state, _ = ten.play(state, 2, DRAW, DRAW)
    state, events = ten.play(state, 2, NUMBERS)
    (stopped,) = ten.of_type(events, Stopped)
    assert stopped.gains == (
        Gain(seat=3, amount=2),
        Gain(seat=0, amount=2),
        Gain(seat=1, amount=2),
    )
    assert [p.currency for p in state.players] == [7, 7, 5, 7]


def test_stop_currency_gains_and_sends_the_numbers_to_the_market(ten) -> None:
    # tableau R2, $3, B5, $1: Ann gains 4; R2 and B5 go to the market; no buy phase
    state = ten.start(["R2", "$3", "B5", "$1", "G1"])
    state, _ = ten.play(state, 0, DRAW, DRAW, DRAW, DRAW)
    state, events = ten.play(state, 0, CURRENCY)
    assert [(p.currency, p.cards) for p in state.players] == [(9, ()), (5, ())]
    assert state.supply_currency == 40 - 4
    assert state.market == ("R2", "B5")
    assert state.discard == ("$3", "$1")
    assert state.tableau == ()
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 1, False)
    assert ten.strip(events) == [
        ten.expect(
            Stopped,
            seat=0,
            take="currency",
            cards=("R2", "B5"),
            to_discard=("$3", "$1"),
            gains=(Gain(seat=0, amount=4),),
        ),
        ten.expect(TurnStarted, seat=1),
    ]


def test_stop_with_only_numbers_pays_nothing(ten) -> None:
    state, _ = ten.play(ten.start(["R2", "G1"]), 0, DRAW)
    state, events = ten.play(state, 0, NUMBERS)
    (stopped,) = ten.of_type(events, Stopped)
    assert stopped.gains == ()
    assert [p.currency for p in state.players] == [5, 5]
    assert state.supply_currency == 40


# ------------------------------------------------------------------ 3.6 gaining currency


def test_currency_cap_of_ten_excess_stays_in_the_supply(ten) -> None:
    # Bob holds 8 and is owed 4: he takes 2; the other 2 stay in the supply
    state = ten.arrange(ten.start(["$4", "R1", "G1"]), seats={1: {"currency": 8}})
    assert state.supply_currency == 37
    state, _ = ten.play(state, 0, DRAW, DRAW)
    state, events = ten.play(state, 0, NUMBERS)
    assert [p.currency for p in state.players] == [5, 10]
    assert state.supply_currency == 35
    assert ten.of_type(events, Stopped)[0].gains == (Gain(seat=1, amount=2),)


def test_currency_cap_applies_to_the_currency_reward(ten) -> None:
    # Ann holds 9 and stops for currency 4: she takes 1
    state = ten.arrange(ten.start(["$4", "G1"]), seats={0: {"currency": 9}})
    state, events = ten.play(state, 0, DRAW, CURRENCY)
    assert [p.currency for p in state.players] == [10, 5]
    assert state.supply_currency == 35
    assert ten.of_type(events, Stopped)[0].gains == (Gain(seat=0, amount=1),)


def test_player_at_the_cap_gains_nothing(ten) -> None:
    state = ten.arrange(ten.start(["$3", "G1"]), seats={1: {"currency": 10}})
    state, events = ten.play(state, 0, DRAW, NUMBERS)
    assert [p.currency for p in state.players] == [5, 10]
    assert state.supply_currency == 35
    assert ten.of_type(events, Stopped)[0].gains == ()


def test_bust_tokens_do_not_count_toward_the_cap(ten) -> None:
    # Bob holds 6 currency and 4 bust tokens, is owed 4: he reaches 10 currency
    state = ten.arrange(ten.start(["$4", "R1", "G1"]), seats={1: {"currency": 6, "bust": 4}})
    state, _ = ten.play(state, 0, DRAW, DRAW, NUMBERS)
    assert [(p.currency, p.bust) for p in state.players] == [(5, 0), (10, 4)]


def test_bust_by_numbers_gains_respect_the_cap(ten) -> None:
    # Ann: $3, R9, B5 -> 14 - 3 = 11, bust by numbers; Bob (9) takes 1, Cid (5) takes 3
    state = ten.arrange(ten.start(["$3", "R9", "B5", "G1"], players=3), seats={1: {"currency": 9}})
    state, events = ten.play(state, 0, DRAW, DRAW, DRAW)
    assert [p.currency for p in state.players] == [5, 10, 8]
    assert ten.of_type(events, Busted)[0].gains == (
        Gain(seat=1, amount=1),
        Gain(seat=2, amount=3),
    )


def test_short_supply_is_shared_in_turn_order_from_the_left_of_the_active_player(ten) -> None:
    # Bob (seat 1) is active and stops for numbers with currency 4; the supply holds 3 only.
    # Cid (seat 2, to Bob's left) takes all 3, Ann (seat 0) gets nothing.
    # (With consistent tokens this cannot happen: see test_supply_always_covers_what_can_be_taken.)
    state = ten.start(["$4", "R1", "G1"], players=3, starting_seat=1)
    state = ten.arrange(state, supply_currency=3)
    state, events = ten.play(state, 1, DRAW, DRAW, NUMBERS)
    assert [p.currency for p in state.players] == [5, 5, 8]
    assert state.supply_currency == 0
    assert ten.of_type(events, Stopped)[0].gains == (Gain(seat=2, amount=3),)


def test_short_supply_partial_share_for_the_next_player(ten) -> None:
    # Ann (seat 0) active, supply 5, currency 4: Bob takes 4, Cid takes the last 1
    state = ten.arrange(ten.start(["$4", "R1", "G1"], players=3), supply_currency=5)
    state, events = ten.play(state, 0, DRAW, DRAW, NUMBERS)
    assert [p.currency for p in state.players] == [5, 9, 6]
    assert ten.of_type(events, Stopped)[0].gains == (
        Gain(seat=1, amount=4),
        Gain(seat=2, amount=1),
    )


def test_supply_always_covers_what_can_be_taken(ten) -> None:
    # 50 tokens = 5 seats x cap 10: with consistent tokens the supply always holds the room
    # left under the cap. Five players, Ann (seat 0) busts by numbers with currency 5 while
    # everyone else is near the cap: every other player fills up and the supply is then
    # exactly Ann's own room (10 - 2 = 8).
    state = ten.start(["$5", "R9", "B7", "G1"], players=5)
    state = ten.arrange(
        state,
        seats={
            0: {"currency": 2},
            1: {"currency": 9},
            2: {"currency": 7},
            3: {"currency": 10},
            4: {"currency": 8},
        },
    )
    assert state.supply_currency == 14
    state, events = ten.play(state, 0, DRAW, DRAW, DRAW)  # 16 - 5 = 11: bust by numbers
    assert [p.currency for p in state.players] == [2, 10, 10, 10, 10]
    assert state.supply_currency == 8
    assert ten.of_type(events, Busted)[0].gains == (
        Gain(seat=1, amount=1),
        Gain(seat=2, amount=3),
        Gain(seat=4, amount=2),
    )
    assert violations(state, ten.deck_of(state)) == []
