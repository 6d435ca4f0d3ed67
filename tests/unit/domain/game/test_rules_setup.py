"""rules.md sections 1 and 2: the deck manifest, the player-count marks, the shuffle and setup."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.bots.basic import BOTS
from domain.game.cards import MANIFEST, deck_for
from domain.game.engine import new_game
from domain.game.errors import RuleError
from domain.game.model import BOT_LEVELS, Draw, GameStarted, Rules, SeatInfo, TurnStarted

COLORS = ("R", "B", "O", "G")
CURRENCY_COPIES = {"$1": 7, "$2": 6, "$3": 6, "$4": 4, "$5": 4}


def numbers(deck: list[str]) -> Counter[str]:
    return Counter(code for code in deck if code[0] in COLORS and code[1].isdigit())


# ------------------------------------------------------------------ deck manifest (1)


@pytest.mark.parametrize(("players", "size"), [(1, 81), (2, 81), (3, 105), (4, 129), (5, 129)])
def test_deck_size_per_player_count(players: int, size: int) -> None:
    assert len(deck_for(players)) == size
    state, _ = new_game([(f"P{i}", None) for i in range(players)], seed="size")
    assert len(state.draw_pile) == size


def test_full_deck_totals_by_kind() -> None:
    deck = Counter(deck_for(5))
    assert sum(deck.values()) == 129
    for color in COLORS:
        for n in range(1, 7):
            assert deck[f"{color}{n}"] == 3
        for n in (7, 8, 9):
            assert deck[f"{color}{n}"] == 1
        assert deck[f"{color}#"] == 2
    assert sum(numbers(list(deck.elements())).values()) == 84
    assert sum(deck[f"{c}#"] for c in COLORS) == 8
    assert all(deck[f"W{n}"] == 1 for n in range(1, 10))
    assert deck["W#"] == 1
    assert {code: deck[code] for code in CURRENCY_COPIES} == CURRENCY_COPIES
    assert sum(CURRENCY_COPIES.values()) == 27
    # nothing else in the deck: 84 + 8 + 9 + 1 + 27
    assert len(deck) == 36 + 4 + 9 + 1 + 5


def test_three_plus_mark_is_the_second_copy_of_one_to_six() -> None:
    three, two = Counter(deck_for(3)), Counter(deck_for(2))
    added = three - two
    assert added == Counter({f"{c}{n}": 1 for c in COLORS for n in range(1, 7)})
    assert sum(added.values()) == 24


def test_four_plus_mark_is_the_third_copy_of_one_to_six() -> None:
    four, three = Counter(deck_for(4)), Counter(deck_for(3))
    added = four - three
    assert added == Counter({f"{c}{n}": 1 for c in COLORS for n in range(1, 7)})
    assert sum(added.values()) == 24


def test_marks_are_manifest_data() -> None:
    marked = Counter((e.code, e.min_players) for e in MANIFEST if e.min_players > 1)
    expected = {(f"{c}{n}", mark): 1 for c in COLORS for n in range(1, 7) for mark in (3, 4)}
    assert marked == Counter(expected)


def test_small_deck_keeps_every_wild_and_currency_card() -> None:
    deck = Counter(deck_for(2))
    assert sum(deck[f"{c}#"] for c in COLORS) == 8
    assert sum(deck[f"W{n}"] for n in range(1, 10)) + deck["W#"] == 10
    assert {code: deck[code] for code in CURRENCY_COPIES} == CURRENCY_COPIES
    assert numbers(list(deck.elements())) == Counter(
        {f"{c}{n}": 1 for c in COLORS for n in range(1, 10)}
    )


# ------------------------------------------------------------------ shuffle and setup (2)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_seeded_shuffle_is_deterministic_and_a_permutation_of_the_deck(players: int) -> None:
    seats = [(f"P{i}", None) for i in range(players)]
    first, _ = new_game(seats, seed="same seed")
    again, _ = new_game(seats, seed="same seed")
    other, _ = new_game(seats, seed="another seed")
    assert first.draw_pile == again.draw_pile
    assert Counter(first.draw_pile) == Counter(deck_for(players))
    assert first.draw_pile != tuple(deck_for(players))  # shuffled, not in manifest order
    assert other.draw_pile != first.draw_pile


def test_starting_seat_drawn_from_the_seed_unless_named() -> None:
    seats = [(f"P{i}", None) for i in range(5)]
    drawn = {new_game(seats, seed=f"seat {k}")[0].starting_seat for k in range(30)}
    assert drawn <= {0, 1, 2, 3, 4}
    assert len(drawn) > 1  # not always the same seat
    first, _ = new_game(seats, seed="fixed")
    again, _ = new_game(seats, seed="fixed")
    assert first.starting_seat == again.starting_seat
    named, events = new_game(seats, seed="fixed", starting_seat=3)
    assert (named.starting_seat, named.active_seat) == (3, 3)
    assert events[-1] == TurnStarted(seq=2, version=0, seat=3)


def test_starting_seat_drawn_from_the_seed_with_an_explicit_deck_too() -> None:
    seats = [(f"P{i}", None) for i in range(5)]
    drawn = {new_game(seats, seed=f"s{k}", deck=["R1"])[0].starting_seat for k in range(30)}
    assert len(drawn) > 1
    assert (
        new_game(seats, seed="x", deck=["R1"])[0].starting_seat
        == new_game(seats, seed="x", deck=["R1"])[0].starting_seat
    )


def test_explicit_deck_order_is_respected(ten) -> None:
    state = ten.start(["B3", "$2", "R1", "W5"])
    assert state.draw_pile == ("B3", "$2", "R1", "W5")
    state, _ = ten.play(state, 0, Draw(), Draw(), Draw())
    assert state.tableau == ("B3", "$2", "R1")
    state, _ = ten.play(state, 0, Draw())
    assert state.auction is not None
    assert state.auction.card == "W5"


def test_explicit_deck_need_not_be_a_full_deck(ten) -> None:
    state = ten.start(["R1", "R1", "R1", "W#"], players=2)
    assert state.draw_pile == ("R1", "R1", "R1", "W#")


@pytest.mark.parametrize(
    "deck",
    [["R1", "R1", "R1", "R1"], ["W#", "W#"], ["W5", "B2", "W5"], ["R#", "R#", "R#"], ["$4"] * 5],
)
def test_a_deck_with_more_copies_of_a_card_than_the_game_has_is_refused(deck) -> None:
    """A custom deck is a reordered sub-deck of the 129 real cards (3 copies of R1, one W#,
    one W5, two R#, four $4)."""
    error = refused_setup("too_many_copies", [("Ann", None), ("Bob", None)], deck=deck)
    assert deck[0] in error.detail


def test_a_full_129_card_deck_in_any_order_is_accepted() -> None:
    deck = deck_for(5)[::-1]
    state, _ = new_game([("Ann", None)], seed="full", deck=deck, starting_seat=0)
    assert state.draw_pile == tuple(deck)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_each_player_starts_with_five_currency_and_the_supply_holds_the_rest(players) -> None:
    seats = [(name, None) for name in ("Ann", "Bob", "Cid", "Dee", "Eve")[:players]]
    state, events = new_game(seats, seed="tokens", deck=["R1", "B2"], starting_seat=0)
    assert [(p.seat, p.name, p.currency, p.bust, p.cards) for p in state.players] == [
        (i, name, 5, 0, ()) for i, (name, _) in enumerate(seats)
    ]
    assert state.supply_currency == 50 - 5 * players
    assert state.supply_bust == 15
    assert (state.phase, state.active_seat, state.tableau, state.market, state.discard) == (
        "draw",
        0,
        (),
        (),
        (),
    )
    assert events == [
        GameStarted(
            seq=1,
            version=0,
            players=tuple(
                SeatInfo(seat=i, name=name, bot=None) for i, (name, _) in enumerate(seats)
            ),
            rules=Rules(perfect_bonus=1),
            starting_seat=0,
            draw_pile_size=2,
            starting_currency=5,
            supply_currency=50 - 5 * players,
            supply_bust=15,
        ),
        TurnStarted(seq=2, version=0, seat=0),
    ]


def test_bot_seats_are_recorded() -> None:
    state, _ = new_game([("Ann", None), ("Bot", "basic"), ("Rnd", "random")], seed="b")
    assert [p.bot for p in state.players] == [None, "basic", "random"]


# ------------------------------------------------------------------ invalid setups


def refused_setup(code: str, players, **kwargs) -> RuleError:
    with pytest.raises(RuleError) as info:
        new_game(players, seed="bad", **kwargs)
    assert info.value.code == code
    return info.value


def test_no_players_is_invalid() -> None:
    refused_setup("invalid_game", [])


def test_six_players_is_invalid() -> None:
    refused_setup("invalid_game", [(f"P{i}", None) for i in range(6)])


@pytest.mark.parametrize("seat", [-1, 2, 5])
def test_starting_seat_outside_the_table_is_invalid(seat: int) -> None:
    refused_setup("invalid_game", [("Ann", None), ("Bob", None)], starting_seat=seat)


@pytest.mark.parametrize("code", ["R0", "X1", "r1", "$6", "W0", "B#1", ""])
def test_unknown_card_code_in_the_deck_is_refused(code: str) -> None:
    refused_setup("unknown_card", [("Ann", None), ("Bob", None)], deck=["R1", code, "B2"])


def test_empty_deck_is_invalid() -> None:
    refused_setup("invalid_game", [("Ann", None), ("Bob", None)], deck=[])


def test_unknown_bot_level_is_invalid() -> None:
    refused_setup("invalid_game", [("Ann", None), ("Bob", "grandmaster")])


def test_every_bot_level_a_seat_may_name_has_a_bot() -> None:
    assert set(BOTS) == set(BOT_LEVELS) == {"random", "basic", "expert", "master"}
    for level in BOT_LEVELS:
        state, _ = new_game([("Ann", None), ("Bot", level)], seed=f"level/{level}")
        assert state.players[1].bot == level
