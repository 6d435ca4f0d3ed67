"""Playing games with bots: the server-side turn loop and whole simulated games."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from domain.bots.basic import BOTS, bot_rng
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.model import Action, Event, GameState, Rules
from domain.game.rng import SeededRandom

MAX_ACTIONS = 20_000  # far above any real game; a guard against an engine bug looping

OnAction = Callable[[GameState, int, Action, GameState], None]


class SimulatedGame(msgspec.Struct, kw_only=True):
    state: GameState
    events: list[Event]
    actions: int


def _bots_move(
    state: GameState, rng_for: Callable[[GameState], SeededRandom], on_action: OnAction | None
) -> SimulatedGame:
    """Bot seats and seats taken over decide (each on the game as its players know it) until a human seat
    must decide or the game ends; `rng_for(state)` is the random source of the move at `state`."""
    events: list[Event] = []
    for actions in range(MAX_ACTIONS):
        seat = to_act(state)
        if seat is None:
            return SimulatedGame(state=state, events=events, actions=actions)
        player = state.players[seat]
        level = player.bot or player.stand_in  # a bot seat, or a human seat taken over
        if level is None:  # the view only for a bot's move: most actions hand over to a human
            return SimulatedGame(state=state, events=events, actions=actions)
        assert seat is not None
        action = BOTS[level](information_state(state), seat, rng_for(state))
        before = state
        state, produced = apply(state, seat, action)
        events.extend(produced)
        if on_action is not None:
            on_action(before, seat, action, state)
    raise RuntimeError("bots did not reach a human decision or the end of the game")


def play_bots(state: GameState) -> tuple[GameState, list[Event]]:
    """Let bot seats move until a human seat must decide or the game ends. Each move's
    random source comes from the seed and the version (`bot_rng`), so a game replays."""
    played = _bots_move(state, lambda s: bot_rng(s.seed, s.version), None)
    return played.state, played.events


def play_game(
    bots: Sequence[str],
    seed: str | int,
    *,
    rules: Rules | None = None,
    on_action: OnAction | None = None,
) -> SimulatedGame:
    """One whole game between bots (one level per seat), one random stream for the whole
    game. `on_action(before, seat, action, after)` is called after every action."""
    state, events = new_game(
        [(f"bot{i}", level) for i, level in enumerate(bots)], seed, rules=rules
    )
    rng = SeededRandom(f"bots/{seed}")
    played = _bots_move(state, lambda _state: rng, on_action)
    return SimulatedGame(state=played.state, events=events + played.events, actions=played.actions)
