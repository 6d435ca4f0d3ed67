"""`domain.game.rejudge`: a whole log judged again by the engine. Games of every bot level,
a deal that starts at a later version (a table that waited for its players), a deck given
as it is: each log is the engine's; an action changed is refused where it is."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from domain.bots.simulation import play_bots
from domain.game.cards import deck_for
from domain.game.engine import new_game
from domain.game.model import BidPlaced, Event, GameState, Rules
from domain.game.rejudge import ACTION_OF_EVENT, Misplayed, recorded_action, rejudge

LEVELS = ("random", "basic", "expert", "master")


def dealt(
    bots: list[str], seed: str, **deal: object
) -> tuple[list[Event], tuple[str, ...], GameState]:
    """A game of bots played to its end: its log, its deck as dealt, its last state."""
    state, events = new_game([(f"P{i}", bot) for i, bot in enumerate(bots)], seed, **deal)  # type: ignore[arg-type]
    deck = state.draw_pile
    final, played = play_bots(state)
    return [*events, *played], deck, final


@pytest.mark.parametrize("n", range(1, 6))
def test_games_of_every_bot_level_are_the_engine_s(n: int) -> None:
    bots = [LEVELS[(n + i) % len(LEVELS)] for i in range(n)]
    events, deck, final = dealt(bots, f"levels/{n}")
    assert rejudge(events, deck, f"levels/{n}") == final


def test_a_deal_at_a_later_version_from_a_given_deck() -> None:
    cards = tuple(reversed(deck_for(3)))
    events, pile, final = dealt(
        ["basic", "random", "basic"], "given", deck=cards, version=7, rules=Rules(perfect_bonus=3)
    )
    assert (events[0].version, pile) == (7, cards)
    assert rejudge(events, pile, "given") == final


def test_a_deal_that_is_not_the_engine_s_is_refused() -> None:
    events, deck, _ = dealt(["basic", "basic"], "deal")
    with pytest.raises(Misplayed, match=r"^event 1 \(version 0\): game_started differs"):
        rejudge([replace(events[0], supply_currency=3), *events[1:]], deck, "deal")
    turn = replace(events[1], seat=1 - events[1].seat)  # type: ignore[attr-defined]
    with pytest.raises(Misplayed, match=r"^event 2 \(version 0\): turn_started differs"):
        rejudge([events[0], turn, *events[2:]], deck, "deal")


def test_a_bid_too_high_is_refused_at_its_event() -> None:
    events, deck, _ = dealt(["basic"] * 4, "bids")
    at = next(i for i, e in enumerate(events) if type(e) is BidPlaced)
    bid = events[at]
    events[at] = replace(bid, amount=999)
    with pytest.raises(Misplayed) as caught:
        rejudge(events, deck)
    assert (caught.value.seq, caught.value.version) == (bid.seq, bid.version)
    assert "bid_too_high" in caught.value.why


def test_each_action_s_first_event_gives_that_action() -> None:
    events, _, _ = dealt(["basic"] * 3, "firsts")
    for event in events:
        recorded = recorded_action(event)
        kind = ACTION_OF_EVENT.get(type(event))
        assert (recorded is None) == (kind is None)
        if recorded is not None:
            assert type(recorded[1]) is kind
            assert recorded[0] == event.seat  # type: ignore[attr-defined]
