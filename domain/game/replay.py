"""Rebuild everything public about a game from its event log alone.

This is what a client (or the archive's replay) does with the events: the engine's own
`evolve` folded over the public log, from the state `game_started` describes (its pile
`HIDDEN` cards, no seed), so the rules are folded in one place only. The tests check
that after every action the view equals `public_view` of the live state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from domain.game.engine import evolve
from domain.game.model import Event, GameStarted
from domain.game.views import PublicView, public_view


def replay(events: Iterable[Event]) -> Iterator[PublicView]:
    """The public state after each action: one view per game version (0, 1, 2 ...)."""
    state = None
    pending = False
    for event in events:
        if state is None:
            if not isinstance(event, GameStarted):
                raise ValueError("an event log starts with game_started")
            state = evolve(None, event)
            pending = True
            continue
        if event.version != state.version:
            yield public_view(state)
        state = evolve(state, event)
        pending = True
    if state is not None and pending:
        yield public_view(state)


def rebuild(events: Iterable[Event]) -> PublicView:
    """The public state at the end of an event log."""
    last = None
    for last in replay(events):  # noqa: B007 - only the last view is wanted
        pass
    if last is None:
        raise ValueError("an empty event log")
    return last
