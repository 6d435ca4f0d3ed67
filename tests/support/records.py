"""Stored game records for the store contract suites: a new four-seat game and the same game
advanced by bot moves, with the events each step appends."""

from __future__ import annotations

from msgspec.structs import replace

from domain.bots.basic import BOTS, bot_rng
from domain.game.engine import apply, information_state, new_game, to_act
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.games.use_cases import encode_events, hash_token

PLAYERS = [("Zoë ✓", None), ("bob", "basic"), ("cy", "random"), ("dee", "basic")]


NOW = 1_760_000_000.25


TTL = 3600


def new_record(game_id: str, seed: str = "contract-seed") -> tuple[GameRecord, list[StoredEvent]]:
    state, events = new_game(PLAYERS, seed)
    record = GameRecord(
        id=game_id,
        state=state,
        token_hashes=(hash_token(f"{game_id}.0.secret"), None, None, None),
        created_at=NOW,
        updated_at=NOW,
    )
    return record, encode_events(events)


def advance(record: GameRecord, moves: int = 1) -> tuple[GameRecord, list[StoredEvent]]:
    """`moves` real bot moves from the record's state, and the events they produced."""
    state = record.state
    produced = []
    for _ in range(moves):
        seat = to_act(state)
        assert seat is not None, "the game ended: pick fewer moves"
        action = BOTS["basic"](information_state(state), seat, bot_rng(state.seed, state.version))
        state, events = apply(state, seat, action)
        produced.extend(events)
    assert state.version == record.version + moves
    return replace(record, state=state, updated_at=record.updated_at + moves), encode_events(
        produced
    )
