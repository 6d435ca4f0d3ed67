"""Turn clocks (`domain.bots.clock`): banks and increments, deadline clocks, the auction's
deadlines, timeouts, takeover after N consecutive timeouts and reclaiming.

Time is injected: every call takes `now` (unix seconds) and nothing sleeps. The games
start at T0, an absolute server time, so that a deadline visibly is one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from domain.bots.basic import basic_bot, bot_rng, random_bot
from domain.bots.clock import earliest_deadline, play, remaining, start_clock, time_out
from domain.bots.simulation import play_bots
from domain.game.cards import deck_for
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.errors import RuleError
from domain.game.invariants import violations
from domain.game.model import (
    AuctionStarted,
    BankClock,
    Bid,
    BidPassed,
    BidPlaced,
    BuyDeclined,
    CardDrawn,
    Clock,
    DeadlineClock,
    Decline,
    Draw,
    Event,
    GameFinished,
    GameState,
    Pass,
    Reclaim,
    Resign,
    SeatReclaimed,
    SeatTakenOver,
    Stop,
    TimeControl,
    TimedOut,
)
from domain.game.replay import rebuild
from domain.game.rng import SeededRandom
from domain.game.views import public_view

T0 = 1_700_000_000.0  # an absolute server time (unix seconds)
BANK = BankClock(initial_seconds=60.0, increment_seconds=5.0, takeover_after=3)
DAY = DeadlineClock(hours=24.0, takeover_after=3)
NAMES = ("Ann", "Bob", "Cid", "Dee", "Eve")
DRAW = Draw()
PASS = Pass()
DECLINE = Decline()
NUMBERS = Stop(take="numbers")
# the basic bot draws R1, R2, R3 and B1 (every draw safe), then stops
SAFE_DECK = ["R1", "R2", "R3", "B1", "B2", "B3", "G1", "G2", "G3", "O1", "O2", "O3"]


def game(
    deck: list[str] | None = None,
    seats: int = 2,
    *,
    bots: tuple[int, ...] = (),
    starting_seat: int | None = 0,
    control: TimeControl = BANK,
    now: float = T0,
    seed: str = "clock",
    takeover_bot: str = "basic",
) -> tuple[GameState, list[Event]]:
    """A new game (a scripted deck, or shuffled from `seed`), its bots' first moves and
    its clock started at `now`, as the lobby starts one; the state and every event."""
    state, events = new_game(
        [(NAMES[i], "basic" if i in bots else None) for i in range(seats)],
        seed,
        deck=deck,
        starting_seat=starting_seat,
    )
    state = replace(state, takeover_bot=takeover_bot)
    state, more = play_bots(state)
    return start_clock(state, control, now), events + more


def clock_of(state: GameState) -> Clock:
    assert state.clock is not None
    return state.clock


def deadline_of(state: GameState) -> float:
    deadline = clock_of(state).deadline
    assert deadline is not None
    return deadline


def strip(events: list[Event]) -> list[Event]:
    return [replace(event, seq=0, version=0) for event in events]


def check_numbering(before: GameState, events: list[Event], after: GameState) -> None:
    """The events continue the log: seq +1 each from the state's last, versions never go
    down and end at the new state's version."""
    assert [e.seq for e in events] == list(range(before.last_seq + 1, after.last_seq + 1))
    versions = [e.version for e in events]
    assert versions == sorted(versions)
    assert before.version < versions[0]
    assert versions[-1] == after.version


def basic_move(state: GameState, seat: int) -> Any:
    """What the basic bot would do for `seat` now, as time_out must choose it."""
    return basic_bot(information_state(state), seat, bot_rng(state.seed, state.version))


def check_clock(state: GameState) -> None:
    """The clock runs for the seat the game waits on, a human one, until the end."""
    clock = clock_of(state)
    seat = to_act(state)
    assert clock.seat == seat
    assert (clock.deadline is None) == (seat is None) == (state.phase == "finished")
    if seat is not None:
        player = state.players[seat]
        assert (player.bot, player.stand_in) == (None, None)
    assert all(bank >= 0 for bank in clock.banks)


# ------------------------------------------------------------------ bank clocks


def test_a_bank_clock_starts_full_for_every_seat_and_runs_for_the_seat_to_act() -> None:
    state, _ = game(SAFE_DECK, 3, starting_seat=1)
    assert state.clock == Clock(
        control=BANK,
        seat=1,
        since=T0,
        deadline=T0 + 60.0,
        banks=(60.0, 60.0, 60.0),
        timeouts=(0, 0, 0),
    )


def test_the_deadline_is_an_absolute_server_time() -> None:
    later = T0 + 12_345.25
    early, _ = game(SAFE_DECK, now=T0)
    late, _ = game(SAFE_DECK, now=later)
    assert deadline_of(early) == T0 + 60.0
    assert deadline_of(late) == later + 60.0
    # a decision at t waits for the next with t + the bank left, not with a duration
    state, _ = play(early, 0, DRAW, T0 + 20.5)
    assert deadline_of(state) == T0 + 20.5 + (60.0 - 20.5 + 5.0)
    assert deadline_of(state) == T0 + 65.0


def test_a_decision_charges_the_time_it_took_and_adds_the_increment() -> None:
    state, _ = game(SAFE_DECK)
    state, _ = play(state, 0, DRAW, T0 + 20.0)  # 20 s of Ann's 60, +5
    clock = clock_of(state)
    assert (clock.seat, clock.since, clock.banks) == (0, T0 + 20.0, (45.0, 60.0))
    assert clock.deadline == T0 + 20.0 + 45.0
    state, _ = play(state, 0, NUMBERS, T0 + 30.0)  # 10 s more, +5: her buy phase next
    clock = clock_of(state)
    assert (state.phase, clock.seat, clock.banks) == ("buy", 0, (40.0, 60.0))
    state, _ = play(state, 0, DECLINE, T0 + 31.0)  # 1 s, +5: Bob's turn, his bank full
    clock = clock_of(state)
    assert (clock.seat, clock.since, clock.deadline) == (1, T0 + 31.0, T0 + 91.0)
    assert clock.banks == (44.0, 60.0)


def test_an_increment_can_grow_a_bank_above_its_start() -> None:
    state, _ = game(SAFE_DECK)
    state, _ = play(state, 0, DRAW, T0 + 1.0)
    state, _ = play(state, 0, DRAW, T0 + 2.0)
    assert clock_of(state).banks == (68.0, 60.0)
    assert deadline_of(state) == T0 + 2.0 + 68.0


@pytest.mark.parametrize("increment", [5.0, 0.0])
def test_an_overdrawn_bank_is_empty_before_the_increment(increment: float) -> None:
    control = BankClock(initial_seconds=60.0, increment_seconds=increment)
    state, _ = game(SAFE_DECK, control=control)
    # Ann answers 40 s after her deadline (before the timeout fired): a legal move still
    state, _ = play(state, 0, DRAW, T0 + 100.0)
    clock = clock_of(state)
    assert clock.banks == (increment, 60.0)
    assert clock.deadline == T0 + 100.0 + increment
    assert clock.timeouts == (0, 0)  # a late answer is not a timeout


def test_remaining_runs_only_for_the_seat_the_game_waits_on() -> None:
    state, _ = game(SAFE_DECK, 3)
    clock = clock_of(state)
    assert remaining(clock, 0, T0) == 60.0
    assert remaining(clock, 0, T0 + 25.0) == 35.0
    assert remaining(clock, 1, T0 + 25.0) == 60.0  # not running
    assert remaining(clock, 2, T0 + 1_000.0) == 60.0
    assert remaining(clock, 0, T0 + 60.0) == 0.0
    assert remaining(clock, 0, T0 + 90.0) == 0.0  # overdrawn: 0, never negative
    state, _ = play(state, 0, DRAW, T0 + 10.0)
    state, _ = play(state, 0, NUMBERS, T0 + 11.0)
    state, _ = play(state, 0, DECLINE, T0 + 12.0)
    clock = clock_of(state)
    assert clock.seat == 1
    assert remaining(clock, 0, T0 + 30.0) == 60.0 - 12.0 + 15.0  # stopped at 63
    assert remaining(clock, 1, T0 + 30.0) == 60.0 - 18.0


def test_remaining_is_none_for_a_deadline_clock() -> None:
    state, _ = game(SAFE_DECK, control=DAY)
    assert remaining(clock_of(state), 0, T0 + 5.0) is None
    assert remaining(clock_of(state), 1, T0 + 5.0) is None


def test_each_seat_has_its_own_bank() -> None:
    state, _ = game(["R1", "R2", "B1", "B2", "G1", "G2", "O1", "O2"], 3)
    now = T0
    spent = {0: 7.0, 1: 31.0, 2: 2.5}
    for seat in (0, 1, 2):  # each: draw, stop with the numbers, decline the buy
        for action in (DRAW, NUMBERS, DECLINE):
            now += spent[seat]
            state, _ = play(state, seat, action, now)
    # Ann 7 s a decision: 58, 56, 54; Bob 31 s: 34, 8, then overdrawn: 0 + 5; Cid 2.5 s: 67.5
    assert clock_of(state).banks == (54.0, 5.0, 67.5)
    assert (clock_of(state).seat, deadline_of(state)) == (0, now + 54.0)


def test_bot_seats_never_get_a_deadline() -> None:
    """One human among three bots (a bot starts): the game waits only on the human, and
    the bots' banks are never charged."""
    state, events = game(seats=4, bots=(0, 1, 3), starting_seat=0, seed="one-human")
    seen = {clock_of(state).seat}
    now = T0
    decisions = 0
    while to_act(state) is not None:
        assert to_act(state) == 2
        now += 3.0
        before = state
        state, produced = play(state, 2, basic_move(state, 2), now)
        check_numbering(before, produced, state)
        check_clock(state)
        events += produced
        seen.add(clock_of(state).seat)
        decisions += 1
        banks = clock_of(state).banks
        assert (banks[0], banks[1], banks[3]) == (60.0, 60.0, 60.0)
    assert seen == {2, None}
    assert decisions > 10
    assert Counter(type(e) for e in events)[GameFinished] == 1
    assert clock_of(state).deadline is None
    assert {e.seat for e in events if isinstance(e, CardDrawn)} == {0, 1, 2, 3}


def test_a_game_of_bots_only_has_no_deadline() -> None:
    state, _ = game(seats=2, bots=(0, 1), seed="bots")
    assert state.phase == "finished"
    clock = clock_of(state)
    assert (clock.seat, clock.deadline) == (None, None)
    with pytest.raises(RuleError) as info:
        time_out(state, T0 + 10**6)
    assert info.value.code == "not_due"


# ------------------------------------------------------------------ deadline clocks


def test_a_deadline_clock_gives_every_decision_the_same_hours() -> None:
    state, _ = game(SAFE_DECK, control=DAY)
    day = 24 * 3600.0
    clock = clock_of(state)
    assert (clock.seat, clock.since, clock.deadline, clock.banks) == (0, T0, T0 + day, ())
    assert clock.timeouts == (0, 0)
    state, _ = play(state, 0, DRAW, T0 + 5_000.0)  # quick: no time saved up
    assert deadline_of(state) == T0 + 5_000.0 + day
    state, _ = play(state, 0, NUMBERS, T0 + 200_000.0)  # late (more than a day): no penalty
    assert deadline_of(state) == T0 + 200_000.0 + day
    state, _ = play(state, 0, DECLINE, T0 + 200_001.0)
    clock = clock_of(state)
    assert (clock.seat, clock.deadline, clock.banks) == (1, T0 + 200_001.0 + day, ())


def test_a_deadline_clock_times_out_and_takes_over_like_a_bank() -> None:
    state, _ = game(SAFE_DECK, control=DeadlineClock(hours=0.5, takeover_after=2))
    state, events = time_out(state, T0 + 1800.0)
    assert strip(events[:1]) == [TimedOut(seq=0, version=0, seat=0, deadline=T0 + 1800.0)]
    clock = clock_of(state)
    assert (clock.seat, clock.deadline, clock.banks, clock.timeouts) == (
        0,
        T0 + 3600.0,
        (),
        (1, 0),
    )
    state, events = time_out(state, T0 + 4000.0)  # fired late: the next wait starts now
    assert [type(e) for e in events if isinstance(e, (TimedOut, SeatTakenOver))] == [
        TimedOut,
        SeatTakenOver,
    ]
    clock = clock_of(state)
    assert (clock.seat, clock.since, clock.deadline) == (1, T0 + 4000.0, T0 + 5800.0)


# ------------------------------------------------------------------ the auction


def test_each_bidder_has_its_own_deadline_and_the_drawer_too() -> None:
    state, _ = game(["W5", "R1", "B2", "G3"], 3)
    state, events = play(state, 0, DRAW, T0 + 10.0)
    assert strip(events)[-1] == AuctionStarted(seq=0, version=0, card="W5", bidders=(1, 2, 0))
    clock = clock_of(state)  # Bob bids first: his bank runs, Ann's was charged for the draw
    assert (clock.seat, clock.since, clock.deadline) == (1, T0 + 10.0, T0 + 70.0)
    assert clock.banks == (55.0, 60.0, 60.0)
    state, _ = play(state, 1, Bid(amount=2), T0 + 40.0)
    clock = clock_of(state)  # Cid's chance, on his own bank
    assert (clock.seat, clock.since, clock.deadline) == (2, T0 + 40.0, T0 + 100.0)
    assert clock.banks == (55.0, 35.0, 60.0)
    state, _ = play(state, 2, PASS, T0 + 41.0)
    clock = clock_of(state)  # the drawer bids last, on what is left of her bank
    assert (clock.seat, clock.since, clock.deadline) == (0, T0 + 41.0, T0 + 96.0)
    assert clock.banks == (55.0, 35.0, 64.0)
    state, _ = play(state, 0, PASS, T0 + 50.0)
    clock = clock_of(state)  # Bob won the card; Ann's turn goes on, a new decision
    assert (state.phase, state.players[1].cards) == ("draw", ("W5",))
    assert (clock.seat, clock.since, clock.deadline) == (0, T0 + 50.0, T0 + 101.0)
    assert clock.banks == (51.0, 35.0, 64.0)


def test_a_bidder_who_times_out_has_their_chance_taken_and_the_clock_moves_on() -> None:
    state, _ = game(["W5", "R1", "B2", "G3"], 3)
    state, _ = play(state, 0, DRAW, T0 + 10.0)
    with pytest.raises(RuleError):
        time_out(state, T0 + 69.0)
    expected = basic_move(state, 1)
    before = state
    state, events = time_out(state, T0 + 70.0)
    check_numbering(before, events, state)
    assert strip(events) == [
        TimedOut(seq=0, version=0, seat=1, deadline=T0 + 70.0),
        BidPlaced(seq=0, version=0, seat=1, amount=expected.amount),
    ]
    clock = clock_of(state)
    assert (clock.seat, clock.since, clock.deadline) == (2, T0 + 70.0, T0 + 130.0)
    assert clock.banks == (55.0, 5.0, 60.0)  # Bob's bank emptied, then the increment
    assert clock.timeouts == (0, 1, 0)
    state, events = time_out(state, T0 + 130.0)  # Cid too
    assert strip(events)[0] == TimedOut(seq=0, version=0, seat=2, deadline=T0 + 130.0)
    assert isinstance(events[1], (BidPlaced, BidPassed))
    assert events[1].seat == 2
    assert clock_of(state).seat == 0  # the drawer's own chance, own deadline
    assert deadline_of(state) == T0 + 130.0 + 55.0


# ------------------------------------------------------------------ time_out


def test_time_out_is_refused_before_the_deadline() -> None:
    state, _ = game(SAFE_DECK)
    before = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=GameState)
    for now in (T0, T0 + 59.999):
        with pytest.raises(RuleError) as info:
            time_out(state, now)
        assert info.value.code == "not_due"
    assert state == before
    after, events = time_out(state, T0 + 60.0)  # due at the deadline itself
    assert isinstance(events[0], TimedOut)
    assert after.version == state.version + 1


def test_time_out_is_refused_without_a_clock() -> None:
    state, _ = new_game([("Ann", None), ("Bob", None)], "no-clock", deck=SAFE_DECK)
    assert state.clock is None
    with pytest.raises(RuleError) as info:
        time_out(state, T0 + 10**7)
    assert info.value.code == "not_due"
    # and without a clock, play is apply plus the bots' moves
    after, events = play(state, state.active_seat, DRAW, T0)
    assert (after, events) == apply(state, state.active_seat, DRAW)


def test_a_timeout_emits_timed_out_then_the_basic_bots_move_for_the_seat() -> None:
    state, _ = game(SAFE_DECK, 2, seed="timeout")
    state, _ = play(state, 0, DRAW, T0 + 10.0)
    deadline = deadline_of(state)
    expected = basic_move(state, 0)
    assert expected == DRAW  # R1 then R2: nothing can bust yet
    moved, move_events = apply(replace(state, last_seq=state.last_seq + 1), 0, expected)
    after, events = time_out(state, deadline + 2.5)
    check_numbering(state, events, after)
    assert events[0] == TimedOut(
        seq=state.last_seq + 1, version=state.version + 1, seat=0, deadline=deadline
    )
    assert events[1:] == move_events
    assert strip(events[1:]) == [CardDrawn(seq=0, version=0, seat=0, card="R2", draw_pile_size=10)]
    assert after.tableau == ("R1", "R2")
    assert replace(after, clock=None) == replace(moved, clock=None)
    assert after.players[0].stand_in is None  # one timeout: no takeover yet
    clock = clock_of(after)
    assert (clock.seat, clock.since, clock.timeouts) == (0, deadline + 2.5, (1, 0))
    assert (clock.banks, clock.deadline) == ((5.0, 60.0), deadline + 7.5)


@pytest.mark.parametrize("seed", ["a", "b", "c", "d", "e", "f"])
def test_the_timeout_move_is_the_basic_bots_choice_on_what_players_know(seed: str) -> None:
    """On shuffled games, at every decision of Ann: her timeout makes the move the basic
    bot chooses for her on the public view with the game's random source."""
    state, _ = game(seats=2, seed=seed, starting_seat=None)
    now = T0
    for _ in range(40):
        seat = to_act(state)
        if seat is None:
            break
        now = deadline_of(state)
        _, expected = apply(
            replace(state, last_seq=state.last_seq + 1), seat, basic_move(state, seat)
        )
        after, events = time_out(state, now)
        assert events[0] == TimedOut(
            seq=state.last_seq + 1, version=state.version + 1, seat=seat, deadline=now
        )
        assert events[1 : 1 + len(expected)] == expected
        state = after
        if after.players[seat].stand_in is not None:
            break
        # the other seat answers by itself in time: only Ann keeps timing out
        while to_act(state) == 1 - seat and state.players[1 - seat].stand_in is None:
            now += 1.0
            state, _ = play(state, 1 - seat, basic_move(state, 1 - seat), now)


def test_the_games_takeover_bot_makes_the_timeout_move() -> None:
    state, _ = game(SAFE_DECK, seed="random-bot", takeover_bot="random")
    state, _ = play(state, 0, DRAW, T0 + 1.0)
    expected = random_bot(information_state(state), 0, bot_rng(state.seed, state.version))
    _, move_events = apply(replace(state, last_seq=state.last_seq + 1), 0, expected)
    _, events = time_out(state, deadline_of(state))
    assert events[1:] == move_events


def test_consecutive_timeouts_are_counted_and_reset_when_the_seat_acts_itself() -> None:
    state, _ = game(SAFE_DECK)
    state, events = time_out(state, T0 + 60.0)  # the bot draws R1
    assert strip(events)[1] == CardDrawn(seq=0, version=0, seat=0, card="R1", draw_pile_size=11)
    assert clock_of(state).timeouts == (1, 0)
    state, _ = play(state, 0, DRAW, T0 + 61.0)  # Ann draws R2 herself
    assert clock_of(state).timeouts == (0, 0)
    assert clock_of(state).banks == (9.0, 60.0)  # emptied at the timeout: 5, - 1 s, + 5
    counts = []
    while state.players[0].stand_in is None:
        assert to_act(state) == 0
        state, _ = time_out(state, deadline_of(state))
        counts.append(clock_of(state).timeouts[0])
    assert counts == [1, 2, 3]  # R3 and B1 drawn by the bot, then its stop: taken over
    assert state.players[0].cards == ("R1", "R2", "R3", "B1")
    assert (to_act(state), clock_of(state).timeouts) == (1, (3, 0))


def test_a_seat_that_times_out_is_taken_over_after_n_in_a_row() -> None:
    state, _ = game(SAFE_DECK, 3)
    history = []
    while state.players[0].stand_in is None:
        before = state
        state, events = time_out(state, deadline_of(state))
        check_numbering(before, events, state)
        history.append([type(e).__name__ for e in events])
    # R1, R2, R3 drawn by the bot for Ann; at the third timeout the bot takes her seat and
    # plays her turn to its end: B1, stop, no buy; Bob's turn
    assert history == [
        ["TimedOut", "CardDrawn"],
        ["TimedOut", "CardDrawn"],
        [
            "TimedOut",
            "CardDrawn",
            "SeatTakenOver",
            "CardDrawn",
            "Stopped",
            "BuyDeclined",
            "TurnStarted",
        ],
    ]
    assert strip([e for e in events if isinstance(e, SeatTakenOver)]) == [
        SeatTakenOver(seq=0, version=0, seat=0, bot="basic", reason="timeouts")
    ]
    taken = next(e for e in events if isinstance(e, SeatTakenOver))
    move = events[1]
    assert taken.version == move.version + 1  # the takeover is its own step, after the move
    ann = state.players[0]
    assert (ann.stand_in, ann.taken_over, ann.resigned, ann.cards) == (
        "basic",
        True,
        False,
        ("R1", "R2", "R3", "B1"),
    )
    clock = clock_of(state)
    assert (clock.seat, clock.since, clock.deadline) == (1, T0 + 70.0, T0 + 130.0)
    assert clock.timeouts == (3, 0, 0)
    check_clock(state)


@pytest.mark.parametrize("after", [1, 2, 5])
def test_takeover_after_is_the_number_of_consecutive_timeouts(after: int) -> None:
    control = BankClock(initial_seconds=30.0, increment_seconds=1.0, takeover_after=after)
    state, _ = game(seats=2, seed=f"after-{after}", control=control)
    timeouts = 0
    taken: list[SeatTakenOver] = []
    now = T0
    while not taken:
        seat = to_act(state)
        assert seat is not None
        if seat == 0:
            now = deadline_of(state)
            state, events = time_out(state, now)
            timeouts += 1
            taken = [e for e in events if isinstance(e, SeatTakenOver)]
            assert clock_of(state).timeouts[0] == timeouts
        else:  # Bob answers in time; his moves do not reset Ann's count
            now += 2.0
            state, _ = play(state, 1, basic_move(state, 1), now)
            assert clock_of(state).timeouts == (timeouts, 0)
    assert timeouts == after
    assert [(e.seat, e.reason) for e in taken] == [(0, "timeouts")]
    check_clock(state)
    assert state.phase == "finished" or to_act(state) == 1


def test_four_seats_where_one_player_never_answers_play_to_the_end() -> None:
    state, events = game(seats=4, seed="silent", starting_seat=0)
    now = T0
    calls = Counter[str]()
    while (seat := to_act(state)) is not None:
        before = state
        if seat == 2:
            now = deadline_of(state) + 0.25  # the poller fires a little late
            state, produced = time_out(state, now)
            calls["time_out"] += 1
        else:
            now += 4.0
            state, produced = play(state, seat, basic_move(state, seat), now)
            calls["play"] += 1
        check_numbering(before, produced, state)
        check_clock(state)
        events += produced
    kinds = Counter(type(e) for e in events)
    assert calls["time_out"] == kinds[TimedOut] == 3
    assert [(e.seat, e.reason) for e in events if isinstance(e, SeatTakenOver)] == [(2, "timeouts")]
    assert {e.seat for e in events if isinstance(e, TimedOut)} == {2}
    assert kinds[GameFinished] == 1
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert state.results is not None
    assert len(state.results) == 4
    # taken over is not resigned: the seat is ranked by its score as usual
    assert [r.resigned for r in state.results] == [False] * 4
    assert (state.players[2].taken_over, state.players[2].resigned) == (True, False)
    assert clock_of(state).timeouts[2] == 3


def test_a_game_where_nobody_answers_ends_by_timeouts_alone() -> None:
    state, events = game(seats=4, seed="ghosts", control=BankClock(initial_seconds=1.0))
    calls = 0
    while clock_of(state).seat is not None:
        assert calls < 100
        before = state
        state, produced = time_out(state, deadline_of(state))
        check_numbering(before, produced, state)
        check_clock(state)
        events += produced
        calls += 1
    kinds = Counter(type(e) for e in events)
    assert calls == kinds[TimedOut] == 12  # three each, then a bot has every seat
    assert sorted(e.seat for e in events if isinstance(e, SeatTakenOver)) == [0, 1, 2, 3]
    assert kinds[GameFinished] == 1
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(p.taken_over and p.stand_in == "basic" for p in state.players)
    assert clock_of(state).deadline is None


def test_a_timeout_that_ends_the_game_takes_nobody_over() -> None:
    state, _ = game(["R1"], control=BankClock(initial_seconds=10.0, takeover_after=1))
    state, _ = play(state, 0, DRAW, T0 + 1.0)
    state, _ = play(state, 0, NUMBERS, T0 + 2.0)
    state, _ = play(state, 0, DECLINE, T0 + 3.0)  # the last card: Bob's last buy, then Ann's
    state, _ = play(state, 1, DECLINE, T0 + 4.0)
    assert (state.phase, to_act(state)) == ("final_buy", 0)
    # Ann's last decision times out (her takeover_after-th in a row) and ends the game
    state, events = time_out(state, deadline_of(state))
    assert state.phase == "finished"
    assert [type(e) for e in events] == [TimedOut, BuyDeclined, GameFinished]
    assert state.version == events[-1].version
    assert state.players[0].stand_in is None


# ------------------------------------------------------------------ reclaim


def taken_over_ann(seats: int = 3) -> GameState:
    """Ann (seat 0) timed out three times; the bot finished her turn; Bob's turn at T0+70."""
    state, _ = game(SAFE_DECK, seats)
    while state.players[0].stand_in is None:
        state, _ = time_out(state, deadline_of(state))
    assert clock_of(state).seat == 1
    return state


def test_only_a_seat_taken_over_can_be_reclaimed() -> None:
    state, _ = game(SAFE_DECK, 3)
    for seat in (0, 1, 2):  # nobody was taken over: whose turn it is or not
        with pytest.raises(RuleError) as info:
            play(state, seat, Reclaim(), T0 + 1.0)
        assert info.value.code == "illegal_action"
    state = taken_over_ann()
    with pytest.raises(RuleError) as info:
        play(state, 2, Reclaim(), T0 + 75.0)
    assert info.value.code == "illegal_action"


def test_reclaiming_gives_the_seat_back_and_leaves_the_running_clock_alone() -> None:
    state = taken_over_ann()
    running = clock_of(state)
    assert running.timeouts == (3, 0, 0)
    after, events = play(state, 0, Reclaim(), T0 + 75.0)
    check_numbering(state, events, after)
    assert strip(events) == [SeatReclaimed(seq=0, version=0, seat=0)]
    ann = after.players[0]
    assert (ann.stand_in, ann.taken_over, ann.resigned) == (None, True, False)
    assert clock_of(after) == replace(running, timeouts=(0, 0, 0))  # Bob's clock runs on
    assert to_act(after) == 1
    with pytest.raises(RuleError) as info:  # nothing left to take back
        play(after, 0, Reclaim(), T0 + 76.0)
    assert info.value.code == "illegal_action"


def test_a_reclaimed_seat_is_waited_on_again_and_its_timeouts_count_from_zero() -> None:
    state = taken_over_ann(2)
    state, _ = play(state, 0, Reclaim(), T0 + 75.0)
    now = T0 + 75.0
    while to_act(state) == 1:
        now += 1.0
        state, _ = play(state, 1, basic_move(state, 1), now)
    clock = clock_of(state)
    assert (to_act(state), clock.seat, clock.since) == (0, 0, now)
    assert clock.deadline == now + 5.0  # her bank: emptied at her timeouts, +5
    state, events = time_out(state, deadline_of(state))
    assert clock_of(state).timeouts[0] == 1
    assert not [e for e in events if isinstance(e, SeatTakenOver)]
    assert state.players[0].stand_in is None


def test_reclaim_is_refused_after_the_end() -> None:
    state, _ = game(seats=2, seed="end", control=BankClock(initial_seconds=1.0))
    while clock_of(state).seat is not None:
        state, _ = time_out(state, deadline_of(state))
    assert state.players[0].stand_in == "basic"
    with pytest.raises(RuleError) as info:
        play(state, 0, Reclaim(), T0 + 10**5)
    assert info.value.code == "game_finished"


def test_a_resigned_seat_cannot_reclaim() -> None:
    state, _ = game(SAFE_DECK, 3)
    resigned, _ = play(state, 2, Resign(), T0 + 1.0)
    with pytest.raises(RuleError) as info:
        play(resigned, 2, Reclaim(), T0 + 2.0)
    assert info.value.code == "illegal_action"
    # taken over after timeouts, then resigned: the bot keeps the seat
    state = taken_over_ann()
    state, events = play(state, 0, Resign(), T0 + 80.0)
    assert [(e.seat, e.reason) for e in events if isinstance(e, SeatTakenOver)] == [(0, "resigned")]
    ann = state.players[0]
    assert (ann.stand_in, ann.taken_over, ann.resigned) == ("basic", True, True)
    with pytest.raises(RuleError) as info:
        play(state, 0, Reclaim(), T0 + 81.0)
    assert info.value.code == "illegal_action"


def test_a_state_with_a_clock_survives_encoding() -> None:
    state = taken_over_ann()
    for codec in (msgspec.json, msgspec.msgpack):
        assert codec.decode(codec.encode(state), type=GameState) == state
    state, _ = game(SAFE_DECK, control=DAY)
    assert msgspec.json.decode(msgspec.json.encode(state), type=GameState) == state


# ------------------------------------------------------------------ property


CONTROLS = st.one_of(
    st.builds(
        BankClock,
        initial_seconds=st.sampled_from([1.0, 30.0, 120.0]),
        increment_seconds=st.sampled_from([0.0, 2.0, 10.0]),
        takeover_after=st.integers(1, 3),
    ),
    st.builds(DeadlineClock, hours=st.sampled_from([0.01, 1.0]), takeover_after=st.integers(1, 3)),
)
STEP = st.tuples(
    st.sampled_from(["act", "act", "act", "early", "timeout", "resign", "reclaim"]),
    st.integers(0, 4),  # which human seat, for resign and reclaim
    st.floats(0.0, 200.0, allow_nan=False),  # seconds since the last step
)


def check_consistent(state: GameState, now: float, deck: Counter[str], after: int) -> None:
    check_clock(state)
    clock = clock_of(state)
    assert clock.since <= now
    if clock.deadline is not None:
        assert clock.deadline >= clock.since
    if isinstance(clock.control, BankClock):
        assert len(clock.banks) == len(state.players)
    else:
        assert clock.banks == ()
    for seat, player in enumerate(state.players):
        assert clock.timeouts[seat] >= 0
        if player.bot is None and player.stand_in is None:
            assert clock.timeouts[seat] < after  # else a bot would have the seat
        if player.resigned:
            assert player.stand_in is not None
    assert violations(state, deck) == []


@settings(
    max_examples=50,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10**6),
    seats=st.integers(1, 4),
    bot_seats=st.sets(st.integers(0, 3)),
    control=CONTROLS,
    takeover_bot=st.sampled_from(["basic", "random"]),
    steps=st.lists(STEP, max_size=60),
)
def test_random_games_with_clocks_stay_consistent(
    seed: int,
    seats: int,
    bot_seats: set[int],
    control: TimeControl,
    takeover_bot: str,
    steps: list,
) -> None:
    bots = tuple(s for s in bot_seats if s < seats and s != 0)  # seat 0 is always human
    state, log = game(
        seats=seats,
        bots=bots,
        starting_seat=None,
        control=control,
        seed=str(seed),
        takeover_bot=takeover_bot,
    )
    deck = Counter(deck_for(seats))
    humans = [s for s in range(seats) if s not in bots]
    after = control.takeover_after
    now = T0
    check_consistent(state, now, deck, after)

    def accept(step: tuple[GameState, list[Event]]) -> None:
        nonlocal state
        new, events = step
        if events:
            check_numbering(state, events, new)
        for event in events:
            if isinstance(event, TimedOut):  # only humans time out, at their deadline
                assert event.seat in humans
                assert event.deadline <= now
            if isinstance(event, SeatTakenOver):
                assert event.bot == takeover_bot
        log.extend(events)
        state = new
        check_consistent(state, now, deck, after)
        assert rebuild(log) == public_view(state)  # the log tells what happened

    for i, (op, pick, dt) in enumerate(steps):
        now += dt
        seat = to_act(state)
        deadline = clock_of(state).deadline
        human = humans[pick % len(humans)]
        player = state.players[human]
        if op == "act" and seat is not None:
            action = random_bot(information_state(state), seat, SeededRandom(f"prop/{seed}/{i}"))
            accept(play(state, seat, action, now))
        elif op == "early" and deadline is not None and now < deadline:
            with pytest.raises(RuleError) as info:
                time_out(state, now)
            assert info.value.code == "not_due"
        elif op == "timeout" and deadline is not None:
            now = max(now, deadline)
            accept(time_out(state, now))
        elif op == "resign" and state.phase != "finished":
            if player.resigned:
                with pytest.raises(RuleError) as info:
                    play(state, human, Resign(), now)
                assert info.value.code == "illegal_action"
            else:
                accept(play(state, human, Resign(), now))
                assert state.players[human].resigned
        elif op == "reclaim" and state.phase != "finished":
            if player.resigned or player.stand_in is None:
                with pytest.raises(RuleError) as info:
                    play(state, human, Reclaim(), now)
                assert info.value.code == "illegal_action"
            else:
                accept(play(state, human, Reclaim(), now))
                assert state.players[human].stand_in is None
                assert clock_of(state).timeouts[human] == 0
    # nobody answers any more: timeouts alone end the game
    for _ in range(500):
        deadline = clock_of(state).deadline
        if deadline is None:
            break
        now = max(now, deadline)
        accept(time_out(state, now))
    assert state.phase == "finished"
    assert state.results is not None
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    results = state.results
    resigned = [r for r in results if r.resigned]
    assert [r.seat for r in resigned] == [p.seat for p in state.players if p.resigned]
    assert not any(r.winner for r in resigned)
    ranked = [r.rank for r in results if not r.resigned]
    if resigned and ranked:
        assert min(r.rank for r in resigned) == len(ranked) + 1 > max(ranked)
    if ranked:
        assert any(r.winner for r in results)
    else:
        assert not any(r.winner for r in results)


@pytest.mark.parametrize("seed", range(6))
def test_the_earliest_deadline_is_never_after_a_deadline_to_come(seed: int) -> None:
    """`earliest_deadline` (what the service indexes as the game's due between saves): every
    deadline the game sets later, whoever acts or times out when, comes at or after it; and
    it never moves earlier from one state to the next (so saves seldom move the entry)."""
    rng = SeededRandom(f"earliest/{seed}")
    control = BankClock(initial_seconds=5.0, increment_seconds=1.0, takeover_after=2)
    players = [(f"p{i}", None) for i in range(3)] + [("bot", "basic")]
    state, _ = new_game(players, f"earliest/{seed}")
    state, _ = play_bots(state)
    now = T0
    state = start_clock(state, control, now)
    bounds: list[float] = []
    while state.phase != "finished":
        bound = earliest_deadline(state, now)
        assert bound is not None
        assert not bounds or bound >= bounds[-1] - 1e-9, (bounds[-1], bound)
        bounds.append(bound)
        deadline = deadline_of(state)
        assert all(deadline >= b - 1e-9 for b in bounds), (deadline, max(bounds))
        if rng.randbelow(4) == 0:  # the seat lets its deadline pass
            now = deadline + rng.randbelow(100) / 100
            state, _ = time_out(state, now)
        else:  # the seat decides within its time
            now += (deadline - now) * rng.randbelow(100) / 100
            seat = to_act(state)
            assert seat is not None
            state, _ = play(state, seat, basic_move(state, seat), now)
    assert len(bounds) > 20
