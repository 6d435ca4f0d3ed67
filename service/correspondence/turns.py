"""Whose turn a correspondence game waits on, and whether a change handed it to them: what
the relay marks a save for (`service.reactions.relay.TURN_WAITS`) and what the turn notices
decide on (`service.correspondence.notices`)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.game.model import DeadlineClock
from service.core.model import GameRecord

# events about a seat that hand no turn to anyone (a resign, a reclaim: any time)
_NOT_A_HAND_OVER = frozenset(("seat_taken_over", "seat_reclaimed"))


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
    `seat` from another seat (the game's start, or a move of another seat), None when they
    did not: a seat that goes on deciding (it drew, and draws again) gets no new turn."""
    found = None
    for event in events:
        kind = type(event).__struct_config__.tag  # type: ignore[attr-defined]
        if kind == "game_started":
            found = event.version  # type: ignore[attr-defined]
        elif kind not in _NOT_A_HAND_OVER:
            actor = getattr(event, "seat", None)
            if actor is not None and actor != seat:
                found = event.version  # type: ignore[attr-defined]
    return found
