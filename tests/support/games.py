"""Game records built with the engine, no I/O: a started three-seat game and the same game
played to its end by bots (the webhook message tests, unit and integration)."""

from __future__ import annotations

from msgspec.structs import replace

from domain.bots.basic import BOTS, bot_rng
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.model import Event
from service.core.model import GameRecord

PLAYERS = [("ann", None), ("bob", None), ("cy", "basic")]


NOW = 1_760_000_000.5


def started(game_id: str = "0123456789abcdef0123") -> tuple[GameRecord, list[Event]]:
    state, events = new_game(PLAYERS, "webhook-seed")
    record = GameRecord(
        id=game_id,
        state=state,
        token_hashes=("a", "b", None),
        created_at=NOW,
        updated_at=NOW,
        player_ids=("p-ann", "p-bob", None),
        verified=(True, True, False),
    )
    return record, events


def step(record: GameRecord, at: float = 1.0) -> tuple[GameRecord, list[Event]]:
    """One move of the seat to act (a basic bot's choice), saved `at` seconds later."""
    state = record.state
    seat = to_act(state)
    assert seat is not None
    action = BOTS["basic"](information_state(state), seat, bot_rng(state.seed, state.version))
    state, events = apply(state, seat, action)
    return replace(record, state=state, updated_at=record.updated_at + at), events


def play_to_end(record: GameRecord) -> tuple[GameRecord, GameRecord, list[Event]]:
    """(the game before its last move, after it, that move's events)."""
    while True:
        new, events = step(record)
        if new.state.phase == "finished":
            return record, new, events
        record = new
