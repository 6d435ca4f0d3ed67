"""Game records in the "ten-game-record" shape (version 1) built from the engine alone, for
the stand-alone verifier's tests (clients/verifier/ten_verify.py): a game dealt by
`new_game`, played to its end by bots (`play_bots`), its events as published, its deck as
dealt and its seed revealed. Also: the verifier loaded from its file, as a user runs it."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import msgspec

from domain.bots.simulation import play_bots
from domain.game.engine import new_game

VERIFIER = Path(__file__).resolve().parents[2] / "clients" / "verifier" / "ten_verify.py"
LEVELS = ("basic", "random")


def bot_record(
    players: int,
    seed: str,
    entropy: Sequence[str] | None = None,
    *,
    starting_seat: int | None = None,
    deck: Sequence[str] | None = None,
) -> dict:
    """A finished game of `players` bots as a record: what the verifier reads."""
    seats = [(f"Bot {i + 1}", LEVELS[i % 2]) for i in range(players)]
    state, started = new_game(seats, seed, entropy=entropy, starting_seat=starting_seat, deck=deck)
    dealt = list(state.draw_pile)
    final, played = play_bots(state)
    assert final.phase == "finished"
    events = json.loads(msgspec.json.encode([*started, *played]))
    fair = events[0]["fairness"]
    return {
        "format": "ten-game-record",
        "record_version": 1,
        "id": f"game-{players}-{seed}",
        "status": "finished",
        "created_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T00:10:00Z",
        "player_count": players,
        "rules": events[0]["rules"],
        "clock": None,
        "tournament": None,
        "seats": [
            {"seat": i, "name": name, "player_id": None, "bot": bot}
            for i, (name, bot) in enumerate(seats)
        ],
        "fairness": {
            "verifiable": fair is not None,
            "scheme": None if fair is None else fair["scheme"],
            "commitment": None if fair is None else fair["commitment"],
            "entropy": [""] * players if fair is None else fair["entropy"],
            "start_drawn": fair is not None and fair["start_drawn"],
            "seed": seed,
        },
        "deck": dealt,
        "events": events,
        "results": json.loads(msgspec.json.encode(final.results)),
    }


def load_verifier() -> ModuleType:
    """The verifier module, loaded from its file (it is no package of the repository)."""
    spec = importlib.util.spec_from_file_location("ten_verify", VERIFIER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
