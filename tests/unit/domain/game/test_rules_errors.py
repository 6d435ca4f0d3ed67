"""Refused actions (api.md codes), hidden information (rules.md 9) and invariants (rules.md 8)."""

from __future__ import annotations

import msgspec
import pytest

from domain.game.cards import deck_for
from domain.game.engine import apply, new_game, to_act
from domain.game.errors import RuleError
from domain.game.invariants import violations
from domain.game.model import (
    Action,
    Bid,
    Buy,
    Decline,
    Draw,
    Pass,
    Payment,
    Stop,
    TokenPayment,
)
from domain.game.views import public_view

DRAW = Draw()
PASS = Pass()
DECLINE = Decline()
NUMBERS = Stop(take="numbers")
CURRENCY = Stop(take="currency")
BID = Bid(amount=1)
BUY = Buy(card="R1", payment=Payment(currency=1))


def phase_state(ten, phase: str):
    """Ann (seat 0) to act in the given phase of a two-player game; the market holds R1."""
    state = ten.start(["R2", "W5", "R1", "B3", "G4"])
    if phase == "draw":
        state, _ = ten.play(state, 0, DRAW)
    elif phase == "auction":
        state, _ = ten.play(state, 0, DRAW, DRAW)
        state, _ = ten.play(state, 1, PASS)
    elif phase == "buy":
        state, _ = ten.play(state, 0, DRAW, NUMBERS)
    elif phase == "final_buy":
        state, _ = ten.play(state, 0, DRAW, NUMBERS)
        state = ten.arrange(state, draw_pile=(), phase="final_buy", final_queue=(0, 1))
    state = ten.arrange(
        state, draw_pile=tuple(c for c in state.draw_pile if c != "R1"), market=("R1",)
    )
    assert (state.phase, to_act(state)) == (phase, 0)
    return state


@pytest.mark.parametrize(
    ("phase", "action"),
    [
        ("draw", BID),
        ("draw", PASS),
        ("draw", BUY),
        ("draw", DECLINE),
        ("auction", DRAW),
        ("auction", NUMBERS),
        ("auction", CURRENCY),
        ("auction", BUY),
        ("auction", DECLINE),
        ("buy", DRAW),
        ("buy", NUMBERS),
        ("buy", CURRENCY),
        ("buy", BID),
        ("buy", PASS),
        ("final_buy", DRAW),
        ("final_buy", NUMBERS),
        ("final_buy", BID),
        ("final_buy", PASS),
    ],
)
def test_an_action_of_the_wrong_kind_for_the_phase_is_an_illegal_action(
    ten, phase: str, action: Action
) -> None:
    ten.refuse(phase_state(ten, phase), 0, action, "illegal_action")


@pytest.mark.parametrize("phase", ["draw", "auction", "buy", "final_buy"])
@pytest.mark.parametrize("action", [DRAW, NUMBERS, BID, PASS, BUY, DECLINE])
def test_a_seat_whose_decision_it_is_not_gets_not_your_turn(ten, phase: str, action) -> None:
    state = phase_state(ten, phase)
    ten.refuse(state, 1, action, "not_your_turn")
    ten.refuse(state, 7, action, "not_your_turn")  # no such seat


def test_a_stop_with_an_unknown_reward_is_an_illegal_action(ten) -> None:
    state, _ = ten.play(ten.start(["R1", "B2"]), 0, DRAW)
    ten.refuse(state, 0, Stop(take="cards"), "illegal_action")  # type: ignore[arg-type]


def test_a_finished_game_refuses_everything_with_game_finished(ten) -> None:
    state, _ = ten.play(ten.start(["R1"], players=1), 0, DRAW, NUMBERS, DECLINE, DECLINE)
    assert state.phase == "finished"
    for seat in (0, 1):
        for action in (DRAW, NUMBERS, BID, PASS, BUY, DECLINE):
            ten.refuse(state, seat, action, "game_finished")


def test_a_refused_action_changes_nothing_mid_auction(ten) -> None:
    state = ten.arrange(ten.start(["W5", "R1"]), seats={1: {"currency": 2, "bust": 1}})
    state, _ = ten.play(state, 0, DRAW)
    state, _ = ten.play(state, 1, Bid(amount=3))
    before = ten.snapshot(state)
    for action, code in [
        (Bid(amount=3), "bid_too_low"),
        (Bid(amount=6), "bid_too_high"),  # Ann: 5 currency, no bust token
        (Bid(amount=4, payment=TokenPayment(currency=4, bust=1)), "payment_not_held"),
        (Bid(amount=4, payment=TokenPayment(currency=3)), "insufficient_payment"),
        (Bid(amount=4, payment=TokenPayment(currency=5)), "payment_not_minimal"),
    ]:
        ten.refuse(state, 0, action, code)
    assert state == before


def test_a_payment_with_negative_token_counts_is_refused(ten) -> None:
    # Ann: 5 currency, 2 bust tokens. -3 currency + 2 bust tokens "= 3" for R3.
    state = ten.arrange(
        ten.start(["G8", "O8"]),
        seats={0: {"bust": 2}},
        market=("R3",),
        phase="buy",
        drawn=True,
    )
    ten.refuse(state, 0, Buy(card="R3", payment=Payment(currency=-3, bust=2)), "payment_not_held")
    auction = ten.arrange(ten.start(["W#", "O8"]), seats={0: {"bust": 2}})
    auction, _ = apply(auction, 0, Draw())
    ten.refuse(
        auction, 1, Bid(amount=3, payment=TokenPayment(currency=-3, bust=2)), "payment_not_held"
    )


# ------------------------------------------------------------------ 9. hidden information


SECRET_SEED = "very-secret-seed-4711"


def walk_keys(value, path=""):
    """Every (path, key) of a decoded JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key
            yield from walk_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from walk_keys(item, f"{path}[]")


def test_the_public_view_holds_neither_the_seed_nor_the_draw_pile(ten) -> None:
    state, events = new_game([("Ann", None), ("Bob", None)], seed=SECRET_SEED, starting_seat=0)
    state, more = apply(state, 0, DRAW)
    events += more
    for live in (state, new_game([("Ann", None)], seed=SECRET_SEED)[0]):
        encoded = msgspec.json.encode(public_view(live))
        document = msgspec.json.decode(encoded)
        keys = {key for _, key in walk_keys(document)}
        assert "draw_pile" not in keys
        assert "seed" not in keys
        assert document["draw_pile_size"] == len(live.draw_pile)
        assert SECRET_SEED.encode() not in encoded
    # nor do the events
    encoded_events = msgspec.json.encode(events)
    assert SECRET_SEED.encode() not in encoded_events
    keys = {key for _, key in walk_keys(msgspec.json.decode(encoded_events))}
    assert not keys & {"draw_pile", "seed"}
    assert msgspec.json.decode(msgspec.json.encode(public_view(state)))["draw_pile_size"] == 80


def test_the_public_view_is_the_same_whatever_the_draw_pile_order(ten) -> None:
    one = ten.start(["R1", "B2", "G3", "O4"])
    other = ten.start(["R1", "O4", "G3", "B2"])
    one, _ = ten.play(one, 0, DRAW)
    other, _ = ten.play(other, 0, DRAW)
    assert one.draw_pile != other.draw_pile
    assert msgspec.json.encode(public_view(one)) == msgspec.json.encode(public_view(other))


def test_a_refusal_does_not_reveal_the_seed(ten) -> None:
    state, _ = new_game([("Ann", None), ("Bob", None)], seed=SECRET_SEED, starting_seat=0)
    with pytest.raises(RuleError) as info:
        apply(state, 1, DRAW)
    assert SECRET_SEED not in str(info.value)
    assert SECRET_SEED not in info.value.detail


# ------------------------------------------------------------------ 8. invariants


def test_invariants_hold_after_every_action_of_a_scripted_game(ten) -> None:
    deck = ["R5", "$2", "W3", "B6", "R9", "$5", "$4", "$3", "G1", "G2", "R#", "O3"]
    state = ten.start(deck, players=3)
    steps = [
        (0, DRAW),  # R5
        (0, DRAW),  # $2: 5 - 2 = 3
        (0, DRAW),  # W3: auction, bidders Bob, Cid, Ann
        (1, Bid(amount=2)),
        (2, PASS),
        (0, Bid(amount=3)),  # Ann takes W3 for 3 currency: 2 left
        (0, DRAW),  # B6: 11 - 2 = 9
        (0, NUMBERS),  # Ann takes R5 B6; Bob and Cid gain 2 (7 each)
        (0, DECLINE),
        (1, DRAW),  # R9
        (1, DRAW),  # $5
        (1, DRAW),  # $4
        (1, DRAW),  # $3: currency 12, Bob busts by currency: R9 to the market
        (2, DRAW),  # G1
        (2, CURRENCY),  # Cid gains nothing; G1 to the market
        (0, DRAW),  # G2
        (0, NUMBERS),
        (0, Buy(card="G1", payment=Payment(currency=1))),  # Ann: 1 currency left
        (1, DRAW),  # R#: auction, bidders Cid, Ann, Bob
        (2, PASS),
        (0, PASS),
        (1, PASS),  # R# to the discard pile
        (1, DRAW),  # O3, the last card
        (1, NUMBERS),
        (1, Buy(card="R9")),  # 7 currency + 1 bust token: pays 6 currency + 1 bust token
        (2, DECLINE),  # final buy round: Cid, Ann, Bob
        (0, DECLINE),
        (1, DECLINE),
    ]
    for seat, action in steps:
        state, _ = apply(state, seat, action)
        assert violations(state, deck) == []
    assert state.phase == "finished"
    assert [(p.currency, p.bust, p.cards) for p in state.players] == [
        (1, 0, ("W3", "R5", "B6", "G2", "G1")),
        (1, 0, ("O3", "R9")),
        (7, 0, ()),
    ]
    assert (state.supply_currency, state.supply_bust) == (41, 15)
    assert state.discard == ("$2", "$5", "$4", "$3", "R#")
    assert state.market == ()
    assert state.results is not None
    # Ann: G1 G2 W3 (3) + R5 (1) + B6 (1) = 5; Bob: O3 (1) + R9 (1) = 2; Cid: 0
    assert [(r.score, r.rank, r.winner) for r in state.results] == [
        (5, 1, True),
        (2, 2, False),
        (0, 3, False),
    ]


def test_violations_is_empty_for_a_new_game() -> None:
    state, _ = new_game([("Ann", None), ("Bob", None), ("Cid", None)], seed="inv")
    assert violations(state, deck_for(3)) == []


def test_violations_reports_a_duplicated_card(ten) -> None:
    state = ten.start(["R1", "B2"])
    broken = ten.arrange(state, market=("R1",))  # R1 both in the pile and the market
    assert violations(broken, ["R1", "B2"]) == ["cards are not each in exactly one place"]


def test_violations_reports_a_lost_card(ten) -> None:
    state = ten.start(["R1", "B2"])
    assert violations(state, ["R1", "B2", "G3"]) == ["cards are not each in exactly one place"]


def test_violations_reports_currency_tokens_not_adding_up(ten) -> None:
    state = ten.arrange(ten.start(["R1"]), supply_currency=41)
    assert violations(state, ["R1"]) == ["currency tokens add up to 51, not 50"]


def test_violations_reports_bust_tokens_not_adding_up(ten) -> None:
    state = ten.arrange(ten.start(["R1"]), seats={0: {"bust": 2}}, supply_bust=15)
    assert violations(state, ["R1"]) == ["bust tokens add up to 17, not 15"]


def test_violations_reports_a_player_over_the_cap(ten) -> None:
    state = ten.arrange(ten.start(["R1"]), seats={0: {"currency": 11}})
    assert violations(state, ["R1"]) == ["seat 0 holds 11 currency tokens"]


def test_violations_reports_a_non_number_card_in_the_market(ten) -> None:
    state = ten.arrange(ten.start(["R1"]), draw_pile=(), market=("R1", "W5"))
    assert violations(state, ["R1", "W5"]) == ["the market holds a card that is not a number card"]
