"""The outcomes of one more draw, exactly (`NextDraw`): every unseen card's, or only as many
as `draw_decision` needs to tell drawing from stopping (why: docs/design-notes.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from operator import mul

from msgspec.structs import replace

from domain.bots.next_card import card_kinds, unseen_cards
from domain.bots.valuation import STOP_CURRENCY, STOP_NUMBERS, Valuation, stop_values_and_seats
from domain.game.cards import FULL_WILD, NUMBER_CARDS
from domain.game.engine import apply, bust_kind, taken
from domain.game.model import Draw, GameState, Player, Stop

_DRAW = Draw()

_UNKNOWN = "?"  # not a card of the game


class NextDraw:
    """The outcomes of one more draw for the active seat of a view in the draw phase, by
    distinct unseen card in code order: a wild card's (the best stop now) and a bust's at
    once, those of the other cards (the better of the two rewards after the card) when
    asked (`best`), with a lower bound until then (`draw_decision`)."""

    def __init__(self, view: GameState, value: Valuation, unseen: Counter[str] | None) -> None:
        if view.phase != "draw":
            raise ValueError("odds are for the draw phase")
        self.value = value
        self.seat = seat = view.active_seat
        self.bonus = bonus = view.rules.perfect_bonus
        self.base = base = view  # each next card is applied to it as the draw's outcome
        # what stopping after a wild card's auction would bring
        self.now = now = base if base.drawn else replace(base, drawn=True)
        self.stops, self.after_numbers = stop_values_and_seats(now, value)
        self.stop = stop = max(self.stops.values())
        self.drawn = view.drawn
        if unseen is None:
            unseen = unseen_cards(view)
        self.total = sum(unseen.values()) if view.draw_pile else 0
        self.codes: list[str] = sorted(unseen) if self.total else []
        self.counts = [unseen[code] for code in self.codes]
        self.known: list[Fraction | float | None] = []  # the outcome, once priced
        self.low: list[Fraction | float] = []  # its lower bound (the outcome once priced)
        self.after: list[GameState | None] = [None] * len(self.codes)  # once drawn
        tableau, currency = view.tableau, self.stops["currency"]
        # the cards that bust the same way leave the same seats (the tableau goes to the
        # market and the discard; a bust by numbers is a number card's, so the others'
        # tokens are the same): one is drawn per kind of bust
        busts: dict[str, Fraction | float] = {}
        kind_of = card_kinds(tableau).get
        for code in self.codes:
            outcome: Fraction | float | None
            # codes not of the game (explicit decks): as the engine says (it raises)
            kind = kind_of(code, _UNKNOWN)
            if kind is _UNKNOWN:
                kind = bust_kind((*tableau, code))
            if kind == "wild":
                outcome = low = stop
            elif kind is not None:  # the turn is over
                outcome = busts.get(kind)
                if outcome is None:
                    after, _ = apply(base, seat, _DRAW, card=code)
                    outcome = busts[kind] = value(view.players, after.players, seat, bonus)
                low = outcome
            else:
                outcome = None
                low = stop if code in NUMBER_CARDS else currency
            self.known.append(outcome)
            self.low.append(low)
        self.high: list[Fraction | float | None] = list(self.known)  # upper bounds (None: none)

    def _drawn(self, i: int) -> GameState:
        """The state after the `i`-th next card (one that does not bust) is drawn."""
        after = self.after[i]
        if after is None:
            after, _ = apply(self.base, self.seat, _DRAW, card=self.codes[i])
            assert after.tableau, "a card bust_kind lets through did not bust"
            self.after[i] = after
        return after

    def _reward(self, state: GameState, stop: Stop, before: Sequence[Player]) -> Fraction | float:
        """The `value` of `stop` made on `state` (from the seats `before`)."""
        seat = self.seat
        return self.value(before, apply(state, seat, stop)[0].players, seat, self.bonus)

    def best(self, i: int) -> Fraction | float:
        """The outcome of the `i`-th next card."""
        known = self.known[i]
        if known is None:
            # as `stop_value`: the better of (numbers, currency)
            code = self.codes[i]
            if code in NUMBER_CARDS:
                # a number card that does not bust leaves the seats as they are and the
                # reward for currency as it is now (`draw_decision`); the stop for numbers
                # then takes it last into the seat's collection
                currency = self.stops["currency"]
                numbers = self._with_card(code)
            else:
                after = self._drawn(i)
                currency = self._reward(after, STOP_CURRENCY, after.players)
                # the reward for numbers now is at least the one after the card (the
                # others get no fewer tokens in all), up to float rounding
                numbers = self.stops["numbers"]
                if currency <= numbers + _ROUNDING * (abs(numbers) + 1):
                    numbers = self._reward(after, STOP_NUMBERS, after.players)
            known = self.known[i] = self.low[i] = self.high[i] = max(numbers, currency)
        return known

    def _with_card(self, card: str) -> Fraction | float:
        """The reward for numbers now with `card` added to the seat's collection: the
        seats after the stop for numbers now, `card` last in the seat's collection."""
        players = list(self.after_numbers)
        players[self.seat] = taken(players[self.seat], (card,))  # as the stop takes it
        return self.value(self.now.players, tuple(players), self.seat, self.bonus)

    def _with_wild(self, wild: str) -> Fraction | float | None:
        """`_with_card(wild)`, or None when it is below the reward for currency now."""
        most, currency = self._with_card(wild), self.stops["currency"]
        if most < currency - _ROUNDING * (abs(most) + abs(currency) + 1):
            return None  # the reward for currency is the better one
        return most

    def draw(self) -> Fraction | float | None:
        """The expected outcome of one more draw (None: no card to draw)."""
        if not self.total:
            return None
        expected: Fraction | float = Fraction(0)
        for i, count in enumerate(self.counts):
            expected += count * self.best(i)  # exact with `net_value` (Fractions)
        return expected / self.total

    def draw_beats_stop(self) -> bool:
        """`draw() > stop`, False if the seat may not stop or cannot draw (`draw_decision`)."""
        if not self.drawn or not self.total:
            return False
        counts, low, known, codes = self.counts, self.low, self.known, self.codes
        self.target = self.total * self.stop
        open_ = [i for i, outcome in enumerate(known) if outcome is None]
        numbers = [i for i in open_ if codes[i] in NUMBER_CARDS]
        numbers.sort(key=lambda i: -counts[i])  # the likeliest first
        verdict = self._verdict()
        if verdict is not None:
            return verdict
        # a number card adds to the reward for numbers at least what a copy of a number
        # card the seat would take anyway adds (it scores nothing more)
        me = self.now.players[self.seat]
        taken = [c for c in (*self.now.tableau, *me.cards) if c in NUMBER_CARDS]
        if numbers and taken:
            floor = self._with_card(taken[0])
            for i in numbers:
                low[i] = max(low[i], floor)
        verdict = self._verdict()
        if verdict is not None:
            return verdict
        # currency cards (their reward for numbers scores no new collection)
        verdict = self._price([i for i in open_ if codes[i] not in NUMBER_CARDS])
        if verdict is not None:
            return verdict
        # every number card at once: W# can stand where any number card would (a second
        # W# would score nothing)
        if numbers and FULL_WILD not in me.cards:
            self._bound(numbers, self._with_wild(FULL_WILD))
        verdict = self._verdict()
        if verdict is not None:
            return verdict
        verdict = self._price([i for i in numbers[:_FIRST] if known[i] is None])
        if verdict is not None:
            return verdict
        # then colour by colour
        rest = [i for i in numbers if known[i] is None]
        for colour in sorted({codes[i][0] for i in rest}):
            self._bound([i for i in rest if codes[i][0] == colour], self._with_wild(f"{colour}#"))
        verdict = self._verdict()
        if verdict is not None:
            return verdict
        rest = [i for i in rest if known[i] is None]
        high = self.high
        rest.sort(key=lambda i: -(counts[i] * (high[i] - low[i])))  # type: ignore[operator]
        verdict = self._price(rest)
        if verdict is not None:
            return verdict
        draw = self.draw()  # every outcome is known by now: the exact comparison
        assert draw is not None
        return draw > self.stop

    def _bound(self, cards: list[int], most: Fraction | float | None) -> None:
        """Bound the outcomes of the number cards `cards` with `most`, a reward for numbers
        no card of theirs can beat (None: below the reward for currency now, so each
        outcome is that reward, as a number card leaves it as it is)."""
        currency = self.stops["currency"]
        for i in cards:
            if most is None:
                self.known[i] = self.low[i] = self.high[i] = currency
            else:
                high = self.high[i]
                bound = max(most, currency)
                self.high[i] = bound if high is None else min(high, bound)

    def _verdict(self) -> bool | None:
        """True (False) when the bounds put the expectation above (below) the stop now by
        more than rounding could blur; None when they do not tell. Keeps the sums for
        `_price`."""
        # the expectation's bounds, times `total`, and the figures' scale, for rounding
        # (sums over the distinct unseen cards, a few times per decision)
        counts, low, high = self.counts, self.low, self.high
        least: Fraction | float = sum(map(mul, counts, low))
        size: Fraction | float = abs(self.target) + 1 + sum(map(mul, counts, map(abs, low)))
        most: Fraction | float | None = None
        if None not in high:
            most = sum(map(mul, counts, high))  # type: ignore[arg-type]
            size += sum(map(mul, counts, map(abs, high)))  # type: ignore[arg-type]
        self.least, self.most, self.size = least, most, size
        if least > self.target + _ROUNDING * size:
            return True
        if most is not None and most < self.target - _ROUNDING * size:
            return False
        return None

    def _price(self, cards: list[int]) -> bool | None:
        """Price `cards` in turn until the bounds tell (`_verdict`); None if they do not."""
        counts, low, high = self.counts, self.low, self.high
        target, size = self.target, self.size
        least, most = self.least, self.most
        for i in cards:
            worst, hope = low[i], high[i]
            best = self.best(i)
            size += counts[i] * abs(best)
            least += counts[i] * (best - worst)
            if least > target + _ROUNDING * size:
                return True
            if most is not None and hope is not None:
                most += counts[i] * (best - hope)
                if most < target - _ROUNDING * size:
                    return False
        self.least, self.most, self.size = least, most, size
        return None


_FIRST = 3  # number cards priced before the bounds by colour (drawing often clears then)
# Far above the relative error of the float sums above (some 1e-16 per operation, a few
# hundred operations), far below any difference between two outcomes worth telling apart.
_ROUNDING = 1e-9
