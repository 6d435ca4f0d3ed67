"""rules.md 3.4: the buy phase (price, payment, the minimal-payment rule, twins).

Every test sets up Ann's (seat 0) buy phase in a two-player game with `buy_phase`: her
tokens and collection, and the market. Bob (seat 1) holds his starting 5 currency tokens,
so the supply holds 50 - 5 - Ann's currency tokens and 15 - Ann's bust tokens.
"""

from __future__ import annotations

import pytest

from domain.game.invariants import violations
from domain.game.legal import legal_actions
from domain.game.model import (
    Buy,
    BuyDeclined,
    CardBought,
    Decline,
    Draw,
    Payment,
    Stop,
    TurnStarted,
)


def buy_phase(ten, *, currency=5, bust=0, cards=(), market=()):
    state = ten.start(["G8", "O8"])
    return ten.arrange(
        state,
        seats={0: {"currency": currency, "bust": bust, "cards": tuple(cards)}},
        market=tuple(market),
        phase="buy",
        drawn=True,
    )


def test_buy_phase_follows_a_numbers_stop(ten) -> None:
    state, _ = ten.play(ten.start(["R1", "G9"]), 0, Draw(), Stop(take="numbers"))
    assert (state.phase, state.active_seat) == ("buy", 0)


def test_buy_pays_the_card_number_in_currency_tokens(ten) -> None:
    state = buy_phase(ten, currency=5, cards=("R1",), market=("R3", "B7"))
    state, events = ten.play(state, 0, Buy(card="R3", payment=Payment(currency=3)))
    assert [(p.currency, p.bust, p.cards) for p in state.players] == [
        (2, 0, ("R1", "R3")),
        (5, 0, ()),
    ]
    assert state.market == ("B7",)
    assert (state.supply_currency, state.supply_bust) == (43, 15)
    assert ten.strip(events) == [
        ten.expect(CardBought, seat=0, card="R3", payment=Payment(currency=3, bust=0, cards=())),
        ten.expect(TurnStarted, seat=1),
    ]
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 1, False)


def test_only_one_card_is_bought_per_buy_phase(ten) -> None:
    state = buy_phase(ten, currency=5, market=("R1", "B1"))
    state, _ = ten.play(state, 0, Buy(card="R1", payment=Payment(currency=1)))
    ten.refuse(state, 0, Buy(card="B1", payment=Payment(currency=1)), "not_your_turn")


def test_a_bust_token_pays_three_and_the_excess_is_lost(ten) -> None:
    state = buy_phase(ten, currency=0, bust=1, market=("B2",))
    assert (state.supply_currency, state.supply_bust) == (45, 14)
    state, events = ten.play(state, 0, Buy(card="B2", payment=Payment(bust=1)))
    assert [(p.currency, p.bust, p.cards) for p in state.players] == [(0, 0, ("B2",)), (5, 0, ())]
    assert (state.supply_currency, state.supply_bust) == (45, 15)
    assert ten.of_type(events, CardBought)[0].payment == Payment(currency=0, bust=1, cards=())


def test_two_bust_tokens_for_a_four_are_minimal(ten) -> None:
    # 6 >= 4 and one bust token alone (3) falls short: valid, 2 lost
    state = buy_phase(ten, currency=5, bust=2, market=("R4",))
    state, _ = ten.play(state, 0, Buy(card="R4", payment=Payment(bust=2)))
    assert (state.players[0].currency, state.players[0].bust) == (5, 0)
    assert state.supply_bust == 15


def test_collection_cards_pay_one_each_wilds_included_and_go_to_the_discard_pile(ten) -> None:
    state = buy_phase(ten, currency=1, cards=("O5", "W3", "G1", "B2"), market=("R4",))
    state, events = ten.play(
        state, 0, Buy(card="R4", payment=Payment(currency=1, cards=("W3", "G1", "B2")))
    )
    assert [(p.currency, p.cards) for p in state.players] == [(0, ("O5", "R4")), (5, ())]
    assert state.discard == ("W3", "G1", "B2")
    assert state.market == ()
    assert state.supply_currency == 45
    assert ten.of_type(events, CardBought)[0].payment == Payment(
        currency=1, bust=0, cards=("W3", "G1", "B2")
    )


def test_payment_may_mix_currency_bust_tokens_and_cards(ten) -> None:
    # price 5 = 1 currency + 1 bust token (3) + 1 card
    state = buy_phase(ten, currency=1, bust=1, cards=("G1", "B2"), market=("R5",))
    assert (state.supply_currency, state.supply_bust) == (44, 14)
    state, _ = ten.play(
        state, 0, Buy(card="R5", payment=Payment(currency=1, bust=1, cards=("G1",)))
    )
    assert [(p.currency, p.bust, p.cards) for p in state.players] == [
        (0, 0, ("B2", "R5")),
        (5, 0, ()),
    ]
    assert state.discard == ("G1",)
    assert (state.supply_currency, state.supply_bust) == (45, 15)
    assert violations(state, ten.deck_of(state)) == []


def test_buying_one_of_two_identical_market_cards_leaves_the_other(ten) -> None:
    state = buy_phase(ten, market=("R3", "B2", "R3"))
    state, _ = ten.play(state, 0, Buy(card="R3", payment=Payment(currency=3)))
    assert sorted(state.market) == ["B2", "R3"]
    assert state.players[0].cards == ("R3",)


# Ann: 5 currency, 2 bust tokens, collection G1 B2 O3
@pytest.mark.parametrize(
    ("card", "payment", "code"),
    [
        ("R3", Payment(currency=4), "payment_not_minimal"),
        ("R3", Payment(currency=1, bust=1), "payment_not_minimal"),
        ("R3", Payment(bust=2), "payment_not_minimal"),
        ("R2", Payment(currency=1, bust=1), "payment_not_minimal"),
        ("R2", Payment(bust=1, cards=("G1",)), "payment_not_minimal"),
        ("R3", Payment(currency=3, cards=("G1",)), "payment_not_minimal"),
        ("R5", Payment(currency=4), "insufficient_payment"),
        ("R9", Payment(currency=5, bust=1), "insufficient_payment"),
        ("R9", Payment(currency=5, cards=("G1", "B2", "O3")), "insufficient_payment"),
        ("R3", Payment(), "insufficient_payment"),
        ("R3", Payment(currency=6), "payment_not_held"),
        ("R3", Payment(bust=3), "payment_not_held"),
        ("R3", Payment(currency=2, cards=("R7",)), "payment_not_held"),
        ("R3", Payment(currency=1, cards=("G1", "G1")), "payment_not_held"),
        ("R3", Payment(currency=2, cards=("Z1",)), "unknown_card"),
    ],
)
def test_payment_is_checked(ten, card: str, payment: Payment, code: str) -> None:
    state = buy_phase(
        ten, currency=5, bust=2, cards=("G1", "B2", "O3"), market=("R2", "R3", "R5", "R9")
    )
    ten.refuse(state, 0, Buy(card=card, payment=payment), code)


def test_exact_mixed_payment_is_minimal(ten) -> None:
    state = buy_phase(ten, currency=5, bust=2, cards=("G1", "B2", "O3"), market=("R9",))
    # 9 = 2 currency + 2 bust tokens + 1 card
    state, _ = ten.play(
        state, 0, Buy(card="R9", payment=Payment(currency=2, bust=2, cards=("O3",)))
    )
    ann = state.players[0]
    assert (ann.currency, ann.bust, ann.cards) == (3, 0, ("G1", "B2", "R9"))


def test_a_twin_of_a_collection_card_cannot_be_bought(ten) -> None:
    state = buy_phase(ten, currency=5, cards=("R3",), market=("R3", "B3"))
    ten.refuse(state, 0, Buy(card="R3", payment=Payment(currency=3)), "duplicate_card")
    ten.refuse(state, 0, Buy(card="R3"), "duplicate_card")


def test_a_card_cannot_pay_for_its_own_twin(ten) -> None:
    # the twin check is made against the collection before payment
    state = buy_phase(ten, currency=0, cards=("R3", "B1", "B2"), market=("R3",))
    ten.refuse(
        state, 0, Buy(card="R3", payment=Payment(cards=("R3", "B1", "B2"))), "duplicate_card"
    )


def test_a_wild_card_in_the_collection_is_no_twin(ten) -> None:
    state = buy_phase(ten, currency=5, cards=("R#", "W3", "W#"), market=("R3",))
    state, _ = ten.play(state, 0, Buy(card="R3", payment=Payment(currency=3)))
    assert state.players[0].cards == ("R#", "W3", "W#", "R3")


@pytest.mark.parametrize("card", ["B9", "$3", "W3", "R#"])
def test_a_card_that_is_not_in_the_market_cannot_be_bought(ten, card: str) -> None:
    state = buy_phase(ten, currency=5, market=("R3",))
    ten.refuse(state, 0, Buy(card=card, payment=Payment(currency=3)), "card_not_in_market")


@pytest.mark.parametrize("card", ["X1", "R0", "r3", ""])
def test_an_unknown_card_code_is_refused(ten, card: str) -> None:
    state = buy_phase(ten, currency=5, market=("R3",))
    ten.refuse(state, 0, Buy(card=card, payment=Payment(currency=3)), "unknown_card")


def test_without_a_payment_the_service_pays_with_tokens_first(ten) -> None:
    # price 4 with 5 currency and 1 bust token: 1 currency + 1 bust token, no card
    state = buy_phase(ten, currency=5, bust=1, cards=("G1", "B2", "O3"), market=("R4",))
    state, events = ten.play(state, 0, Buy(card="R4"))
    assert ten.of_type(events, CardBought)[0].payment == Payment(currency=1, bust=1, cards=())
    ann = state.players[0]
    assert (ann.currency, ann.bust, ann.cards) == (
        4,
        0,
        ("G1", "B2", "O3", "R4"),
    )


def test_without_a_payment_a_bust_token_with_excess_comes_before_cards(ten) -> None:
    state = buy_phase(ten, currency=0, bust=1, cards=("G1", "B2"), market=("R2",))
    state, events = ten.play(state, 0, Buy(card="R2"))
    assert ten.of_type(events, CardBought)[0].payment == Payment(currency=0, bust=1, cards=())
    assert state.players[0].cards == ("G1", "B2", "R2")


def test_without_a_payment_cards_make_up_what_the_tokens_lack(ten) -> None:
    # price 3 with 1 currency: 1 currency and both cards
    state = buy_phase(ten, currency=1, cards=("G1", "B2"), market=("R3",))
    state, events = ten.play(state, 0, Buy(card="R3"))
    payment = ten.of_type(events, CardBought)[0].payment
    assert (payment.currency, payment.bust, sorted(payment.cards)) == (1, 0, ["B2", "G1"])
    ann = state.players[0]
    assert (ann.currency, ann.cards) == (0, ("R3",))
    assert sorted(state.discard) == ["B2", "G1"]


def test_without_a_payment_a_price_that_cannot_be_paid_is_refused(ten) -> None:
    state = buy_phase(ten, currency=1, bust=0, cards=("G1",), market=("R3",))
    ten.refuse(state, 0, Buy(card="R3"), "insufficient_payment")


def test_declining_ends_the_buy_phase(ten) -> None:
    state = buy_phase(ten, currency=5, market=("R3",))
    state, events = ten.play(state, 0, Decline())
    assert ten.strip(events) == [
        ten.expect(BuyDeclined, seat=0),
        ten.expect(TurnStarted, seat=1),
    ]
    assert state.market == ("R3",)
    assert [(p.currency, p.cards) for p in state.players] == [(5, ()), (5, ())]
    assert (state.phase, state.active_seat) == ("draw", 1)


def test_legal_actions_list_each_buyable_card_once_with_a_valid_payment(ten) -> None:
    # 2 currency, collection R3: B2 (2 currency) and O1 (1 currency) can be bought;
    # R3 is a twin, G4 and B9 cost more than 2 tokens + 1 card
    state = buy_phase(ten, currency=2, cards=("R3",), market=("R3", "B2", "B2", "G4", "B9", "O1"))
    actions = legal_actions(state, 0)
    assert actions == [
        Decline(),
        Buy(card="B2", payment=Payment(currency=2, bust=0, cards=())),
        Buy(card="O1", payment=Payment(currency=1, bust=0, cards=())),
    ]
    for action in actions:
        ten.play(state, 0, action)  # each one is accepted
    assert legal_actions(state, 1) == []


def test_legal_actions_offer_card_payments(ten) -> None:
    state = buy_phase(ten, currency=0, cards=("G1", "G2"), market=("R2", "R3"))
    decline, buy = legal_actions(state, 0)
    assert decline == Decline()
    assert isinstance(buy, Buy)
    assert buy.card == "R2"
    assert buy.payment is not None
    assert (buy.payment.currency, buy.payment.bust, sorted(buy.payment.cards)) == (
        0,
        0,
        ["G1", "G2"],
    )
    state, _ = ten.play(state, 0, buy)
    assert state.players[0].cards == ("R2",)
