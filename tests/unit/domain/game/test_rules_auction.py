"""rules.md 3.5: the auction of a drawn wild card (and 3.1: the turn goes on after it).

Ann is seat 0 and starts, Bob seat 1, Cid seat 2. Everyone starts with 5 currency tokens.
"""

from __future__ import annotations

import pytest

from domain.game.legal import legal_actions
from domain.game.model import (
    AuctionStarted,
    AuctionWon,
    Bid,
    BidPassed,
    BidPlaced,
    CardDrawn,
    Decline,
    Draw,
    Pass,
    Stop,
    Stopped,
    TokenPayment,
    TurnStarted,
    WildDiscarded,
)

DRAW = Draw()
PASS = Pass()
NUMBERS = Stop(take="numbers")
CURRENCY = Stop(take="currency")


def auction_for_bob(ten, currency: int = 5, bust: int = 0, cards: tuple[str, ...] = ()):
    """Two players; Ann draws W5 at once; Bob (first bidder) holds the given tokens."""
    state = ten.arrange(
        ten.start(["W5", "R1", "B2"]),
        seats={1: {"currency": currency, "bust": bust, "cards": cards}},
    )
    state, _ = ten.play(state, 0, DRAW)
    return state


def test_a_drawn_wild_starts_an_auction_and_stays_out_of_the_tableau(ten) -> None:
    state = ten.start(["R1", "W5", "B2", "G3"], players=3)
    state, events = ten.play(state, 0, DRAW, DRAW)
    assert state.tableau == ("R1",)
    assert state.phase == "auction"
    assert state.auction is not None
    assert (state.auction.card, state.auction.bidders) == ("W5", (1, 2, 0))
    assert (state.auction.high_bid, state.auction.high_bidder) == (0, None)
    assert state.draw_pile == ("B2", "G3")
    assert ten.strip(events[1:]) == [
        ten.expect(CardDrawn, seat=0, card="W5", draw_pile_size=2),
        ten.expect(AuctionStarted, card="W5", bidders=(1, 2, 0)),
    ]
    assert legal_actions(state, 1) == [PASS] + [
        Bid(amount=n, payment=TokenPayment(currency=n, bust=0)) for n in range(1, 6)
    ]
    assert legal_actions(state, 0) == []
    assert legal_actions(state, 2) == []


def test_bidding_order_is_left_of_the_active_player_first_and_the_active_player_last(ten) -> None:
    # Bob (seat 1) is active: Cid bids first, then Ann, then Bob; one chance each
    state = ten.start(["W5", "R1"], players=3, starting_seat=1)
    state, _ = ten.play(state, 1, DRAW)
    assert state.auction is not None
    assert state.auction.bidders == (2, 0, 1)
    ten.refuse(state, 0, Bid(amount=1), "not_your_turn")
    ten.refuse(state, 1, Bid(amount=1), "not_your_turn")
    state, events = ten.play(state, 2, PASS)
    ten.refuse(state, 2, Bid(amount=1), "not_your_turn")  # Cid had his chance
    state, more = ten.play(state, 0, Bid(amount=2))
    events += more
    ten.refuse(state, 0, Bid(amount=3), "not_your_turn")
    state, more = ten.play(state, 1, Bid(amount=3))
    events += more
    assert ten.strip(events) == [
        ten.expect(BidPassed, seat=2),
        ten.expect(BidPlaced, seat=0, amount=2),
        ten.expect(BidPlaced, seat=1, amount=3),
        ten.expect(
            AuctionWon, seat=1, card="W5", amount=3, payment=TokenPayment(currency=3, bust=0)
        ),
    ]
    # Bob pays 3; Ann, outbid, pays nothing; Bob's turn goes on
    assert [(p.currency, p.cards) for p in state.players] == [(5, ()), (2, ("W5",)), (5, ())]
    assert state.supply_currency == 35 + 3
    assert (state.phase, state.auction, state.active_seat, state.drawn) == ("draw", None, 1, True)


def test_the_highest_bid_wins_even_when_the_active_player_passes(ten) -> None:
    state = auction_for_bob(ten)
    state, events = ten.run(state, (1, Bid(amount=4)), (0, PASS))
    assert [(p.currency, p.cards) for p in state.players] == [(5, ()), (1, ("W5",))]
    assert state.supply_currency == 44
    assert (state.phase, state.active_seat, state.drawn, state.tableau) == ("draw", 0, True, ())
    assert ten.strip(events[-1:]) == [
        ten.expect(
            AuctionWon, seat=1, card="W5", amount=4, payment=TokenPayment(currency=4, bust=0)
        )
    ]


@pytest.mark.parametrize("amount", [0, -1])
def test_a_bid_must_be_at_least_one(ten, amount: int) -> None:
    ten.refuse(auction_for_bob(ten), 1, Bid(amount=amount), "bid_too_low")


def test_a_bid_must_be_strictly_higher_than_the_highest_bid(ten) -> None:
    state = ten.start(["W5", "R1"], players=3)
    state, _ = ten.play(state, 0, DRAW)
    state, _ = ten.play(state, 1, Bid(amount=3))
    ten.refuse(state, 2, Bid(amount=3), "bid_too_low")
    ten.refuse(state, 2, Bid(amount=2), "bid_too_low")
    assert legal_actions(state, 2) == [
        PASS,
        Bid(amount=4, payment=TokenPayment(currency=4, bust=0)),
        Bid(amount=5, payment=TokenPayment(currency=5, bust=0)),
    ]
    state, _ = ten.play(state, 2, Bid(amount=4))
    assert state.auction is not None
    assert (state.auction.high_bid, state.auction.high_bidder) == (4, 2)


def test_a_bid_is_at_most_the_bidding_power(ten) -> None:
    # 5 currency + 3 x 1 bust token = 8
    state = auction_for_bob(ten, currency=5, bust=1)
    ten.refuse(state, 1, Bid(amount=9), "bid_too_high")
    state, events = ten.run(state, (1, Bid(amount=8)), (0, PASS))
    assert ten.of_type(events, AuctionWon)[0].payment == TokenPayment(currency=5, bust=1)
    assert [(p.currency, p.bust) for p in state.players] == [(5, 0), (0, 0)]
    assert (state.supply_currency, state.supply_bust) == (45, 15)


def test_cards_cannot_be_spent_in_an_auction(ten) -> None:
    # Bob has no tokens but three cards: his bidding power is 0
    state = auction_for_bob(ten, currency=0, bust=0, cards=("R1", "B2", "G3"))
    ten.refuse(state, 1, Bid(amount=1), "bid_too_high")
    assert legal_actions(state, 1) == [PASS]


def test_the_winner_pays_with_the_tokens_named(ten) -> None:
    state = auction_for_bob(ten, currency=5, bust=2)
    assert (state.supply_currency, state.supply_bust) == (40, 13)
    payment = TokenPayment(currency=1, bust=1)
    state, events = ten.run(state, (1, Bid(amount=4, payment=payment)), (0, PASS))
    assert ten.of_type(events, AuctionWon)[0].payment == payment
    assert [(p.currency, p.bust, p.cards) for p in state.players] == [
        (5, 0, ()),
        (4, 1, ("W5",)),
    ]
    assert (state.supply_currency, state.supply_bust) == (41, 14)


def test_a_named_bust_token_may_exceed_the_bid_and_the_excess_is_lost(ten) -> None:
    state = auction_for_bob(ten, currency=5, bust=2)
    payment = TokenPayment(currency=0, bust=1)
    state, events = ten.run(state, (1, Bid(amount=2, payment=payment)), (0, PASS))
    assert ten.of_type(events, AuctionWon)[0].payment == payment
    assert [(p.currency, p.bust) for p in state.players] == [(5, 0), (5, 1)]
    assert (state.supply_currency, state.supply_bust) == (40, 14)


@pytest.mark.parametrize(
    ("amount", "currency", "bust", "code"),
    [
        (3, 0, 3, "payment_not_held"),  # Bob holds 2 bust tokens
        (3, 6, 0, "payment_not_held"),  # Bob holds 5 currency tokens
        (4, 3, 0, "insufficient_payment"),
        (4, 0, 1, "insufficient_payment"),
        (3, 1, 1, "payment_not_minimal"),  # 4: the currency token is not needed
        (2, 2, 1, "payment_not_minimal"),
        (2, 0, 2, "payment_not_minimal"),  # 6: one bust token alone covers 2
    ],
)
def test_named_bid_payment_is_checked(ten, amount, currency, bust, code) -> None:
    state = auction_for_bob(ten, currency=5, bust=2)
    ten.refuse(
        state, 1, Bid(amount=amount, payment=TokenPayment(currency=currency, bust=bust)), code
    )


@pytest.mark.parametrize(
    ("currency", "bust", "amount", "paid"),
    [
        (5, 1, 4, (1, 1)),  # exact; the mix with the most bust tokens
        (0, 1, 2, (0, 1)),  # only one way: a bust token, excess 1 lost
        (6, 2, 6, (0, 2)),  # exact with 2 bust tokens rather than 6 currency
        (2, 1, 3, (0, 1)),
        (5, 0, 5, (5, 0)),
        (2, 2, 5, (2, 1)),  # exact beats 2 bust tokens (excess 1)
        (1, 2, 5, (0, 2)),  # no exact mix: 2 bust tokens, excess 1 lost
        (4, 3, 7, (1, 2)),
    ],
)
def test_automatic_payment_least_excess_then_most_bust_tokens(
    ten, currency, bust, amount, paid
) -> None:
    state = auction_for_bob(ten, currency=currency, bust=bust)
    supply = (state.supply_currency, state.supply_bust)
    state, events = ten.run(state, (1, Bid(amount=amount)), (0, PASS))
    assert ten.of_type(events, AuctionWon)[0].payment == TokenPayment(
        currency=paid[0], bust=paid[1]
    )
    assert (state.players[1].currency, state.players[1].bust) == (
        currency - paid[0],
        bust - paid[1],
    )
    assert (state.supply_currency, state.supply_bust) == (supply[0] + paid[0], supply[1] + paid[1])


def test_when_everyone_passes_the_wild_goes_to_the_discard_pile(ten) -> None:
    state = ten.start(["R1", "W5", "B2"])
    state, _ = ten.play(state, 0, DRAW, DRAW)
    state, events = ten.run(state, (1, PASS), (0, PASS))
    assert ten.strip(events) == [
        ten.expect(BidPassed, seat=1),
        ten.expect(BidPassed, seat=0),
        ten.expect(WildDiscarded, card="W5"),
    ]
    assert state.discard == ("W5",)
    assert state.tableau == ("R1",)
    assert [(p.currency, p.cards) for p in state.players] == [(5, ()), (5, ())]
    assert (state.phase, state.auction, state.active_seat, state.drawn) == ("draw", None, 0, True)


def test_after_an_auction_the_same_player_goes_on_and_may_draw(ten) -> None:
    state, _ = ten.play(ten.start(["W5", "R1", "B2"]), 0, DRAW)
    state, _ = ten.run(state, (1, PASS), (0, PASS))
    assert legal_actions(state, 0) == [DRAW, NUMBERS, CURRENCY]
    state, _ = ten.play(state, 0, DRAW)
    assert state.tableau == ("R1",)


def test_after_an_auction_the_player_may_stop_with_an_empty_tableau(ten) -> None:
    state, _ = ten.play(ten.start(["W5", "R1", "B2"]), 0, DRAW)
    state, _ = ten.run(state, (1, Bid(amount=1)), (0, PASS))
    state, events = ten.play(state, 0, NUMBERS)
    assert ten.strip(events) == [
        ten.expect(Stopped, seat=0, take="numbers", cards=(), to_discard=(), gains=())
    ]
    assert (state.phase, state.active_seat) == ("buy", 0)
    state, events = ten.play(state, 0, Decline())
    assert (state.phase, state.active_seat) == ("draw", 1)


def test_after_an_auction_a_currency_stop_with_an_empty_tableau_ends_the_turn(ten) -> None:
    state, _ = ten.play(ten.start(["W5", "R1", "B2"]), 0, DRAW)
    state, _ = ten.run(state, (1, PASS), (0, PASS))
    state, events = ten.play(state, 0, CURRENCY)
    assert ten.strip(events) == [
        ten.expect(Stopped, seat=0, take="currency", cards=(), to_discard=(), gains=()),
        ten.expect(TurnStarted, seat=1),
    ]
    assert [p.currency for p in state.players] == [5, 5]


def test_a_wild_never_busts_the_tableau(ten) -> None:
    # R9 then W9: a wild is not a number card in the tableau, no bust
    state, _ = ten.play(ten.start(["R9", "W9", "B1"]), 0, DRAW, DRAW)
    assert state.phase == "auction"
    assert state.tableau == ("R9",)
    assert state.players[0].bust == 0


def test_in_a_one_player_game_the_active_player_is_the_only_bidder(ten) -> None:
    state = ten.start(["W#", "R1"], players=1)
    state, events = ten.play(state, 0, DRAW)
    assert state.auction is not None
    assert state.auction.bidders == (0,)
    state, more = ten.play(state, 0, Bid(amount=2))
    events += more
    assert ten.strip(events) == [
        ten.expect(CardDrawn, seat=0, card="W#", draw_pile_size=1),
        ten.expect(AuctionStarted, card="W#", bidders=(0,)),
        ten.expect(BidPlaced, seat=0, amount=2),
        ten.expect(
            AuctionWon, seat=0, card="W#", amount=2, payment=TokenPayment(currency=2, bust=0)
        ),
    ]
    assert (state.players[0].currency, state.players[0].cards) == (3, ("W#",))
    assert state.supply_currency == 47
    assert (state.phase, state.active_seat, state.drawn) == ("draw", 0, True)


def test_one_player_passing_discards_the_wild(ten) -> None:
    state, _ = ten.play(ten.start(["R#", "R1"], players=1), 0, DRAW)
    state, events = ten.play(state, 0, PASS)
    assert ten.strip(events) == [
        ten.expect(BidPassed, seat=0),
        ten.expect(WildDiscarded, card="R#"),
    ]
    assert state.discard == ("R#",)


def test_pass_outside_an_auction_is_an_illegal_action(ten) -> None:
    state = ten.start(["R1", "B2"])
    ten.refuse(state, 0, PASS, "illegal_action")
    state, _ = ten.play(state, 0, DRAW)
    ten.refuse(state, 0, PASS, "illegal_action")
    ten.refuse(state, 0, Bid(amount=1), "illegal_action")
    state, _ = ten.play(state, 0, NUMBERS)
    ten.refuse(state, 0, PASS, "illegal_action")  # a buy is declined, not passed
