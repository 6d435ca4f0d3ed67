"""`domain.bots.luck`: the value a card's luck is counted by, and the position it values."""

from __future__ import annotations

import pytest

from domain.bots import luck
from domain.bots.luck_table import WEIGHTS
from domain.bots.master import settle
from domain.bots.winning import margins
from domain.game.engine import apply, information_state, new_game
from domain.game.legal import legal_actions
from domain.game.model import Draw, Player, Stop


def _player(seat: int = 0, **fields) -> Player:
    return Player(seat=seat, name=f"p{seat}", **fields)


def test_a_seats_features_count_what_it_holds() -> None:
    p = _player(currency=2, bust=1, cards=("R1", "R2", "R3", "R5", "B4", "B4", "W#"))
    # red 1-5 with W# as R4 scores 5, blue 4 scores 1 (the second B4 adds nothing)
    assert dict(zip(luck.FEATURES, luck.features(p, 1), strict=True)) == {
        "points": 6.0,
        "power": 5.0,  # 2 currency + a bust token at 3
        "spare": 1.0,  # 7 cards, 6 in the scored runs
        "distinct": 6.0,  # R1 R2 R3 R5 B4, and one wild card
        "wilds": 1.0,
        "near": 7.0,  # red 1-5 with the 4 filled; blue 4-5 with the 5 filled
        "bust": 1.0,
    }
    assert luck.features(_player(), 1) == (0.0,) * len(luck.FEATURES)


@pytest.mark.parametrize(
    ("numbers", "near"),
    [
        (set(), 0),
        ({9}, 1),
        ({8}, 2),
        ({1, 3}, 3),
        ({1, 3, 5}, 3),
        ({2, 3, 4, 6, 7}, 6),
        ({1, 2, 3, 4, 5, 6, 7, 8, 9}, 9),
    ],
)
def test_near_is_the_longest_run_with_one_gap_filled(numbers: set[int], near: int) -> None:
    cards = tuple(f"G{n}" for n in sorted(numbers))
    assert luck.features(_player(cards=cards), 1)[luck.FEATURES.index("near")] == near


def test_the_seats_values_are_margins_of_the_weighted_features() -> None:
    state, _ = new_game([("a", None), ("b", None), ("c", None)], "luck/value")
    players = (
        _player(0, currency=5, cards=("R1", "R2")),
        _player(1, currency=1, bust=2, cards=("B7",)),
        _player(2, currency=9, cards=("W3", "O2", "O4")),
    )
    position = state.__class__(
        **{**{f: getattr(state, f) for f in state.__struct_fields__}, "players": players}
    )
    relative = luck.relative_features(position)
    for f in range(len(luck.FEATURES)):
        column = [relative[s][f] for s in range(3)]
        assert sum(column) == pytest.approx(0.0, abs=1e-12)
        own = [luck.features(p, 1)[f] for p in players]
        assert column[0] == pytest.approx(own[0] - (own[1] + own[2]) / 2)
    for share in (0.0, 0.37, 1.0):
        w = luck.weights(3, share)
        assert w == pytest.approx([a + (b - a) * share for a, b in WEIGHTS[3]])
        v = luck.value(position, share)
        assert sum(v) == pytest.approx(0.0, abs=1e-9)
        assert v == pytest.approx([sum(a * x for a, x in zip(w, r, strict=True)) for r in relative])


def test_every_player_count_has_a_weight_per_feature_at_each_end_of_the_pile() -> None:
    assert sorted(WEIGHTS) == [1, 2, 3, 4, 5]
    for weights in WEIGHTS.values():
        assert len(weights) == len(luck.FEATURES)
        assert all(len(pair) == 2 for pair in weights)


def test_the_outcome_of_a_number_card_is_the_drawers_better_stop_played_out() -> None:
    state, _ = new_game(
        [("a", None), ("b", None)],
        "luck/stop",
        deck=["R1", "$4", "R2", "B3", "B4"],
        starting_seat=0,
    )
    state = information_state(apply(state, 0, Draw())[0])  # R1 in the tableau; the pile hidden
    after = luck.outcome(state, 0, "$4")
    drawn, _ = apply(state, 0, Draw(), card="$4")
    stops = [settle(apply(drawn, 0, a)[0]) for a in legal_actions(drawn, 0) if type(a) is Stop]
    assert len(stops) == 2
    best = max(stops, key=lambda s: margins(s)[0])
    assert after == best
    assert after.phase != "draw" or after.active_seat != 0 or not after.drawn


def test_the_outcome_of_a_wild_card_is_its_auction_played_out() -> None:
    state, _ = new_game(
        [("a", None), ("b", None)],
        "luck/wild",
        deck=["R1", "W#", "R2", "B3", "B4"],
        starting_seat=0,
    )
    state = information_state(apply(state, 0, Draw())[0])
    drawn, _ = apply(state, 0, Draw(), card="W#")
    assert drawn.phase == "auction"
    after = luck.outcome(state, 0, "W#")
    assert after.phase != "auction"
    # the wild card went to a seat or was discarded, and the drawer then took its better stop
    assert any("W#" in p.cards for p in after.players) or "W#" in after.discard
    assert not (after.phase == "draw" and after.drawn and after.active_seat == 0)


def test_a_bust_is_its_own_outcome() -> None:
    state, _ = new_game(
        [("a", None), ("b", None)], "luck/bust", deck=["R9", "B2", "G1", "B3"], starting_seat=0
    )
    state = information_state(apply(state, 0, Draw())[0])  # R9
    after = luck.outcome(state, 0, "B2")  # 11 by numbers: a bust
    assert after.players[0].bust == 1
    assert after.tableau == ()
