"""Randomness is data: the same seed and moves give the same game, byte for byte."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from domain.bots.simulation import play_bots, play_game
from domain.game.cards import deck_for
from domain.game.engine import apply, new_game
from domain.game.rng import SeededRandom


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_same_seed_gives_the_same_event_log_byte_for_byte(players: int) -> None:
    bots = ["basic", "random", "basic", "random", "random"][:players]
    first = play_game(bots, f"det/{players}")
    second = play_game(bots, f"det/{players}")
    assert msgspec.json.encode(first.events) == msgspec.json.encode(second.events)
    assert first.state == second.state


def test_replaying_the_recorded_moves_gives_the_same_log() -> None:
    recorded = []

    def record(_before, seat, action, _after):
        recorded.append((seat, action))

    game = play_game(["random", "basic", "random"], "moves", on_action=record)
    state, events = new_game([(f"bot{i}", None) for i in range(3)], "moves")
    for seat, action in recorded:
        state, produced = apply(state, seat, action)
        events.extend(produced)
    # seats were humans here, bots there: only the GameStarted seat list differs
    assert msgspec.json.encode(events[1:]) == msgspec.json.encode(game.events[1:])
    assert state.results == game.state.results


def test_other_seeds_give_other_games() -> None:
    a, _ = new_game([("a", None), ("b", None)], "one")
    b, _ = new_game([("a", None), ("b", None)], "two")
    assert a.draw_pile != b.draw_pile
    assert sorted(a.draw_pile) == sorted(b.draw_pile) == sorted(deck_for(2))


def test_integer_and_string_seeds_are_the_same_seed() -> None:
    a, _ = new_game([("a", None)], 12345)
    b, _ = new_game([("a", None)], "12345")
    assert a.draw_pile == b.draw_pile


def reference_u64_stream(seed: str, count: int) -> list[int]:
    """SHA-256 in counter mode written out independently of `domain.game.rng`."""
    key = hashlib.sha256(b"ten-rng-v1\x00" + seed.encode()).digest()
    out: list[int] = []
    counter = 0
    while len(out) < count:
        block = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
        out.extend(int.from_bytes(block[i : i + 8], "big") for i in range(0, 32, 8))
        counter += 1
    return out[:count]


def test_the_shuffle_is_the_documented_algorithm_on_any_python() -> None:
    """The generator is SHA-256 in counter mode (no `random` module), and the shuffle is
    Fisher-Yates with rejection sampling: rebuilt here from its definition."""
    stream = iter(reference_u64_stream("portable", 4000))
    deck = deck_for(4)

    def below(n: int) -> int:
        limit = (1 << 64) - ((1 << 64) % n)
        while (value := next(stream)) >= limit:
            pass
        return value % n

    expected = list(deck)
    for i in range(len(expected) - 1, 0, -1):
        j = below(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert SeededRandom("portable").shuffled(deck) == expected
    state, _ = new_game([("a", None)] * 4, "portable")
    assert list(state.draw_pile) == expected
    assert state.starting_seat == below(4)


def test_the_stream_is_the_documented_generator() -> None:
    """randbelow draws the SHA-256 counter-mode stream in order, with rejection sampling,
    however many blocks a refill hashes at once; random() takes the next number."""
    stream = iter(reference_u64_stream("stream", 3000))
    rng = SeededRandom("stream")
    for i in range(2000):
        n = 1 + (i * 37) % 300
        limit = (1 << 64) - ((1 << 64) % n)
        while (value := next(stream)) >= limit:
            pass
        assert rng.randbelow(n) == value % n
        if i % 97 == 0:
            assert rng.random() == (next(stream) >> 11) / float(1 << 53)


def test_bots_in_a_served_game_replay_exactly() -> None:
    players = [("a", "basic"), ("b", "random"), ("c", "basic")]
    one, _ = new_game(players, "served")
    two, _ = new_game(players, "served")
    end_one, log_one = play_bots(one)
    end_two, log_two = play_bots(two)
    assert end_one.phase == "finished"
    assert msgspec.json.encode(log_one) == msgspec.json.encode(log_two)
    assert end_one == end_two
