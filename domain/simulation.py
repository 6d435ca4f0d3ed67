"""Playing games with bots: the server-side turn loop and whole simulated games."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from domain.bots import BOTS, bot_rng, random_move
from domain.engine import TURN_HANDLERS, apply, new_game, to_act
from domain.model import Action, Event, GameState, Rules
from domain.rng import SeededRandom
from domain.views import public_view

MAX_ACTIONS = 20_000  # far above any real game; a guard against an engine bug looping


def play_bots(state: GameState) -> tuple[GameState, list[Event]]:
    """Let bot seats move until a human seat must decide or the game ends."""
    events: list[Event] = []
    for _ in range(MAX_ACTIONS):
        seat = to_act(state)
        if seat is None:
            break
        level = state.players[seat].bot
        if level is None:
            break
        rng = bot_rng(state.seed, state.version)
        if level == "random":
            action = random_move(state, seat, rng)  # = random_bot(public_view(state), ...)
        else:
            action = BOTS[level](public_view(state), seat, rng)
        state, produced = apply(state, seat, action)
        events.extend(produced)
    return state, events


class SimulatedGame(msgspec.Struct, kw_only=True):
    state: GameState
    events: list[Event]
    actions: int


def play_game(
    bots: Sequence[str],
    seed: str | int,
    *,
    rules: Rules | None = None,
    on_action: Callable[[GameState, int, Action, GameState], None] | None = None,
) -> SimulatedGame:
    """One whole game between bots (one level per seat). `on_action(before, seat, action,
    after)` is called after every action, for checks."""
    state, events = new_game(
        [(f"bot{i}", level) for i, level in enumerate(bots)], seed, rules=rules
    )
    actions = 0
    rng = SeededRandom(f"bots/{seed}")  # one stream for the whole game: cheaper than per move
    by_view = [BOTS[level] if level != "random" else None for level in bots]
    handlers = TURN_HANDLERS  # = apply: the seat is the one whose decision it is
    while (seat := to_act(state)) is not None:
        bot = by_view[seat]
        if bot is None:
            action = random_move(state, seat, rng)  # = random_bot(public_view(state), ...)
        else:
            action = bot(public_view(state), seat, rng)
        before = state
        state, produced = handlers[type(action)](state, seat, action)
        events.extend(produced)
        actions += 1
        if on_action is not None:
            on_action(before, seat, action, state)
        if actions > MAX_ACTIONS:
            raise RuntimeError("a simulated game did not end")
    return SimulatedGame(state=state, events=events, actions=actions)
