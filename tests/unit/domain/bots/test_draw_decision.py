"""The expert's cheaper searches give the answers of the exhaustive ones.

- `odds.draw_decision` (bounds on the next card's outcomes, most cards never priced)
  against `odds.draw_value` (every distinct unseen card drawn and both stops made by the
  engine): the same verdict (draw is worth more than stopping) and the same stops, with
  the expert's valuation and with `net_value` (exact Fractions), on the draw decisions of
  seeded games and on states built to reach the bounds' edges (a seat at the currency
  cap, the last card, a seat holding W#, wild-heavy collections, explicit decks).
- the expert's buy (purchases priced best bound first) against pricing every purchase.
- the scoring properties the bounds rest on: a wild card of a colour scores at least as
  much as any number card of that colour in its place, W# (when not held) at least as
  much as any number card.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest
from msgspec.structs import replace

from domain.bots.basic import BOTS, bot_rng
from domain.bots.expert import expert_bot, expert_value
from domain.bots.odds import (
    draw_decision,
    draw_value,
    net_value,
    stop_values,
    unseen_cards,
)
from domain.game.cards import COLORS, FULL_WILD, NUMBER_CARDS, WILDS, deck_for
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.legal import legal_actions
from domain.game.model import Buy, Decline, Draw, GameState, Stop
from domain.game.rng import SeededRandom
from domain.game.scoring import best_total

DRAW = Draw()


def play(lineup: tuple[str, ...], seed: str) -> list[GameState]:
    """Every state of a seeded game between the bots of `lineup` (moves as the service's)."""
    state, _ = new_game([(f"p{i}", None) for i in range(len(lineup))], seed)
    states = [state]
    while (seat := to_act(state)) is not None:
        move = BOTS[lineup[seat]](
            information_state(state), seat, bot_rng(state.seed, state.version)
        )
        state, _ = apply(state, seat, move)
        states.append(state)
    return states


def exhaustive(view: GameState, value, unseen=None) -> tuple[bool, dict]:
    """The verdict of drawing every distinct unseen card and making both stops with the
    engine (`draw_value` as it was before `draw_decision`), and the stops now."""
    now = replace(view, drawn=True)
    stops = stop_values(now, value)
    stop = max(stops.values())
    unseen = unseen_cards(view) if unseen is None else unseen
    total = sum(unseen.values())
    if not (view.drawn and total and view.draw_pile):
        return False, stops
    seat, bonus = view.active_seat, view.rules.perfect_bonus
    expected = Fraction(0)
    for code, count in sorted(unseen.items()):
        if code in WILDS:
            outcome = stop
        else:
            after, _ = apply(view, seat, DRAW, card=code)
            if after.tableau:
                outcome = max(stop_values(after, value).values())
            else:
                outcome = value(view.players, after.players, seat, bonus)
        expected += count * outcome
    odds = draw_value(view, value, unseen)
    assert (odds.draw, odds.stop) == (expected / total, stop)  # draw_value is exact too
    return expected / total > stop, stops


def draw_views(lineups: list[tuple[str, ...]], seeds: int, every: int = 1) -> list[GameState]:
    views = []
    for lineup in lineups:
        for k in range(seeds):
            for state in play(lineup, f"decide/{len(lineup)}/{k}")[::every]:
                if state.phase == "draw" and state.drawn:
                    views.append(information_state(state))
    return views


def check(views: list[GameState], value) -> Counter[bool]:
    verdicts: Counter[bool] = Counter()
    for view in views:
        verdict, stops = draw_decision(view, value)
        assert (verdict, stops) == exhaustive(view, value), view
        verdicts[verdict] += 1
    return verdicts


def test_the_expert_valuation_gets_the_exhaustive_verdict_in_played_games() -> None:
    views = draw_views([("expert", "basic"), ("expert", "expert", "basic", "expert")], 2)
    verdicts = check(views, expert_value)
    assert verdicts[True] > 20
    assert verdicts[False] > 10


def test_net_value_gets_the_exhaustive_verdict_in_played_games() -> None:
    views = draw_views([("basic", "expert", "basic")], 2, every=3)
    verdicts = check(views, net_value)
    assert verdicts[True] > 3
    assert verdicts[False] > 3


def built(
    tableau: tuple[str, ...], cards: tuple[str, ...], currency: int, players: int = 2, bust: int = 0
) -> GameState:
    """A view where seat 0 has drawn `tableau` (the rest of the deck shuffled below) and
    holds `cards`, `currency` tokens and `bust` tokens."""
    state, _ = new_game([(f"p{i}", None) for i in range(players)], "built", starting_seat=0)
    pile = list(state.draw_pile)
    for code in (*tableau, *cards):
        pile.remove(code)
    me = replace(state.players[0], cards=cards, currency=currency, bust=bust)
    state = replace(state, draw_pile=(*tableau, *pile), players=(me, *state.players[1:]))
    for _ in tableau:
        state, _ = apply(state, 0, DRAW)
    assert state.tableau == tableau
    assert state.phase == "draw"
    return information_state(state)


EDGES = [
    # at the currency cap: the reward for currency brings nothing (ties: draw == stop)
    (("$1", "$1", "$1"), ("R1", "R2", "B5"), 10),
    (("$4",), ("R1", "R2", "R3", "O7"), 7),
    (("$3", "$4"), (), 2),
    # number cards: the reward for numbers leads
    (("G1", "R1"), ("R3", "R4", "G3", "R#"), 10),
    (("O5", "O1", "B4"), ("O2", "O3", "B#", "W#", "W5"), 2),
    # wild-heavy collections, W# held or not
    (("B2", "$2"), ("R#", "R#", "B#", "O#", "G#", "W1", "W9", "W#", "R5"), 4),
    (("R8", "$4"), ("B#", "B#", "O#", "W2", "W3", "W4", "G5", "G6"), 6),
    (("O9", "$3"), ("O#", "G#", "W7", "W8", "B1", "B2", "B3", "B4", "B5", "B6"), 0),
]
WILD_HEAVY = ("W#", "W1", "O#", "O#", "W5", "W6", "G3", "R6", "G1", "W9", "W3", "G#", "B4", "R4")


@pytest.mark.parametrize(("tableau", "cards", "currency"), EDGES)
@pytest.mark.parametrize("players", [1, 2, 4])
def test_built_states_get_the_exhaustive_verdict(
    tableau: tuple[str, ...], cards: tuple[str, ...], currency: int, players: int
) -> None:
    view = built(tableau, cards, currency, players)
    for value in (expert_value, net_value):
        assert draw_decision(view, value) == exhaustive(view, value)


def test_a_currency_card_can_be_worse_than_the_stop_now() -> None:
    """Its reward for numbers hands the others more tokens: only the reward for currency
    now bounds it from below (found in a played game; with the stop now as its bound the
    verdict was wrong)."""
    view = built(("G7", "B1"), WILD_HEAVY, 10, bust=1)
    assert draw_decision(view, expert_value) == exhaustive(view, expert_value)
    assert draw_decision(view, expert_value)[0] is False


def test_the_last_card_and_explicit_decks_get_the_exhaustive_verdict() -> None:
    deck = ["R2", "B3", "$1", "O4", "G5", "R7", "$3", "B#", "O9", "G1", "$2", "R3"]
    state, _ = new_game([("a", None), ("b", None)], "deck", deck=deck, starting_seat=0)
    seen = 0
    while (seat := to_act(state)) is not None:
        view = information_state(state)
        if view.phase == "draw" and view.drawn:
            pile = Counter(state.draw_pile)  # what this deck's pile holds
            for value in (expert_value, net_value):
                for unseen in (None, pile):
                    assert draw_decision(view, value, unseen) == exhaustive(view, value, unseen)
            seen += 1
        move = BOTS["expert"](view, seat, SeededRandom("deck"))
        state, _ = apply(state, seat, move)
    assert seen >= 3


def exhaustive_buy(view: GameState, seat: int):
    """Every purchase priced by the engine: the first of the highest value above 0."""
    state = view
    best = (0.0, Decline())
    for action in legal_actions(view, seat):
        if type(action) is Buy:
            after, _ = apply(state, seat, action)
            value = expert_value(state.players, after.players, seat, view.rules.perfect_bonus)
            if value > best[0]:
                best = (value, action)
    return best[1]


def test_the_expert_buys_what_pricing_every_purchase_buys() -> None:
    kinds: Counter[str] = Counter()
    for lineup in (("expert", "basic"), ("basic", "expert", "expert")):
        for k in range(3):
            for state in play(lineup, f"buy/{k}"):
                if state.phase in ("buy", "final_buy"):
                    seat = to_act(state)
                    assert seat is not None
                    view = information_state(state)
                    action = expert_bot(view, seat, SeededRandom("buy"))
                    assert action == exhaustive_buy(view, seat)
                    kinds[type(action).__name__] += 1
    assert kinds["Buy"] > 5
    assert kinds["Decline"] > 5


def test_a_wild_card_scores_at_least_what_a_number_card_of_its_colour_would() -> None:
    rng = random.Random(23)
    wilds = [f"{c}#" for c in COLORS] * 2 + [f"W{n}" for n in range(1, 10)] + [FULL_WILD]
    numbers = sorted(NUMBER_CARDS)
    for _ in range(400):
        cards = rng.sample(numbers, rng.randint(0, 14)) + rng.sample(wilds, rng.randint(0, 8))
        for card in numbers:
            with_card = best_total([*cards, card])
            assert best_total([*cards, f"{card[0]}#"]) >= with_card
            if FULL_WILD not in cards:
                assert best_total([*cards, FULL_WILD]) >= with_card


def test_a_purchase_scores_at_most_the_collection_with_w_sharp_added() -> None:
    """The expert's first bound on a buy: any card bought, any cards paid, scores no more
    than the collection with W# added (when it holds none; not when it holds one)."""
    rng = random.Random(29)
    wilds = [f"{c}#" for c in COLORS] * 2 + [f"W{n}" for n in range(1, 10)]
    numbers = sorted(NUMBER_CARDS)
    cards_to_buy = [*numbers, *wilds, FULL_WILD]
    for _ in range(300):
        cards = rng.sample(numbers, rng.randint(0, 16)) + rng.sample(wilds, rng.randint(0, 10))
        most = best_total([*cards, FULL_WILD])
        for card in rng.sample(cards_to_buy, 12):
            paid = rng.sample(cards, rng.randint(0, min(3, len(cards))))
            kept = list(cards)
            for code in paid:
                kept.remove(code)
            assert best_total([*kept, card]) <= most
    held = ["R1", "R3", FULL_WILD]  # W# held: a second one scores nothing, a card may
    assert best_total([*held, "R2"]) > best_total([*held, FULL_WILD])


def test_the_stop_now_is_one_of_the_two_rewards() -> None:
    """`draw_decision`'s stops are those of the view as it is (what the expert takes)."""
    view = built(("R5", "$2"), ("R4", "R6"), 3)
    _, stops = draw_decision(view, expert_value)
    state = view
    seat = view.active_seat
    for take in ("numbers", "currency"):
        after, _ = apply(state, seat, Stop(take=take))
        assert stops[take] == expert_value(state.players, after.players, seat, 1)


def test_unseen_cards_drop_what_an_explicit_deck_shows_beyond_the_standard() -> None:
    """Three R1 in a two-player game (its standard deck has one, the full game three):
    none is unseen and no count is negative; every other card keeps its standard count."""
    deck = ["R1", "R1", "R1", "B2", "$1", "O4"]
    state, _ = new_game([("a", None), ("b", None)], "seen", deck=deck, starting_seat=0)
    for _ in range(3):
        state, _ = apply(state, 0, DRAW)
    view = information_state(state)
    assert view.tableau == ("R1", "R1", "R1")
    unseen = unseen_cards(view)
    assert "R1" not in unseen
    assert min(unseen.values()) > 0
    assert unseen == Counter({c: n for c, n in Counter(deck_for(2)).items() if c != "R1"})
