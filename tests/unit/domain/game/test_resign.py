"""Resigning (`resign`): allowed at any time and in every phase, the game's bot plays the
seat on at once, and the seat ranks below every seat that did not resign and never wins.

Ann is seat 0 and starts, Bob seat 1, Cid seat 2, Dee seat 3; everyone starts with 5
currency tokens. Actions go through `domain.bots.clock.play` (the engine, then the bots' moves:
that is where a resigned seat's decisions are made), with or without a clock.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from domain.bots.basic import basic_bot, bot_rng
from domain.bots.clock import play, start_clock, time_out
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.errors import RuleError
from domain.game.invariants import violations
from domain.game.legal import legal_actions, seat_actions
from domain.game.model import (
    AuctionWon,
    BankClock,
    Bid,
    BidPassed,
    BidPlaced,
    Buy,
    BuyDeclined,
    CardBought,
    CardDrawn,
    Clock,
    Decline,
    Draw,
    Event,
    FinalBuyStarted,
    GameFinished,
    GameState,
    Pass,
    Payment,
    Player,
    Reclaim,
    Resign,
    Result,
    Rules,
    SeatTakenOver,
    Stop,
    Stopped,
    TurnStarted,
)
from domain.game.results import final_results

T0 = 1_700_000_000.0
NAMES = ("Ann", "Bob", "Cid", "Dee", "Eve")
DRAW = Draw()
PASS = Pass()
DECLINE = Decline()
NUMBERS = Stop(take="numbers")
RESIGN = Resign()
BANK = BankClock(initial_seconds=60.0, increment_seconds=5.0, takeover_after=3)


def start(
    deck: list[str] | None = None,
    seats: int = 3,
    *,
    market: tuple[str, ...] = (),
    bots: tuple[int, ...] = (),
    seed: str = "resign",
    starting_seat: int | None = 0,
) -> GameState:
    """A game of humans (and `bots`) on a scripted deck, with a market laid out."""
    state, _ = new_game(
        [(NAMES[i], "basic" if i in bots else None) for i in range(seats)],
        seed,
        deck=deck,
        starting_seat=starting_seat,
    )
    return replace(state, market=market)


def resigned_by(seat: int, reason: str = "resigned") -> Event:
    return SeatTakenOver(seq=0, version=0, seat=seat, bot="basic", reason=reason)


def strip(events: list[Event]) -> list[Event]:
    return [replace(event, seq=0, version=0) for event in events]


def snapshot(state: GameState) -> GameState:
    return msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=GameState)


def refused(state: GameState, seat: int, action: Any, code: str) -> None:
    before = snapshot(state)
    with pytest.raises(RuleError) as info:
        play(state, seat, action, T0)
    assert info.value.code == code
    assert state == before


def resign(state: GameState, seat: int, now: float = T0) -> tuple[GameState, list[Event]]:
    """`seat` resigns; checks what every resignation does: one seat_taken_over (reason
    resigned) first, the seat marked, the events numbered on from the state, and the moves
    made for the seat after it exactly those of the basic bot on the public view."""
    after, events = play(state, seat, RESIGN, now)
    assert strip(events[:1]) == [resigned_by(seat)]
    assert [e.seq for e in events] == list(range(state.last_seq + 1, after.last_seq + 1))
    player = after.players[seat]
    assert (player.resigned, player.stand_in) == (True, "basic")
    assert player.taken_over == state.players[seat].taken_over  # not set by a resignation
    # what the bot did for the seat: the basic bot's choices, one after the other
    mine, mine_events = apply(state, seat, RESIGN)
    while to_act(mine) == seat:
        action = basic_bot(information_state(mine), seat, bot_rng(mine.seed, mine.version))
        mine, more = apply(mine, seat, action)
        mine_events += more
    assert events[: len(mine_events)] == mine_events
    assert to_act(after) != seat or after.phase == "finished"
    return after, events


def answer(state: GameState, now: float = T0) -> tuple[GameState, list[Event]]:
    """The seats that did not resign answer as the basic bot would, to the end."""
    events: list[Event] = []
    while (seat := to_act(state)) is not None:
        assert not state.players[seat].resigned
        action = basic_bot(information_state(state), seat, bot_rng(state.seed, state.version))
        now += 1.0
        state, more = play(state, seat, action, now)
        events += more
    return state, events


# ------------------------------------------------------------------ every phase


def test_resign_in_the_draw_phase_before_drawing() -> None:
    state = start(["R1", "B9", "G4", "O3"])
    state, events = resign(state, 0)
    # the bot plays Ann's turn: R1, B9 (10: the next number card would bust), stop, no buy
    assert strip(events) == [
        resigned_by(0),
        CardDrawn(seq=0, version=0, seat=0, card="R1", draw_pile_size=3),
        CardDrawn(seq=0, version=0, seat=0, card="B9", draw_pile_size=2),
        Stopped(
            seq=0, version=0, seat=0, take="numbers", cards=("R1", "B9"), to_discard=(), gains=()
        ),
        BuyDeclined(seq=0, version=0, seat=0),
        TurnStarted(seq=0, version=0, seat=1),
    ]
    assert (state.phase, to_act(state), state.players[0].cards) == ("draw", 1, ("R1", "B9"))


def test_resign_in_the_draw_phase_after_drawing() -> None:
    state = start(["R1", "B9", "G4", "O3"])
    state, _ = play(state, 0, DRAW, T0)
    state, events = resign(state, 0)
    assert strip(events) == [
        resigned_by(0),
        CardDrawn(seq=0, version=0, seat=0, card="B9", draw_pile_size=2),
        Stopped(
            seq=0, version=0, seat=0, take="numbers", cards=("R1", "B9"), to_discard=(), gains=()
        ),
        BuyDeclined(seq=0, version=0, seat=0),
        TurnStarted(seq=0, version=0, seat=1),
    ]
    assert to_act(state) == 1


def auction() -> GameState:
    """Ann drew W5: Bob bids first, then Cid, Ann (the drawer) last."""
    state = start(["W5", "R1", "B2", "G3"])
    state, _ = play(state, 0, DRAW, T0)
    assert state.auction is not None
    assert (state.auction.bidders, to_act(state)) == ((1, 2, 0), 1)
    return state


def test_resign_mid_auction_as_the_bidder_whose_chance_it_is() -> None:
    state, events = resign(auction(), 1)
    # not the last bidder: the basic bot bids its whole limit for W5 at once (3 x 1 point - 1)
    assert strip(events) == [resigned_by(1), BidPlaced(seq=0, version=0, seat=1, amount=2)]
    assert state.auction is not None
    assert (state.auction.turn, state.auction.high_bidder, to_act(state)) == (1, 1, 2)


def test_resign_mid_auction_as_a_bidder_waiting_for_their_chance() -> None:
    before = auction()
    state, events = resign(before, 2)
    assert strip(events) == [resigned_by(2)]  # nothing else moves: Bob's chance still
    assert state.auction == before.auction
    assert to_act(state) == 1
    state, events = play(state, 1, PASS, T0)  # Cid's chance comes: his bot takes it at once
    assert strip(events) == [
        BidPassed(seq=0, version=0, seat=1),
        BidPlaced(seq=0, version=0, seat=2, amount=2),  # its whole limit: Ann bids after it
    ]
    assert to_act(state) == 0


def test_resign_mid_auction_as_the_drawer() -> None:
    before = auction()
    state, events = resign(before, 0)
    assert strip(events) == [resigned_by(0)]
    assert state.auction == before.auction
    state, _ = play(state, 1, Bid(amount=2), T0)
    state, events = play(state, 2, PASS, T0)
    # Ann's chance, then the rest of her turn, are the bot's
    assert [type(e) for e in events[:4]] == [BidPassed, BidPassed, AuctionWon, CardDrawn]
    assert [e.seat for e in events[:2]] == [2, 0]
    assert events[2].seat == 1
    assert isinstance(events[-1], FinalBuyStarted)
    assert state.players[1].cards == ("W5",)
    assert state.players[0].cards == ("R1", "B2", "G3")
    assert (state.phase, to_act(state)) == ("final_buy", 1)


def test_resign_in_the_buy_phase() -> None:
    state = start(["R1", "B9", "G4"], market=("R2",))
    state, _ = play(state, 0, DRAW, T0)
    state, _ = play(state, 0, NUMBERS, T0)
    assert state.phase == "buy"
    state, events = resign(state, 0)
    assert strip(events) == [
        resigned_by(0),
        CardBought(seq=0, version=0, seat=0, card="R2", payment=Payment(currency=2)),
        TurnStarted(seq=0, version=0, seat=1),
    ]
    assert (state.players[0].cards, state.players[0].currency) == (("R1", "R2"), 3)


def final_round() -> GameState:
    """Ann drew the last card and declined her buy: the final buy round goes Bob, Cid, Ann;
    B3 is in the market."""
    state = start(["R1"], market=("B3",))
    state, _ = play(state, 0, DRAW, T0)
    state, _ = play(state, 0, NUMBERS, T0)
    state, events = play(state, 0, DECLINE, T0)
    assert strip(events)[-1] == FinalBuyStarted(seq=0, version=0, order=(1, 2, 0))
    return state


def test_resign_in_the_final_buy_round_as_the_seat_to_act() -> None:
    state, events = resign(final_round(), 1)
    assert strip(events) == [
        resigned_by(1),
        CardBought(seq=0, version=0, seat=1, card="B3", payment=Payment(currency=3)),
    ]
    assert (state.final_queue, to_act(state)) == ((2, 0), 2)
    state, events = answer(state)
    assert state.results is not None
    assert [(r.seat, r.rank, r.winner, r.resigned) for r in state.results] == [
        (0, 1, True, False),  # R1: 1 point
        (1, 3, False, True),  # B3: 1 point as well, but resigned
        (2, 2, False, False),
    ]


def test_resign_in_the_final_buy_round_as_a_seat_still_to_come() -> None:
    state, events = resign(final_round(), 0)
    assert strip(events) == [resigned_by(0)]
    assert (state.final_queue, to_act(state)) == ((1, 2, 0), 1)
    state, _ = play(state, 1, DECLINE, T0)
    state, events = play(state, 2, DECLINE, T0)
    assert state.phase == "finished"
    assert [type(e) for e in events] == [BuyDeclined, CardBought, GameFinished]
    assert (events[1].seat, events[1].card) == (0, "B3")  # Ann's last buy, by the bot
    results = events[-1].results
    assert results == state.results
    # Ann has the best score (2) and still ranks last; Bob and Cid share the win
    assert [(r.seat, r.score, r.rank, r.winner, r.resigned) for r in results] == [
        (0, 2, 3, False, True),
        (1, 0, 1, True, False),
        (2, 0, 1, True, False),
    ]


def test_resign_in_the_final_buy_round_after_ones_own_last_buy() -> None:
    state, _ = play(final_round(), 1, DECLINE, T0)
    state, events = resign(state, 1)
    assert strip(events) == [resigned_by(1)]
    assert to_act(state) == 2
    state, _ = answer(state)
    assert state.results is not None
    assert [(r.rank, r.resigned) for r in state.results] == [(1, False), (3, True), (2, False)]


def test_resign_in_every_phase_of_shuffled_games_by_any_seat() -> None:
    """Along shuffled four-seat games: at the first state of each phase, each seat in turn
    (whoever's decision it is) resigns; the game plays on to its end with the seat's
    decisions all made by the bot, and it ranks last."""
    tried: set[tuple[str, bool]] = set()
    for seed in ("p1", "p2", "p3"):
        state = start(seats=4, seed=seed, starting_seat=None)
        seen_phases: set[tuple[str, bool]] = set()
        while (seat := to_act(state)) is not None:
            key = (state.phase, state.drawn)
            if key not in seen_phases:
                seen_phases.add(key)
                for quitter in range(4):
                    after, _ = resign(state, quitter)
                    finished, events = answer(after)
                    assert finished.results is not None
                    result = finished.results[quitter]
                    assert (result.resigned, result.winner, result.rank) == (True, False, 4)
                    assert not [
                        e for e in events if isinstance(e, SeatTakenOver) and e.seat != quitter
                    ]
                    tried.add(key)
            action = basic_bot(information_state(state), seat, bot_rng(state.seed, state.version))
            state, _ = play(state, seat, action, T0)
    assert {("draw", False), ("draw", True), ("auction", True), ("buy", True)} <= tried
    assert ("final_buy", False) in tried


# ------------------------------------------------------------------ refusals


def test_resigning_twice_is_refused() -> None:
    state, _ = resign(auction(), 2)
    refused(state, 2, RESIGN, "illegal_action")
    refused(state, 2, Reclaim(), "illegal_action")
    with pytest.raises(RuleError) as info:
        apply(state, 2, RESIGN)
    assert info.value.code == "illegal_action"


def test_resigning_after_the_end_is_refused() -> None:
    state, _ = answer(final_round())
    assert state.phase == "finished"
    for seat in range(3):
        refused(state, seat, RESIGN, "game_finished")


def test_a_resigned_seat_cannot_act_for_itself_any_more() -> None:
    state, _ = resign(start(["R1", "B9", "G4", "O3"]), 1)  # not his turn
    state, _ = play(state, 0, DRAW, T0)
    state, _ = play(state, 0, NUMBERS, T0)
    state, events = play(state, 0, DECLINE, T0)
    # Bob's turn is the bot's, at once: the game waits on Cid
    assert [type(e) for e in events][:3] == [BuyDeclined, TurnStarted, CardDrawn]
    assert to_act(state) == 2
    refused(state, 1, DRAW, "not_your_turn")
    refused(state, 1, Buy(card="R1"), "not_your_turn")


def test_a_seat_taken_over_after_timeouts_may_resign() -> None:
    state = clocked(3)
    while state.players[0].stand_in is None:  # Ann lets three deadlines pass
        assert state.clock is not None
        assert state.clock.deadline is not None
        state, _ = time_out(state, state.clock.deadline)
    assert state.players[0].taken_over
    assert to_act(state) == 1
    state, events = resign(state, 0, T0 + 500.0)
    assert strip(events) == [resigned_by(0)]
    ann = state.players[0]
    assert (ann.stand_in, ann.taken_over, ann.resigned) == ("basic", True, True)
    state, _ = answer(state, T0 + 501.0)
    assert state.results is not None
    assert (state.results[0].rank, state.results[0].resigned) == (3, True)


def test_seat_actions_offer_resign_until_resigned_and_reclaim_while_taken_over() -> None:
    deck = ["R1", "B9", "G4", "O3", "R5", "B5", "G5", "O5", "R6", "B6"]
    state = start_clock(start(deck, 4, bots=(2,)), BANK, T0)
    view = information_state(state)
    assert [seat_actions(view, s) for s in range(4)] == [[RESIGN], [RESIGN], [], [RESIGN]]
    assert Resign() not in legal_actions(view, 0)  # the bots' choices never include it
    while state.players[0].stand_in is None:
        assert state.clock is not None
        assert state.clock.deadline is not None
        state, _ = time_out(state, state.clock.deadline)
    assert seat_actions(state, 0) == [Reclaim(), RESIGN]
    state, _ = resign(state, 1, T0 + 500.0)
    assert state.phase != "finished"
    assert [seat_actions(state, s) for s in range(4)] == [
        [Reclaim(), RESIGN],
        [],
        [],
        [RESIGN],
    ]
    state, _ = answer(state, T0 + 501.0)
    assert [seat_actions(state, s) for s in range(4)] == [[], [], [], []]


# ------------------------------------------------------------------ with a clock


def clocked(seats: int = 2, bots: tuple[int, ...] = ()) -> GameState:
    return start_clock(start(["R1", "B9", "G4", "O3"], seats, bots=bots), BANK, T0)


def test_resigning_on_ones_turn_ends_the_wait_on_the_seat() -> None:
    state, _ = resign(clocked(), 0, T0 + 10.0)
    assert state.clock == Clock(
        control=BANK,
        seat=1,
        since=T0 + 10.0,
        deadline=T0 + 70.0,
        banks=(55.0, 60.0),  # charged like a decision
        timeouts=(0, 0),
    )


def test_resigning_out_of_turn_leaves_the_running_clock_alone() -> None:
    before = clocked(3)
    state, events = resign(before, 2, T0 + 10.0)
    assert strip(events) == [resigned_by(2)]
    assert state.clock == before.clock
    # when Cid's turn comes, the bot plays it and the clock skips him
    state, _ = play(state, 0, DRAW, T0 + 11.0)
    state, _ = play(state, 0, NUMBERS, T0 + 12.0)
    state, _ = play(state, 0, DECLINE, T0 + 13.0)
    state, _ = play(state, 1, DRAW, T0 + 14.0)
    state, events = play(state, 1, Stop(take="currency"), T0 + 15.0)
    assert [(type(e), getattr(e, "seat", None)) for e in events][:3] == [
        (Stopped, 1),
        (TurnStarted, 2),
        (CardDrawn, 2),
    ]
    assert state.clock is not None
    assert (state.clock.seat, to_act(state)) == (0, 0)
    assert state.clock.banks[2] == 60.0  # never charged


def test_a_human_who_resigns_among_bots_ends_the_game_at_once() -> None:
    state = start_clock(start(seats=3, bots=(1, 2), seed="alone", starting_seat=0), BANK, T0)
    assert state.clock is not None
    assert state.clock.seat == 0
    state, events = resign(state, 0, T0 + 1.0)
    assert state.phase == "finished"
    assert isinstance(events[-1], GameFinished)
    assert state.clock is not None
    assert (state.clock.seat, state.clock.deadline) == (None, None)
    with pytest.raises(RuleError) as info:
        time_out(state, T0 + 10**6)
    assert info.value.code == "not_due"
    assert state.results is not None
    assert (state.results[0].rank, state.results[0].resigned) == (3, True)
    assert any(r.winner for r in state.results[1:])
    assert violations(state, [*start(seats=3, seed="alone").draw_pile]) == []


def test_a_one_player_game_resigned_has_no_winner() -> None:
    state = start(["R1", "R2", "W5", "B3"], seats=1)
    state, _ = resign(state, 0)
    assert state.results is not None
    assert [(r.rank, r.winner, r.resigned) for r in state.results] == [(1, False, True)]


# ------------------------------------------------------------------ results


def seat(n: int, cards: tuple[str, ...] = (), currency: int = 0, **flags: Any) -> Player:
    return Player(seat=n, name=NAMES[n], cards=cards, currency=currency, **flags)


def ranked(results: tuple[Result, ...]) -> list[tuple[int, int, int, bool, bool]]:
    return [(r.seat, r.score, r.rank, r.winner, r.resigned) for r in results]


def test_a_resigned_seat_ranks_below_every_other_and_never_wins() -> None:
    players = [
        seat(0, ("R1", "R2", "R3"), resigned=True, stand_in="basic"),  # the best score
        seat(1, ("B1",)),
        seat(2),
    ]
    assert ranked(final_results(players, Rules())) == [
        (0, 3, 3, False, True),
        (1, 1, 1, True, False),
        (2, 0, 2, False, False),
    ]


def test_several_resigned_seats_rank_among_themselves_by_the_usual_order() -> None:
    players = [
        seat(0, ("R1", "R2", "R3"), resigned=True),  # 3 points
        seat(1, ("B1",), currency=2, resigned=True),  # 1 point, 2 currency
        seat(2, ("G1",), currency=4, resigned=True),  # 1 point, 4 currency: above Bob
        seat(3),  # 0 points
        seat(4, ("O1", "O5"), currency=4, resigned=True),  # like Cid but more cards
    ]
    assert ranked(final_results(players, Rules())) == [
        (0, 3, 2, False, True),
        (1, 1, 5, False, True),
        (2, 1, 3, False, True),
        (3, 0, 1, True, False),
        (4, 1, 4, False, True),
    ]


def test_resigned_seats_tied_share_a_rank_and_nobody_above_them_is_skipped() -> None:
    players = [seat(0, ("R1",), resigned=True), seat(1, ("B1",), resigned=True), seat(2)]
    assert [(r.rank, r.winner) for r in final_results(players, Rules())] == [
        (2, False),
        (2, False),
        (1, True),
    ]


def test_when_every_seat_resigned_nobody_wins() -> None:
    players = [
        seat(0, ("R1", "R2"), resigned=True),
        seat(1, ("B1",), resigned=True),
        seat(2, ("G1",), currency=3, resigned=True),
    ]
    results = final_results(players, Rules())
    assert ranked(results) == [
        (0, 2, 1, False, True),
        (1, 1, 3, False, True),
        (2, 1, 2, False, True),
    ]
    assert not any(r.winner for r in results)


def test_a_seat_taken_over_after_timeouts_is_ranked_as_usual() -> None:
    players = [seat(0, ("R1", "R2"), taken_over=True, stand_in="basic"), seat(1, ("B1",))]
    assert ranked(final_results(players, Rules())) == [
        (0, 2, 1, True, False),
        (1, 1, 2, False, False),
    ]
