"""Whose turn a correspondence game waits on, and whether a change handed it to them: the
kind of change `TURN_WAITS` (`turn_waits`, a fact the composition root hands the relay:
`service.reactions.relay.Relay`'s `facts`) and what the turn notices decide on
(`service.correspondence.notices`)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.game.model import DeadlineClock
from service.core.model import GameRecord
from service.reactions.relay import Change

# a correspondence game's decision handed to a human seat: its player is told
TURN_WAITS = "turn_waits"

# the events that are a seat's own decision (its action, or its bot's after a timeout); the
# others follow from one (an auction won, a bust, a turn begun) or are about a seat whoever
# is to act (a resign, a reclaim), and hand nobody a turn
_DECISIONS = frozenset(
    (
        "card_drawn",
        "stopped",
        "bid_placed",
        "bid_passed",
        "card_bought",
        "buy_declined",
        "timed_out",
    )
)


def waiting_seat(record: GameRecord) -> int | None:
    """The human seat a live game with a deadline clock waits on (None: no such wait: no
    deadline clock, ended, or the seat is a bot's, or a bot plays it now)."""
    state = record.state
    if state is None or record.ended or state.clock is None:
        return None
    clock = state.clock
    if not isinstance(clock.control, DeadlineClock) or clock.seat is None:
        return None
    player = state.players[clock.seat]
    if player.bot is not None or player.stand_in is not None:
        return None
    return clock.seat


def handed_at(events: Sequence[object], seat: int) -> int | None:
    """The game's version at which these events (oldest first) last handed the decision to
    `seat` from another seat (the game's start, or a decision of another seat), None when
    they did not: a seat that goes on deciding (it drew, and draws again) gets no new turn."""
    found = None
    for event in events:
        kind = type(event).__struct_config__.tag  # type: ignore[attr-defined]
        if kind == "game_started" or (kind in _DECISIONS and event.seat != seat):
            found = event.version  # type: ignore[attr-defined]
    return found


def turn_waits(change: Change) -> bool:
    """Whether a change is `TURN_WAITS`: a correspondence game whose events handed the
    decision to the human seat it now waits on (its events decoded only then)."""
    seat = waiting_seat(change.new)
    return seat is not None and handed_at(change.events, seat) is not None
