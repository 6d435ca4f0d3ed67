"""Turn clocks: whose time runs, deadlines, timeouts and takeover, as pure functions of the
state and `now` (unix seconds, given by the caller: no function here reads a clock).

Every decision of TEN waits on one seat (`to_act`), auction bids included, so one clock
runs at a time: the waiting seat's, from the moment the game started waiting on it. With a
bank clock its deadline is `since + bank`; a decision charges the time it took to the bank
and adds the increment. With a deadline clock every decision gets `hours`. Bot seats and
seats a bot took over decide at once and never wait.

`play` is how every action of a seat is applied (the bots' moves after it included);
`time_out` makes the move of a seat whose deadline passed.
"""

from __future__ import annotations

from msgspec.structs import replace

from domain.bots.basic import BOTS, bot_rng
from domain.bots.simulation import play_bots
from domain.game.engine import apply, information_state, take_over, to_act
from domain.game.errors import RuleError
from domain.game.model import (
    Action,
    BankClock,
    Clock,
    Event,
    GameState,
    Reclaim,
    TimeControl,
    TimedOut,
)


def start_clock(state: GameState, control: TimeControl, now: float) -> GameState:
    """The game with its clock running from `now` for the seat it waits on."""
    seats = len(state.players)
    banks = (control.initial_seconds,) * seats if isinstance(control, BankClock) else ()
    clock = Clock(control=control, seat=None, since=now, deadline=None, banks=banks)
    return replace(state, clock=_wait(replace(clock, timeouts=(0,) * seats), state, now))


def play(state: GameState, seat: int, action: Action, now: float) -> tuple[GameState, list[Event]]:
    """`seat`'s action at `now`, the moves of the bots it hands the turn to, and the clock:
    a decision of the seat the game waited on is charged to its bank (its timeouts count
    again from 0); the clock then runs for the seat the game waits on next. A seat action
    (resign, reclaim) of another seat leaves the running clock alone."""
    after, events = apply(state, seat, action)
    after, bot_events = play_bots(after)
    events.extend(bot_events)
    clock = state.clock
    if clock is None:
        return after, events
    decided = seat == clock.seat and type(action) is not Reclaim
    if decided:
        clock = _charge(clock, now, timed_out=False)
    elif type(action) is Reclaim:
        clock = _with_timeouts(clock, seat, 0)
    if decided or to_act(after) != clock.seat:
        clock = _wait(clock, after, now)
    return replace(after, clock=clock), events


def time_out(state: GameState, now: float) -> tuple[GameState, list[Event]]:
    """The waiting seat let its deadline pass: the game's bot (`takeover_bot`, on the
    game as its players know it, like every bot) makes its move, after a `timed_out` event. After
    `takeover_after` consecutive timeouts the bot takes the seat over (unless that move
    ended the game: nothing is taken over after `game_finished`). Raises RuleError
    `not_due` before the deadline (or without a running clock)."""
    clock = state.clock
    if clock is None or clock.seat is None or clock.deadline is None or now < clock.deadline:
        raise RuleError("not_due", "No deadline of this game has passed.")
    seat = clock.seat
    bot = BOTS[state.takeover_bot]  # type: ignore[index]
    action = bot(information_state(state), seat, bot_rng(state.seed, state.version))
    numbered = replace(state, last_seq=state.last_seq + 1)
    after, events = apply(numbered, seat, action)
    timed = TimedOut(
        seq=state.last_seq + 1, version=after.version, seat=seat, deadline=clock.deadline
    )
    events.insert(0, timed)
    clock = _charge(clock, now, timed_out=True)
    if clock.timeouts[seat] >= clock.control.takeover_after and after.phase != "finished":
        after, taken = take_over(after, seat, "timeouts")
        events.extend(taken)
    after, bot_events = play_bots(after)
    events.extend(bot_events)
    return replace(after, clock=_wait(clock, after, now)), events


def _charge(clock: Clock, now: float, *, timed_out: bool) -> Clock:
    """The running seat decided at `now` (itself, or its bot after a timeout): the time it
    took leaves its bank and the increment comes back; its consecutive timeouts count."""
    seat = clock.seat
    assert seat is not None
    control = clock.control
    if isinstance(control, BankClock):
        spent = max(0.0, now - clock.since)  # a replica's clock behind never credits time
        left = max(0.0, clock.banks[seat] - spent) + control.increment_seconds
        banks = (*clock.banks[:seat], left, *clock.banks[seat + 1 :])
        clock = replace(clock, banks=banks)
    return _with_timeouts(clock, seat, clock.timeouts[seat] + 1 if timed_out else 0)


def _with_timeouts(clock: Clock, seat: int, count: int) -> Clock:
    timeouts = clock.timeouts
    return replace(clock, timeouts=(*timeouts[:seat], count, *timeouts[seat + 1 :]))


def _wait(clock: Clock, state: GameState, now: float) -> Clock:
    """The clock of the seat `state` waits on, running from `now` (none once finished)."""
    seat = to_act(state)
    if seat is None:
        return replace(clock, seat=None, since=now, deadline=None)
    control = clock.control
    if isinstance(control, BankClock):
        deadline = now + clock.banks[seat]
    else:
        deadline = now + control.hours * 3600
    return replace(clock, seat=seat, since=now, deadline=deadline)


def earliest_deadline(state: GameState, now: float) -> float | None:
    """A time before which no deadline of this game can come, from `now` on (None: no
    clock running). The running seat's deadline is fixed; any other seat a human plays
    starts waiting no sooner than `now`, with at least its bank. A seat's deadlines never
    move earlier (a decision takes back from the bank at most the time it took, and the
    next wait starts after it), so this bound only grows as the game goes on: a store
    keeping it as the game's due seldom has to move an entry earlier."""
    clock = state.clock
    if clock is None or clock.deadline is None:
        return None
    if not isinstance(clock.control, BankClock):
        return clock.deadline  # every wait gets the same hours: no later wait ends sooner
    others = [
        clock.banks[p.seat]
        for p in state.players
        if p.seat != clock.seat and p.bot is None and p.stand_in is None
    ]
    return min(clock.deadline, now + min(others)) if others else clock.deadline


def remaining(clock: Clock, seat: int, now: float) -> float | None:
    """Seconds left on `seat`'s bank at `now` (its clock runs only while the game waits on
    it); None for a deadline clock."""
    if not isinstance(clock.control, BankClock):
        return None
    bank = clock.banks[seat]
    if seat == clock.seat:
        return max(0.0, bank - (now - clock.since))
    return bank
