"""Every game unchanged: a golden digest of a few hundred seeded games, replayed.

Each game is played again and reduced to a SHA-256 of its whole record: every decision's
seat, the legal actions listed to that seat, the action the bot chose, the events, and
the end state (results included). The digests were written by the engine as it was
before it was restructured (`python -m tests.unit.domain.game.test_golden_games --write`); any change
to a rule, a payment choice, a score, a bot's choice or an event shows up as a game whose
digest differs. Rewrite the file only for an intended change of the rules, and say so.

The games: 1 to 5 players with random bots, basic bots and both mixed, through
`play_game` (one random stream per game) and through `play_bots` (the service's turn
loop, a random stream per version), and games on custom decks (reordered sub-decks of
the real cards).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import msgspec

from domain.bots.simulation import play_bots, play_game
from domain.game.cards import deck_for
from domain.game.engine import new_game, to_act
from domain.game.legal import legal_actions
from domain.game.rng import SeededRandom

GOLDEN = Path(__file__).with_name("golden") / "games.json"
MIXES = {
    "random": lambda n: ["random"] * n,
    "basic": lambda n: ["basic"] * n,
    "mixed": lambda n: [("basic", "random")[i % 2] for i in range(n)],
}
SEEDS_PER_MIX = 20
_enc = msgspec.json.encode


def _legal(state, seat: int) -> bytes:
    return _enc(legal_actions(state, seat))


def _digest(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def simulated(bots: list[str], seed: str) -> str:
    """A `play_game` game: every decision (seat, legal actions, move), events, end state."""
    record: list[bytes] = []

    def on_action(before, seat, action, _after) -> None:
        assert to_act(before) == seat
        record.append(_enc([seat, action]))
        record.append(_legal(before, seat))

    game = play_game(bots, seed, on_action=on_action)
    return _digest([*record, _enc(game.events), _enc(game.state), _enc(game.actions)])


def served(bots: list[str], seed: str, deck: list[str] | None = None) -> str:
    """A game the service's turn loop (`play_bots`) plays from creation to the end."""
    state, events = new_game([(f"b{i}", b) for i, b in enumerate(bots)], seed, deck=deck)
    state, produced = play_bots(state)
    return _digest([_enc(events), _enc(produced), _enc(state)])


def custom_deck(players: int, seed: str) -> list[str]:
    """A reordered sub-deck of the real cards: what a table can actually lay out."""
    rng = SeededRandom(f"golden-deck/{seed}")
    cards = rng.shuffled(deck_for(5))
    return cards[: 30 + rng.randbelow(len(cards) - 30)]


def all_games() -> dict[str, str]:
    games: dict[str, str] = {}
    for players in range(1, 6):
        for mix, bots in MIXES.items():
            for i in range(SEEDS_PER_MIX):
                seed = f"golden/{players}/{mix}/{i}"
                games[f"play_game {seed}"] = simulated(bots(players), seed)
        for mix, bots in MIXES.items():
            for i in range(3):
                seed = f"golden-served/{players}/{mix}/{i}"
                games[f"play_bots {seed}"] = served(bots(players), seed)
                deck = custom_deck(players, seed)
                games[f"play_bots deck {seed}"] = served(bots(players), seed, deck)
    return games


def test_every_golden_game_plays_exactly_as_recorded() -> None:
    expected = json.loads(GOLDEN.read_text())
    actual = all_games()
    assert len(actual) == len(expected) >= 300
    changed = sorted(name for name, digest in actual.items() if expected.get(name) != digest)
    assert not changed, f"{len(changed)} games changed, first: {changed[:5]}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.unit.domain.game.test_golden_games --write")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(all_games(), indent=1, sort_keys=True) + "\n")
