"""Shared helpers for the unit tests (the rules tests use them through the `ten` fixture).

Every rules test plays a scripted deck (top card first) so that it controls each card:

    state = ten.start(["R5", "B6"])                # Ann (seat 0) and Bob (seat 1), Ann starts
    state, events = ten.play(state, 0, DRAW, DRAW)  # several actions by one seat
    ten.refuse(state, 1, DRAW, "not_your_turn")    # RuleError with that code, state unchanged
    state = ten.arrange(state, seats={1: {"currency": 8}}, market=("R3",))

`arrange` sets up a mid-game state: it replaces the given seats' tokens and collections
and, unless the supply is named, recomputes the supply so that the tokens still add up
(rules.md section 8). `deck_of(state)` is the multiset of every card the state holds,
for `domain.game.invariants.violations`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from domain.game.engine import apply, new_game
from domain.game.errors import RuleError
from domain.game.model import (
    SUPPLY_BUST,
    SUPPLY_CURRENCY,
    Action,
    Event,
    GameState,
    Rules,
)

NAMES = ("Ann", "Bob", "Cid", "Dee", "Eve")


def start(
    deck: Sequence[str],
    players: int = 2,
    *,
    starting_seat: int = 0,
    rules: Rules | None = None,
) -> GameState:
    """A new game on a scripted deck (top card first) with `players` human seats."""
    state, _ = new_game(
        [(NAMES[i], None) for i in range(players)],
        seed="t",
        deck=list(deck),
        starting_seat=starting_seat,
        rules=rules,
    )
    return state


def play(state: GameState, seat: int, *actions: Action) -> tuple[GameState, list[Event]]:
    """Apply `actions` in order, all by `seat`; the final state and every event produced."""
    events: list[Event] = []
    for action in actions:
        state, produced = apply(state, seat, action)
        events.extend(produced)
    return state, events


def run(state: GameState, *steps: tuple[int, Action]) -> tuple[GameState, list[Event]]:
    """Apply (seat, action) steps in order; the final state and every event produced."""
    events: list[Event] = []
    for seat, action in steps:
        state, produced = apply(state, seat, action)
        events.extend(produced)
    return state, events


def snapshot(state: GameState) -> GameState:
    """An independent deep copy (through msgpack), to check that a state did not change."""
    return msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=GameState)


def refuse(state: GameState, seat: int, action: Action, code: str) -> RuleError:
    """`apply` raises RuleError with exactly `code`, and the state is unchanged."""
    before = snapshot(state)
    with pytest.raises(RuleError) as info:
        apply(state, seat, action)
    assert info.value.code == code
    assert state == before
    return info.value


def arrange(
    state: GameState,
    *,
    seats: Mapping[int, Mapping[str, Any]] | None = None,
    **fields: Any,
) -> GameState:
    """A mid-game state: `seats` maps a seat to new `currency`/`bust`/`cards`; `fields`
    replace GameState fields. The supply is recomputed to keep 50 currency and 15 bust
    tokens in the game unless `supply_currency`/`supply_bust` are given."""
    players = list(state.players)
    for seat, changes in (seats or {}).items():
        players[seat] = replace(players[seat], **changes)
    fields.setdefault("supply_currency", SUPPLY_CURRENCY - sum(p.currency for p in players))
    fields.setdefault("supply_bust", SUPPLY_BUST - sum(p.bust for p in players))
    return replace(state, players=tuple(players), **fields)


def deck_of(state: GameState) -> Counter[str]:
    """Every card the state holds, wherever it is (the game's deck, for invariants)."""
    cards: list[str] = [*state.draw_pile, *state.tableau, *state.market, *state.discard]
    if state.auction is not None:
        cards.append(state.auction.card)
    for player in state.players:
        cards.extend(player.cards)
    return Counter(cards)


def of_type(events: Iterable[Event], kind: type[Event]) -> list[Any]:
    """The events of one type, in order."""
    return [event for event in events if isinstance(event, kind)]


def strip(events: Iterable[Event]) -> list[Event]:
    """The events with `seq` and `version` zeroed, to compare with `expect(...)` events."""
    return [replace(event, seq=0, version=0) for event in events]


def expect(event_type: type[Event], /, **data: Any) -> Event:
    """An expected event (seq and version zeroed, see `strip`)."""
    return event_type(seq=0, version=0, **data)


@pytest.fixture
def ten() -> SimpleNamespace:
    """The rules-test helpers (see the module docstring)."""
    return SimpleNamespace(
        start=start,
        play=play,
        run=run,
        refuse=refuse,
        arrange=arrange,
        snapshot=snapshot,
        deck_of=deck_of,
        of_type=of_type,
        strip=strip,
        expect=expect,
        NAMES=NAMES,
    )
