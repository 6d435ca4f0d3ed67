"""domain.bots.odds: exact bust odds and the value of drawing against stopping.

Checked three ways: against brute force over every order of a tiny explicit deck (each
order's next card drawn by the engine), against Monte Carlo on full shuffled decks
(a tolerance of four standard errors of the sample), and for not depending on the pile's
order at all.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction
from itertools import permutations

import pytest
from msgspec.structs import replace

from domain.bots.basic import basic_bot
from domain.bots.next_card import card_kinds
from domain.bots.odds import bust_odds, draw_value, unseen_cards
from domain.game.cards import ALL_CODES, WILDS
from domain.game.engine import apply, bust_kind, information_state, new_game, to_act
from domain.game.model import Draw, GameState, Stop
from domain.game.rng import SeededRandom
from domain.game.scoring import best_total

DRAW = Draw()


def holding(player, bonus: int) -> Fraction:
    """The oracle's price of a seat (odds' docstring): points + bidding power / 3."""
    return best_total(player.cards, bonus) + Fraction(player.bidding_power, 3)


def oracle_value(before: GameState, after: GameState, seat: int) -> Fraction:
    bonus = before.rules.perfect_bonus
    changes = [
        holding(new, bonus) - holding(old, bonus)
        for old, new in zip(before.players, after.players, strict=True)
    ]
    others = [c for s, c in enumerate(changes) if s != seat]
    return changes[seat] - (sum(others) / len(others) if others else 0)


def oracle_stop(state: GameState) -> Fraction:
    seat = state.active_seat
    return max(
        oracle_value(state, apply(state, seat, Stop(take=t))[0], seat)
        for t in ("numbers", "currency")
    )


def brute_force(state: GameState) -> tuple[Fraction, Fraction, Fraction]:
    """Over every order of the pile: the share of orders whose next card busts by numbers,
    by currency, and the mean value of the best stop after that draw."""
    seat = state.active_seat
    orders = list(permutations(state.draw_pile))
    kinds: Counter[str] = Counter()
    total = Fraction(0)
    now = replace(state, drawn=True)
    for order in orders:
        before = replace(state, draw_pile=order)
        after, events = apply(before, seat, DRAW)
        if order[0] in WILDS:  # an auction; the tableau stays: the best stop now
            total += oracle_stop(now)
            continue
        busted = [e for e in events if e.__class__.__name__ == "Busted"]
        if busted:
            kinds[busted[0].kind] += 1
            total += oracle_value(before, after, seat)
        else:
            total += oracle_stop(after)
    n = len(orders)
    return Fraction(kinds["numbers"], n), Fraction(kinds["currency"], n), total / n


TINY_DECKS = [
    # (deck, draws made before the odds are taken), every deck 8 cards or fewer
    (["R5", "$2", "B4", "R6", "$5", "G3", "W#"], 2),
    (["R9", "B1", "$3", "O8", "G2", "R#", "$4"], 2),
    (["$5", "$4", "$1", "R3", "$2", "B9", "G7"], 2),
    (["G9", "R8", "B7", "$1", "O2", "R1", "W3", "$5"], 1),
    (["B6", "$1", "$3", "R4", "O5", "O6", "G1"], 3),
]


@pytest.mark.parametrize(("deck", "draws"), TINY_DECKS)
@pytest.mark.parametrize("players", [1, 2, 3])
def test_odds_match_every_order_of_a_tiny_deck(deck: list[str], draws: int, players: int) -> None:
    state, _ = new_game(
        [(f"p{i}", None) for i in range(players)], "tiny", deck=deck, starting_seat=0
    )
    for _ in range(draws):
        state, _ = apply(state, 0, DRAW)
        assert (state.phase, state.active_seat) == ("draw", 0), "the deck must not bust early"
    view = information_state(state)
    pile = Counter(state.draw_pile)  # an explicit deck: the pile is what the test says
    numbers, currency, draw = brute_force(state)
    odds = bust_odds(view, pile)
    assert (odds.numbers, odds.currency) == (numbers, currency)
    assert odds.wild == Fraction(sum(pile[w] for w in WILDS), len(state.draw_pile))
    value = draw_value(view, unseen=pile)
    assert value.draw == draw
    assert value.stop == oracle_stop(state)
    assert value.advantage == draw - value.stop


def test_the_tiny_decks_bust_both_ways() -> None:
    """The decks above reach both kinds of bust (else the split would go untested)."""
    kinds = set()
    for deck, draws in TINY_DECKS:
        state, _ = new_game([("a", None), ("b", None)], "tiny", deck=deck, starting_seat=0)
        for _ in range(draws):
            state, _ = apply(state, 0, DRAW)
        numbers, currency, _ = brute_force(state)
        kinds |= {"numbers"} if numbers else set()
        kinds |= {"currency"} if currency else set()
    assert kinds == {"numbers", "currency"}


def draw_decisions(players: int, seed: str, every: int = 7) -> list[GameState]:
    """States of a basic-bot game on a standard shuffled deck where the active seat has
    drawn and may draw again (one in `every`)."""
    state, _ = new_game([(f"b{i}", "basic") for i in range(players)], seed)
    rng = SeededRandom(f"odds/{seed}")
    found = []
    while (seat := to_act(state)) is not None:
        if state.phase == "draw" and state.drawn and state.draw_pile and state.tableau:
            found.append(state)
        state, _ = apply(state, seat, basic_bot(information_state(state), seat, rng))
    return found[::every]


@pytest.mark.parametrize("players", [2, 4])
def test_unseen_cards_are_the_pile_of_a_standard_deck(players: int) -> None:
    for state in draw_decisions(players, f"unseen/{players}", every=1):
        assert unseen_cards(information_state(state)) == Counter(state.draw_pile)


@pytest.mark.parametrize("players", [2, 3, 5])
def test_odds_agree_with_monte_carlo_on_full_decks(players: int) -> None:
    """Many sampled orders of the real pile: the bust shares and the mean value after one
    draw lie within four standard errors of the exact figures (seeded: not flaky)."""
    samples = 400
    states = draw_decisions(players, f"mc/{players}")[:6]
    assert states
    for k, state in enumerate(states):
        view = information_state(state)
        odds = bust_odds(view)
        exact = draw_value(view)
        rng = SeededRandom(f"mc/{players}/{k}")
        kinds: Counter[str] = Counter()
        values = []
        for _ in range(samples):
            pile = tuple(rng.shuffled(state.draw_pile))
            one = brute_force_one(replace(state, draw_pile=pile))
            kinds[one[0]] += 1
            values.append(one[1])
        for kind, p in (("numbers", odds.numbers), ("currency", odds.currency)):
            se = math.sqrt(float(p * (1 - p)) / samples)
            assert abs(kinds[kind] / samples - float(p)) <= 4 * se + 1 / samples
        mean = sum(values) / samples
        sd = math.sqrt(float(sum((v - mean) ** 2 for v in values)) / (samples - 1))
        assert abs(float(mean) - float(exact.draw)) <= 4 * sd / math.sqrt(samples) + 1e-9


def brute_force_one(state: GameState) -> tuple[str, Fraction]:
    """One order: how the next draw ends (numbers / currency bust, or none) and its value."""
    seat = state.active_seat
    if state.draw_pile[0] in WILDS:
        return "none", oracle_stop(state)
    after, events = apply(state, seat, DRAW)
    busted = [e for e in events if e.__class__.__name__ == "Busted"]
    if busted:
        return busted[0].kind, oracle_value(state, after, seat)
    return "none", oracle_stop(after)


def test_the_pile_order_changes_nothing() -> None:
    """Two games whose piles hold the same cards in other orders: the same odds."""
    for state in draw_decisions(3, "order")[:8]:
        other = replace(state, draw_pile=tuple(SeededRandom("x").shuffled(state.draw_pile)))
        assert other.draw_pile != state.draw_pile
        a, b = information_state(state), information_state(other)
        assert bust_odds(a) == bust_odds(b)
        assert draw_value(a) == draw_value(b)


def test_explicit_decks_in_other_orders_give_the_same_odds() -> None:
    deck = ["R2", "B3", "$1", "O4", "G5", "R7", "$3", "B#", "O9", "G1", "$2", "R3"]
    reordered = deck[:2] + list(reversed(deck[2:]))
    views = []
    for d in (deck, reordered):
        state, _ = new_game([("a", None), ("b", None)], "same", deck=d, starting_seat=0)
        for _ in range(2):
            state, _ = apply(state, 0, DRAW)
        views.append(information_state(state))
    assert views[0] == views[1]
    assert bust_odds(views[0]) == bust_odds(views[1])
    assert draw_value(views[0]) == draw_value(views[1])


def test_before_the_first_draw_there_is_no_stop() -> None:
    state, _ = new_game([("a", None), ("b", None)], "first")
    value = draw_value(information_state(state))
    assert (value.stop, value.advantage) == (None, None)
    assert value.draw is not None


def test_no_draw_from_an_empty_pile() -> None:
    state, _ = new_game([("a", None), ("b", None)], "e", deck=["R1", "B2"], starting_seat=0)
    for _ in range(2):
        state, _ = apply(state, 0, DRAW)
    value = draw_value(information_state(state), unseen=Counter())
    assert value.draw is None
    assert value.stop is not None
    assert bust_odds(information_state(state), Counter()).unseen == 0


def test_the_kinds_kept_by_sums_are_the_engines_for_every_card() -> None:
    # `card_kinds` answers for a tableau from the first one met with the same sums
    rng = random.Random(5)
    pool = sorted(code for code in ALL_CODES if code not in WILDS)
    tableaus = [()]
    for _ in range(300):
        tableau = tuple(rng.choice(pool) for _ in range(rng.randrange(0, 6)))
        if bust_kind(tableau) is None:
            tableaus.append(tableau)
    for tableau in tableaus:
        kinds = card_kinds(tableau)
        assert kinds.keys() == ALL_CODES
        for code in ALL_CODES:
            expected = "wild" if code in WILDS else bust_kind((*tableau, code))
            assert kinds[code] == expected, (tableau, code)
