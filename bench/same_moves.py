"""Same moves: hashes the msgpack event logs of seeded games of basic bots
(`domain.bots.simulation.play_game`), to compare two checkouts' domains move for move. Run:
`PYTHONHASHSEED=0 .venv/bin/python bench/same_moves.py [GAMES]` in each tree (prints the
digests, asserts nothing)."""

from __future__ import annotations

import hashlib
import sys

import msgspec

from domain.bots.simulation import play_game


def digest(lineup: list[str], games: int, tag: str) -> bytes:
    """SHA-256 of the event logs of `games` seeded games of `lineup`."""
    encoder = msgspec.msgpack.Encoder()
    h = hashlib.sha256()
    for g in range(games):
        h.update(encoder.encode(play_game(lineup, f"same-moves/{tag}/{g}").events))
    return h.digest()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    sets = [
        (["basic"] * 2, n // 2, "2", "2 players"),
        (["basic"] * 3, n // 2, "3", "3 players"),
        (["basic"] * 4, n, "4", "4 players"),
        (["random", "basic", "basic", "basic"], n // 2, "mixed", "random+3 basic"),
    ]
    total = hashlib.sha256()
    for lineup, games, tag, name in sets:
        d = digest(lineup, games, tag)
        total.update(d)
        print(name, games, "games", d.hex()[:16])
    print("all", total.hexdigest())


if __name__ == "__main__":
    main()
