"""rules.md section 8: what must hold after every action (used by tests and the simulator)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from domain.game.cards import NUMBER_CARDS
from domain.game.model import CURRENCY_CAP, SUPPLY_BUST, SUPPLY_CURRENCY, GameState


def card_places(state: GameState) -> Counter[str]:
    places: Counter[str] = Counter(state.draw_pile)
    places.update(state.tableau)
    places.update(state.market)
    places.update(state.discard)
    if state.auction is not None:
        places[state.auction.card] += 1
    for player in state.players:
        places.update(player.cards)
    return places


def violations(state: GameState, deck: Iterable[str]) -> list[str]:
    """Every broken invariant, as text (empty when all hold). `deck` is the game's full deck."""
    found = []
    if card_places(state) != Counter(deck):
        found.append("cards are not each in exactly one place")
    currency = state.supply_currency + sum(p.currency for p in state.players)
    if currency != SUPPLY_CURRENCY:
        found.append(f"currency tokens add up to {currency}, not {SUPPLY_CURRENCY}")
    bust = state.supply_bust + sum(p.bust for p in state.players)
    if bust != SUPPLY_BUST:
        found.append(f"bust tokens add up to {bust}, not {SUPPLY_BUST}")
    if state.supply_currency < 0 or state.supply_bust < 0:
        found.append("the supply is negative")
    for seat, player in enumerate(state.players):
        if not 0 <= player.currency <= CURRENCY_CAP:
            found.append(f"seat {seat} holds {player.currency} currency tokens")
        if player.bust < 0:
            found.append(f"seat {seat} holds {player.bust} bust tokens")
    if any(code not in NUMBER_CARDS for code in state.market):
        found.append("the market holds a card that is not a number card")
    return found
