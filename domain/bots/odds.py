"""The odds of the draw phase, computed exactly from what the players know (no sampling).

Only the game as its players know it is read (`engine.information_state`: its pile
`HIDDEN`), never the draw pile's order nor the seed. This module holds the entry points,
`draw_value` and `draw_decision`, and states them (below); the unseen cards, the chance
node and the bust odds are `domain.bots.next_card`'s, an outcome's value
`domain.bots.valuation`'s, the outcomes of one more draw `domain.bots.next_draw`'s (the
first two importable from here too).

- `draw_value(view)`: the expected value of drawing against stopping (below);
  `draw_decision(view)` only whether drawing is worth more, for less work (the `expert`
  bot's question).
- The outcomes are the engine's own: a next card is the chance outcome of a draw
  (`engine.apply(view, seat, Draw(), card=code)`), a stop is applied as it is; but a
  number card that does not bust leaves the seats as they are, so its stop for numbers
  is the stop for numbers now with the card taken last into the seat's collection
  (`engine.taken`, the stop's own rule), and its stop for currency the one now
  (`draw_decision`; `tests/unit/domain/bots/test_draw_decision.py` checks both against the engine).

Value of drawing against stopping, for the seat `s` whose turn it is, in the draw phase:

- A seat's holding is worth `points + tokens / TOKENS_PER_POINT` where `points` is the
  best score of its collection (`scoring.best_total`) and `tokens` its bidding power
  (currency tokens + 3 per bust token, `Player.bidding_power`).
- An outcome (the state after an action) is worth, to `s`, the change of `s`'s holding
  minus the mean change of the other seats' holdings (nothing is subtracted in a
  one-player game). Tokens count as the engine hands them out (the cap of 10, the
  supply, 3.6), because outcomes are computed by `engine.apply`.
- `stop` = the best of the two rewards now: max over `Stop(numbers)`, `Stop(currency)`
  of the value of the state right after the stop (the buy phase that follows a stop
  for numbers is not counted: it is a later decision, which can always be declined).
  `None` when the seat may not stop (nothing drawn yet this turn).
- `draw` = the expected value, over the next card `c` drawn uniformly from the unseen
  cards, of the best stop right after exactly one more draw:
  - `c` busts the tableau: the value of the bust (the bust token taken, the currency
    the other seats gain after a bust by numbers, the cards lost to the market);
  - `c` is a wild card: an auction starts and the tableau stays as it is; the auction's
    result depends on bids, not on chance, so it counts for nothing, and the outcome is
    the best stop with the tableau unchanged (0 with an empty tableau);
  - otherwise: the best stop with `c` added to the tableau (also when `c` was the last
    card and the seat must stop).
  `None` when the seat cannot draw (the pile is empty or nothing is unseen).
- `advantage = draw - stop` (positive: drawing is worth more), `None` if either is.

All values are `Fraction`s: exact.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import msgspec

from domain.bots.next_card import (
    BustOdds,
    bust_counts,
    bust_odds,
    bust_risk,
    chance_outcomes,
    unseen_cards,
)
from domain.bots.next_draw import NextDraw
from domain.bots.valuation import (
    TOKENS_PER_POINT,
    Valuation,
    holding,
    net_value,
    stop_value,
    stop_values,
)
from domain.game.model import GameState

__all__ = [
    "TOKENS_PER_POINT",
    "BustOdds",
    "DrawValue",
    "Valuation",
    "bust_counts",
    "bust_odds",
    "bust_risk",
    "chance_outcomes",
    "draw_decision",
    "draw_value",
    "holding",
    "net_value",
    "stop_value",
    "stop_values",
    "unseen_cards",
]


class DrawValue(msgspec.Struct, frozen=True, kw_only=True):
    """`draw_value`'s result (module docstring): in points, exact."""

    stop: Fraction | float | None  # floats only from a valuation that gives floats
    draw: Fraction | float | None

    @property
    def advantage(self) -> Fraction | float | None:
        if self.stop is None or self.draw is None:
            return None
        return self.draw - self.stop


def draw_value(
    view: GameState, value: Valuation = net_value, unseen: Counter[str] | None = None
) -> DrawValue:
    """The value of stopping now against the expected value of the best stop after exactly
    one more draw (module docstring), for the seat whose turn it is. `value` prices an
    outcome (`net_value` unless a bot brings its own); `unseen` is the multiset the next
    card comes from (`unseen_cards(view)` unless given)."""
    odds = NextDraw(view, value, unseen)
    return DrawValue(stop=odds.stop if view.drawn else None, draw=odds.draw())


def draw_decision(
    view: GameState, value: Valuation = net_value, unseen: Counter[str] | None = None
) -> tuple[bool, dict[str, Fraction | float]]:
    """Whether drawing is worth more than stopping (`draw_value(...).advantage > 0`; False
    when it is None) and the `stop_values` of the view by take (as if the seat had drawn):
    exactly what `draw_value` and `stop_values` give, for less work.

    Wild cards and busts are priced at once; every other next card is first only bounded,
    and priced exactly only while the bounds leave its comparison with the stop now open.
    The bounds hold for a `value` that does not fall when the seat gains cards, points or
    tokens and the others gain nothing, nor rises when only the others' tokens change and
    their total grows, as `net_value` and the expert's (why: docs/design-notes.md)."""
    odds = NextDraw(view, value, unseen)
    return odds.draw_beats_stop(), odds.stops
