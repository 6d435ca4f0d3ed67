"""Whose turn a correspondence game waits on and when a change handed it over
(service.correspondence.turns), and the relay's `turn_waits` made of it."""

from __future__ import annotations

from msgspec.structs import replace

from domain.bots.basic import BOTS, bot_rng
from domain.bots.clock import play, start_clock
from domain.game.engine import information_state, to_act
from domain.game.model import BankClock, BidPassed, DeadlineClock, SeatTakenOver, TurnStarted
from service.correspondence.turns import TURN_WAITS, handed_at, turn_waits, waiting_seat
from service.reactions.relay import saved_change
from tests.support.games import started

FACTS = {TURN_WAITS: turn_waits}


def _deadline(record):
    state = start_clock(record.state, DeadlineClock(hours=24), 0.0)
    return replace(record, state=state)


def test_a_deadline_game_waits_on_its_human_seat_and_a_bank_clock_game_on_none():
    record, _ = started()
    assert waiting_seat(record) is None  # no clock
    timed = _deadline(record)
    assert waiting_seat(timed) == timed.state.clock.seat
    banked = replace(record, state=start_clock(record.state, BankClock(initial_seconds=60), 0.0))
    assert waiting_seat(banked) is None


def test_a_turn_is_handed_over_by_the_start_or_another_seats_move_only():
    start = TurnStarted(seq=2, version=0, seat=0)
    assert handed_at([start], 0) is None  # a turn begun is no decision
    passed = BidPassed(seq=3, version=4, seat=1)
    assert handed_at([start, passed], 0) == 4  # another seat decided
    assert handed_at([passed], 1) is None  # its own decision
    resign = SeatTakenOver(seq=5, version=6, seat=1, bot="basic", reason="resigned")
    assert handed_at([resign], 0) is None  # a resign hands nobody a turn


def test_the_relay_marks_a_deadline_games_start_and_each_hand_over_as_turn_waits_only():
    record, events = started()
    timed = _deadline(record)
    assert TURN_WAITS in saved_change(None, timed, [], events, FACTS).kinds
    assert TURN_WAITS not in saved_change(None, record, [], events, FACTS).kinds  # no deadline
    marked, unmarked = 0, 0
    before = timed
    for _ in range(40):  # moves of the basic bot for whoever is to act, on the clock
        state = before.state
        if state.phase == "finished":
            break
        seat = to_act(state)
        action = BOTS["basic"](information_state(state), seat, bot_rng(state.seed, state.version))
        after_state, made = play(state, seat, action, 1.0)
        after = replace(before, state=after_state)
        kinds = saved_change(before, after, [], made, FACTS).kinds
        waits = waiting_seat(after)
        handed = waits is not None and waits != seat
        assert (TURN_WAITS in kinds) == (handed and handed_at(made, waits) is not None)
        marked += TURN_WAITS in kinds
        unmarked += waits == seat  # the same seat goes on deciding: no mark
        assert not (waits == seat and TURN_WAITS in kinds)
        before = after
    assert marked
    assert unmarked
