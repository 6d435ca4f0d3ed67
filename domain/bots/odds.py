"""The odds of the draw phase, computed exactly from what the players know (no sampling).

Everything here reads only the game as its players know it (`engine.information_state`:
its pile `HIDDEN`), never the draw pile's order nor the seed.

- `unseen_cards(view)`: the multiset of cards not yet seen, that is the standard deck for
  the player count minus every visible card (tableau, market, discard, every collection,
  the card being auctioned). In a game dealt from the standard deck this is exactly the
  draw pile's content, so every probability below is exact. A game created with an
  explicit (custom) deck may hold other cards: the view cannot know which, so the same
  public computation is returned anyway (the odds of a pile holding the unseen cards of
  the standard deck), and they may then be wrong.
- `chance_outcomes(view)`: the draw as a chance node, the unseen cards with their
  probabilities.
- `bust_odds(view)`: the probability that the next card busts the active seat, split by
  numbers and by currency (and the chance of a wild card, which starts an auction).
- `draw_value(view)`: the expected value of drawing against stopping (below);
  `draw_decision(view)` only whether drawing is worth more, for less work (the `expert`
  bot's question).
- The outcomes are the engine's own: a next card is the chance outcome of a draw
  (`engine.apply(view, seat, Draw(), card=code)`), a stop is applied as it is; but a
  number card that does not bust leaves the seats as they are, so its stop for numbers
  is the stop for numbers now with the card taken last into the seat's collection
  (`engine.taken`, the stop's own rule), and its stop for currency the one now
  (`draw_decision`; `tests/unit/test_draw_decision.py` checks both against the engine).

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
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from itertools import chain, repeat
from operator import mul

import msgspec
from msgspec.structs import replace

from domain.game.cards import ALL_CODES, FULL_WILD, NUMBER_CARDS, WILDS, deck_for
from domain.game.engine import apply, bust_kind, tableau_sums, taken
from domain.game.model import Draw, GameState, Player, Stop
from domain.game.scoring import best_total

TOKENS_PER_POINT = 3  # what a point of score is worth in tokens (cards cost 1-9 to buy)

# (players before, players after, seat, rules' perfect bonus) -> the outcome's value to seat
Valuation = Callable[[Sequence[Player], Sequence[Player], int, int], Fraction | float]


class BustOdds(msgspec.Struct, frozen=True, kw_only=True):
    """The next card's odds for the active seat (exact fractions of `unseen` cards)."""

    unseen: int  # cards not yet seen
    numbers: Fraction  # the next card busts by numbers
    currency: Fraction  # the next card busts by currency
    wild: Fraction  # the next card is a wild card (an auction, no bust)

    @property
    def bust(self) -> Fraction:
        return self.numbers + self.currency


class DrawValue(msgspec.Struct, frozen=True, kw_only=True):
    """`draw_value`'s result (module docstring): in points, exact."""

    stop: Fraction | float | None  # floats only from a valuation that gives floats
    draw: Fraction | float | None

    @property
    def advantage(self) -> Fraction | float | None:
        if self.stop is None or self.draw is None:
            return None
        return self.draw - self.stop


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


def _kind_of(tableau: tuple[str, ...]) -> _KindOf:
    """Each card of the game's kind drawn onto `tableau`: "wild", the `engine.bust_kind`
    of the tableau plus the card, or None (read only)."""
    return _kinds_by_sums(tableau)[1]


def _kinds_by_sums(
    tableau: tuple[str, ...],
) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], _KindOf, tuple[str, ...]]:
    """(`_next_card_kinds`, `_kind_of`, the cards that bust it either way) of `tableau`."""
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


def holding(player: Player, perfect_bonus: int) -> Fraction:
    """A seat's holding in points: its best score plus its bidding power in points."""
    return best_total(player.cards, perfect_bonus) + Fraction(
        player.bidding_power, TOKENS_PER_POINT
    )


def net_value(
    before: Sequence[Player], after: Sequence[Player], seat: int, perfect_bonus: int
) -> Fraction:
    """The value to `seat` of going from `before` to `after`: its holding's change minus
    the mean change of the other seats' holdings (module docstring)."""
    changes = [
        Fraction(0) if old is new else holding(new, perfect_bonus) - holding(old, perfect_bonus)
        for old, new in zip(before, after, strict=True)
    ]
    others = len(changes) - 1
    mine = changes[seat]
    if others == 0:
        return mine
    return mine - (sum(changes) - mine) / others


_STOPS = (Stop(take="numbers"), Stop(take="currency"))
_STOP_NUMBERS, _STOP_CURRENCY = _STOPS
_DRAW = Draw()


def stop_values(state: GameState, value: Valuation = net_value) -> dict[str, Fraction | float]:
    """The `value` of each of the two rewards for the active seat of `state` (in the draw
    phase, with something drawn): of the states right after `Stop(numbers)` and
    `Stop(currency)`, by take."""
    return _stops(state, value)[0]


def _stops(
    state: GameState, value: Valuation
) -> tuple[dict[str, Fraction | float], Sequence[Player]]:
    """`stop_values` and the seats right after `Stop(numbers)`."""
    seat = state.active_seat
    bonus = state.rules.perfect_bonus
    values = {}
    for stop in _STOPS:
        after = apply(state, seat, stop)[0].players
        values[stop.take] = value(state.players, after, seat, bonus)
        if stop is _STOP_NUMBERS:
            taken = after
    return values, taken


def stop_value(state: GameState, value: Valuation = net_value) -> Fraction | float:
    """The better of the two rewards (`stop_values`)."""
    return max(stop_values(state, value).values())


def draw_value(
    view: GameState, value: Valuation = net_value, unseen: Counter[str] | None = None
) -> DrawValue:
    """The value of stopping now against the expected value of the best stop after exactly
    one more draw (module docstring), for the seat whose turn it is. `value` prices an
    outcome (`net_value` unless a bot brings its own); `unseen` is the multiset the next
    card comes from (`unseen_cards(view)` unless given)."""
    odds = _NextDraw(view, value, unseen)
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
    odds = _NextDraw(view, value, unseen)
    return odds.draw_beats_stop(), odds.stops


_UNKNOWN = "?"  # not a card of the game


class _NextDraw:
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
        self.stops, self.after_numbers = _stops(now, value)
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
        kind_of = _kind_of(tableau).get
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
                currency = self._reward(after, _STOP_CURRENCY, after.players)
                # the reward for numbers now is at least the one after the card (the
                # others get no fewer tokens in all), up to float rounding
                numbers = self.stops["numbers"]
                if currency <= numbers + _ROUNDING * (abs(numbers) + 1):
                    numbers = self._reward(after, _STOP_NUMBERS, after.players)
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
