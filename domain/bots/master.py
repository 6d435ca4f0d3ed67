"""The `master` bot: every legal action valued by the seat's chance of winning at the end of
the current turn (or auction), the argmax played.

It reads the game as its players know it (`engine.information_state`) and values a
position by `value`: the seat's chance of winning (`winning.win_chances`, the table
learned offline from expert self-play; a finished game's result exactly), plus
`MARGIN_WEIGHT` times its expected margin in points (`winning.margins`), which breaks the
ties of a chance near 0 or 1 (a seat far behind or far ahead still plays for points).

An action's value is that of the position it leads to once the turn settles
(`settle`: the rest of the turn's decisions that need no chance played by the `expert`
bot, every seat's: a buy phase, an auction, the final buy round and so the result):

- a stop, a purchase, a decline: the position settled after it;
- a bid or a pass: the position settled after it (the auction played out by the expert
  for the later bidders); only the expert's own bid and those above it are searched
  when the expert bids (the value sees a wild card's worth now, not what it may fill
  later, and alone it underbids);
- a draw: the exact expectation over the next card (`odds.chance_outcomes`, each unseen
  card at its probability, given to the engine as the draw's outcome) of the better
  continuation after it: a bust as it stands; a wild card's auction settled, then the
  better stop; otherwise the better of the two stops settled (`DEPTH` > 1: or one more
  draw, valued the same way, while depth remains).

`action_value`, `draw_value` and `continuation` take the position's value as a function:
the bot's returns a float; the post-game review (`domain.bots.review`, whose judge this search
is) passes one that carries the seat's winning chance and margin beside the value (a number
that adds, scales by a probability and compares by the value alone), so both pick the
same continuations.

The best action is the one of the highest value (the first in `legal_actions` order
among equals). No randomness and no clock: the same view gives the same move, so a
served game replays from its seed (the bot's random source is not used).
"""

from __future__ import annotations

from collections.abc import Callable

from domain.bots.expert import expert_bot
from domain.bots.odds import chance_outcomes
from domain.bots.winning import margins, win_chances
from domain.game.engine import apply, to_act
from domain.game.legal import legal_actions
from domain.game.model import Action, Bid, Draw, GameState, Stop
from domain.game.rng import SeededRandom

MARGIN_WEIGHT = 0.01  # a point of expected margin, in winning chance
DEPTH = 1  # draws searched ahead in the draw phase

_DRAW = Draw()
_NO_RNG = SeededRandom("master")  # the expert takes a random source and uses none

Value = Callable[[GameState, int], float]


def position_value(state: GameState, seat: int, margin_weight: float = MARGIN_WEIGHT) -> float:
    """The value of a position to `seat` (module docstring)."""
    return win_chances(state)[seat] + margin_weight * margins(state)[seat]


def settle(state: GameState) -> GameState:
    """`state` with the decisions that need no chance played by the expert bot: until a
    draw phase (a turn's draw, or the active seat's after an auction) or the end."""
    while state.phase != "draw":
        seat = to_act(state)
        if seat is None:
            return state  # finished
        state, _events = apply(state, seat, expert_bot(state, seat, _NO_RNG))
    return state


def master_policy(
    margin_weight: float = MARGIN_WEIGHT, depth: int = DEPTH, bid_floor: bool = True
) -> Callable:
    """The master bot with its constants (module docstring); `bid_floor=False` searches
    every bid, below the expert's too."""

    def value(state: GameState, seat: int) -> float:
        return position_value(state, seat, margin_weight)

    def master(view: GameState, seat: int, rng: SeededRandom) -> Action:
        actions = legal_actions(view, seat)
        if not actions:
            raise ValueError("it is not this seat's decision")
        if len(actions) == 1:
            return actions[0]
        if bid_floor:
            actions = searched(view, seat, actions)
        values = [action_value(view, seat, a, value, depth) for a in actions]
        best = max(range(len(actions)), key=lambda i: (values[i], -i))
        return actions[best]

    return master


def searched(view: GameState, seat: int, actions: list[Action]) -> list[Action]:
    """The legal actions the bot searches: all of them but in an auction, there those no
    lower than the expert's: its bid and those above it (all of them when it passes)."""
    if view.phase != "auction":
        return actions
    floor = expert_bot(view, seat, _NO_RNG)
    if type(floor) is not Bid:
        return actions
    return [a for a in actions if type(a) is Bid and a.amount >= floor.amount]


def action_value(state: GameState, seat: int, action: Action, value: Value, depth: int) -> float:
    """The value of one legal action (module docstring)."""
    if type(action) is Draw:
        return draw_value(state, seat, value, depth)
    after, _events = apply(state, seat, action)
    return value(settle(after), seat)


def draw_value(state: GameState, seat: int, value: Value, depth: int) -> float:
    """The exact expectation over the next card of the better continuation after it."""
    outcomes = chance_outcomes(state)
    if not outcomes:  # an explicit deck's pile holding no card of the standard deck unseen
        return value(state, seat)
    total = 0.0
    seen: dict[tuple[object, ...], float] = {}  # the seats after a card -> its value
    for card, p in outcomes:
        after, _events = apply(state, seat, _DRAW, card=card)
        after = settle(after)
        key = (after.players, after.tableau, after.phase, after.active_seat, after.drawn)
        known = seen.get(key)
        if known is None:
            known = seen[key] = continuation(after, seat, value, depth - 1)
        total += float(p) * known
    return total


def continuation(state: GameState, seat: int, value: Value, depth: int) -> float:
    """The value of the better continuation of `seat` from a settled `state`: its best
    stop (or draw, while `depth` > 0) if it is to decide in the draw phase, else the
    position as it stands."""
    if state.phase != "draw" or not state.drawn or to_act(state) != seat:
        return value(state, seat)
    stops = [a for a in legal_actions(state, seat) if type(a) is Stop]
    best = max(value(settle(apply(state, seat, stop)[0]), seat) for stop in stops)
    if depth > 0 and state.draw_pile:
        best = max(best, draw_value(state, seat, value, depth))
    return best


master_bot = master_policy()
