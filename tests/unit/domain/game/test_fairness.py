"""Provably fair deals, scheme "ten-fair-v1" (domain/game/fairness.py): the commitment and
the deal's seed against vectors computed here with hashlib from the documented algorithm,
and `new_game` dealing from them."""

from __future__ import annotations

import hashlib

import pytest

from domain.game.cards import deck_for
from domain.game.engine import new_game
from domain.game.fairness import SCHEME, Fairness, commitment, deal_seed
from domain.game.rng import SeededRandom

PLAYERS = [("Ann", None), ("Bob", "basic"), ("Cid", None)]


def test_the_commitment_is_sha256_of_the_tagged_seed() -> None:
    for seed in ("0123456789abcdef0123456789abcdef", "é", ""):
        expected = hashlib.sha256(b"ten-commit-v1\x00" + seed.encode("utf-8")).hexdigest()
        assert commitment(seed) == expected
    assert commitment("abc") == hashlib.sha256(b"ten-commit-v1\x00abc").hexdigest()
    assert commitment("abc") != commitment("abd")


def test_the_deal_seed_is_the_seed_without_entropy() -> None:
    assert deal_seed("s33d", ["", "", ""]) == "s33d"
    assert deal_seed("s33d", []) == "s33d"


def test_the_deal_seed_frames_the_seed_and_each_seats_entropy() -> None:
    seed, entropy = "s33d", ["", "dé", "x"]
    framed = b"ten-deal-v1"
    for part in (seed.encode(), b"", "dé".encode(), b"x"):
        framed += len(part).to_bytes(4, "big") + part
    assert deal_seed(seed, entropy) == hashlib.sha256(framed).hexdigest()
    # the framing tells the seats apart: the same characters at another seat differ
    assert deal_seed(seed, ["a", "b"]) != deal_seed(seed, ["ab", ""])
    assert deal_seed(seed, ["a", ""]) != deal_seed(seed, ["", "a"])


def test_a_deal_without_entropy_is_the_deal_of_the_seed() -> None:
    state, events = new_game(PLAYERS, "fair/plain")
    rng = SeededRandom("fair/plain")
    assert state.draw_pile == tuple(rng.shuffled(deck_for(3)))
    assert state.starting_seat == rng.randbelow(3)
    assert events[0].fairness == Fairness(
        commitment=commitment("fair/plain"), entropy=("", "", ""), start_drawn=True
    )
    assert events[0].fairness.scheme == SCHEME
    assert state.seed == "fair/plain"  # the server's seed, kept (secret while live)
    assert state.fairness == events[0].fairness


def test_entropy_deals_from_the_combined_seed() -> None:
    entropy = ("ann's", "", "cid")
    state, events = new_game(PLAYERS, "fair/mixed", entropy=entropy, starting_seat=2)
    rng = SeededRandom(deal_seed("fair/mixed", entropy))
    assert state.draw_pile == tuple(rng.shuffled(deck_for(3)))
    assert state.starting_seat == 2
    assert events[0].fairness == Fairness(
        commitment=commitment("fair/mixed"), entropy=entropy, start_drawn=False
    )
    plain, _ = new_game(PLAYERS, "fair/mixed", starting_seat=2)
    assert plain.draw_pile != state.draw_pile
    assert state.seed == "fair/mixed"


def test_a_given_deck_is_not_verifiable() -> None:
    state, events = new_game(PLAYERS, "fair/deck", deck=["R1", "B2", "W#"])
    assert events[0].fairness is None
    assert state.fairness is None


def test_one_entropy_per_seat() -> None:
    with pytest.raises(ValueError, match="one entropy per seat"):
        new_game(PLAYERS, "fair/short", entropy=["a"])
