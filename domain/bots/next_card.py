"""The next card drawn, from what the players know: the cards it may be and its bust odds.

Reads only the game as its players know it (`engine.information_state`: its pile `HIDDEN`),
never the draw pile's order nor the seed. `unseen_cards(view)` is the standard deck for the
player count less every visible card (tableau, market, discard, every collection, the card
being auctioned): in a game dealt from the standard deck, exactly the draw pile's content,
so every probability here is exact. A game created with an explicit (custom) deck may hold
other cards the view cannot know: the same public computation is returned anyway (the odds
of a pile holding the unseen cards of the standard deck), and they may then be wrong.
`chance_outcomes` is the draw as a chance node; `bust_odds` the chance that the next card
busts the active seat, by numbers and by currency (and of a wild card: an auction).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import chain, repeat

import msgspec

from domain.game.cards import ALL_CODES, WILDS, deck_for
from domain.game.engine import bust_kind, tableau_sums
from domain.game.model import GameState


class BustOdds(msgspec.Struct, frozen=True, kw_only=True):
    """The next card's odds for the active seat (exact fractions of `unseen` cards)."""

    unseen: int  # cards not yet seen
    numbers: Fraction  # the next card busts by numbers
    currency: Fraction  # the next card busts by currency
    wild: Fraction  # the next card is a wild card (an auction, no bust)

    @property
    def bust(self) -> Fraction:
        return self.numbers + self.currency


def unseen_cards(view: GameState) -> Counter[str]:
    """Cards of the standard deck not visible anywhere: what the draw pile may hold."""
    unseen = _unseen_but_turn(view).copy()
    turn = view.tableau if view.auction is None else (*view.tableau, view.auction.card)
    for code in turn:
        left = unseen.get(code)
        if left is not None:  # explicit decks can differ: no zero or negative counts
            if left > 1:
                unseen[code] = left - 1
            else:
                del unseen[code]
    return unseen


def chance_outcomes(view: GameState) -> tuple[tuple[str, Fraction], ...]:
    """The draw as a chance node: each unseen card (code order) with the probability that
    it is the next card drawn, from what the players know (`unseen_cards`); empty when the
    pile is empty or nothing is unseen. The service draws the seeded pile's top card; a
    search gives each outcome to the engine (`engine.apply(view, seat, Draw(), card=)`)."""
    unseen = unseen_cards(view) if view.draw_pile else Counter()
    total = sum(unseen.values())
    return tuple((code, Fraction(unseen[code], total)) for code in sorted(unseen))


# The last collections, market and discard met, and the cards of the standard deck they
# leave unseen, in one tuple (replaced whole, never changed): the decisions of a turn
# share them (the engine hands on the same tuples while they do not change), only the
# tableau and the auction change. Held by identity, so kept alive while kept.
_LAST_SHOWN: tuple[object, object, object, Counter[str], int] = (None, None, None, Counter(), 0)


def _unseen_but_turn(view: GameState) -> Counter[str]:
    """`unseen_cards` counting neither the tableau nor the card auctioned (read only)."""
    return _shown(view)[0]


def _shown(view: GameState) -> tuple[Counter[str], int]:
    """`_unseen_but_turn(view)` and the number of its cards (kept with it)."""
    global _LAST_SHOWN  # noqa: PLW0603 - a cache of one entry
    players, market, discard, unseen, total = _LAST_SHOWN
    if players is view.players and market is view.market and discard is view.discard:
        return unseen, total
    shown = [view.market, view.discard, *(p.cards for p in view.players)]
    seen = Counter(chain.from_iterable(shown)).get
    # explicit decks can differ from the standard: no zero or negative counts
    deck = _deck(len(view.players)).items()
    unseen = Counter({code: left for code, count in deck if (left := count - seen(code, 0)) > 0})
    total = sum(unseen.values())
    _LAST_SHOWN = (view.players, view.market, view.discard, unseen, total)
    return unseen, total


@cache
def _deck(players: int) -> dict[str, int]:
    """The standard deck's copies of each card for a player count (read only)."""
    return dict(Counter(deck_for(players)))


def bust_odds(view: GameState, unseen: Counter[str] | None = None) -> BustOdds:
    """The chance that the next card drawn busts the active seat's tableau, by numbers and
    by currency (`engine.bust_kind` on the tableau plus that card), and that it is a wild
    card. All zero when nothing is unseen."""
    total, counts = _next_card_counts(view, unseen)
    if total == 0:
        return BustOdds(unseen=0, numbers=Fraction(0), currency=Fraction(0), wild=Fraction(0))
    return BustOdds(
        unseen=total,
        numbers=Fraction(counts["numbers"], total),
        currency=Fraction(counts["currency"], total),
        wild=Fraction(counts["wild"], total),
    )


def bust_risk(view: GameState) -> Fraction:
    """The chance that the next card drawn busts the active seat (either way):
    `bust_odds(view).bust`, with one fraction made instead of four."""
    busting, total = bust_counts(view)
    return Fraction(busting, total) if total else Fraction(0)


def bust_counts(view: GameState) -> tuple[int, int]:
    """(the unseen cards that bust the active seat drawn next, either way; the unseen
    cards): `bust_risk` as two counts, for a caller comparing it with a limit in integers.
    The unseen cards are not copied: the counts of the cards shown but in this turn
    (`_unseen_but_turn`, kept for the turn's decisions) less what the turn shows of each,
    as `unseen_cards` takes it off (never below zero)."""
    unseen, total = _shown(view)
    tableau = view.tableau
    get = unseen.get
    kinds = _kinds_by_sums(tableau)
    busting = sum(map(get, kinds[2], repeat(0)))
    turn = tableau if view.auction is None else (*tableau, view.auction.card)
    kind_of = kinds[1]
    for code in set(turn):
        left = get(code)
        if left is not None:
            gone = min(turn.count(code), left)
            total -= gone
            if kind_of[code] in _BUSTS:
                busting -= gone
    return busting, total


def _next_card_counts(
    view: GameState, unseen: Counter[str] | None
) -> tuple[int, dict[str | None, int]]:
    """The unseen cards (`unseen_cards(view)` unless given) and how many of them would,
    drawn next, bust by numbers, by currency, or be a wild card."""
    if unseen is None:
        unseen = unseen_cards(view)
    tableau = view.tableau
    get = unseen.get
    counts: dict[str | None, int] = {
        kind: sum(map(get, codes, repeat(0))) for kind, codes in _next_card_kinds(tableau)
    }
    if not unseen.keys() <= ALL_CODES:  # not cards of the game: as the engine says (it raises)
        for code in unseen.keys() - ALL_CODES:
            kind = bust_kind((*tableau, code))
            counts[kind] = counts.get(kind, 0) + unseen[code]
    return sum(unseen.values()), counts


# tableau_sums of a tableau -> the cards of the game that drawn onto it would bust it by
# numbers, by currency (`engine.bust_kind` of the tableau plus the card), or be a wild
# card. `bust_kind` reads a tableau only through `engine.tableau_sums`, a sum over its
# cards, so tableaus with the same sums give every card the same kind: the first one met
# stands for them all. The sums of the tableaus a game can hold before a bust are few
# (some hundreds).
_KindOf = dict[str, str | None]  # code -> "wild", "numbers", "currency" or None (no bust)
_KINDS_BY_SUMS: dict[
    tuple[int, int], tuple[tuple[tuple[str, tuple[str, ...]], ...], _KindOf, tuple[str, ...]]
] = {}
_KINDS_KEPT = 4096  # a bound all the same (forgotten wholesale beyond it)
_KINDS = ("numbers", "currency", "wild")
_BUSTS = ("numbers", "currency")


def _next_card_kinds(tableau: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(kind, the cards of the game of that kind drawn onto `tableau`) for each kind."""
    return _kinds_by_sums(tableau)[0]


def card_kinds(tableau: tuple[str, ...]) -> _KindOf:
    """Each card of the game's kind drawn onto `tableau`: "wild", the `engine.bust_kind`
    of the tableau plus the card, or None (read only)."""
    return _kinds_by_sums(tableau)[1]


def _kinds_by_sums(
    tableau: tuple[str, ...],
) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], _KindOf, tuple[str, ...]]:
    """(`_next_card_kinds`, `card_kinds`, the cards that bust it either way) of `tableau`."""
    sums = tableau_sums(tableau)
    kinds = _KINDS_BY_SUMS.get(sums)
    if kinds is None:
        if len(_KINDS_BY_SUMS) >= _KINDS_KEPT:
            _KINDS_BY_SUMS.clear()
        kind_of = {
            code: "wild" if code in WILDS else bust_kind((*tableau, code))
            for code in sorted(ALL_CODES)
        }
        by_kind = tuple(
            (kind, tuple(code for code, its in kind_of.items() if its == kind)) for kind in _KINDS
        )
        busts = tuple(code for code, its in kind_of.items() if its in _BUSTS)
        kinds = _KINDS_BY_SUMS[sums] = (by_kind, kind_of, busts)
    return kinds
