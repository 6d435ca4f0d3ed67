"""The domain leaves no reference cycles behind: what a game allocates is freed by reference
counting as soon as it is dropped, never left to CPython's cyclic collector.

Cyclic garbage is what the collector must find and free, and in a serving process under load
that was a tenth of its CPU: scoring's search (a closure calling itself) left one cycle per
collection scored, some 40 objects per action of a table with bots (bench/README.md, "The
collector's garbage"). These games are played with the collector off, then one collection
counts what it finds unreachable: nothing.
"""

from __future__ import annotations

import gc

import pytest

from domain.bots.simulation import play_game
from domain.game import scoring


@pytest.fixture
def collector_off():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "bots",
    [("basic", "basic", "basic", "basic"), ("expert", "basic"), ("random", "basic", "expert")],
    ids="-".join,
)
def test_bot_games_leave_no_cycles(collector_off, bots):
    games = [play_game(list(bots), f"cycles/{'-'.join(bots)}/{n}") for n in range(3)]
    assert all(game.state.phase == "finished" for game in games)
    del games
    assert gc.collect() == 0


def test_scoring_searches_leave_no_cycles(collector_off):
    # collections with runs in several colours and shared wild cards: the search runs
    # (nothing cached: each collection is scored the first time here)
    hands = [
        ["R1", "R2", "R3", "B4", "B5", "R#", "B#", "W#", "O7", "O8", "G2", "G3", f"W{n}"]
        for n in range(1, 10)
    ]
    totals = [scoring.best_total(hand) for hand in hands]
    assert all(total > 0 for total in totals)
    assert gc.collect() == 0
