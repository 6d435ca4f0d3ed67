"""The post-game review: every decision of a finished game valued from what its player
knew, and each seat's result split into skill and luck. Everything is read from the public
event log (`evolve` folded over it), so a review knows what the players knew and no more.

- The judge is `master`'s own search: a position's value is `master.position_value` (the
  seat's winning chance plus `MARGIN_WEIGHT` times its expected margin in points); each
  legal action of a decision with a choice is valued by `master.action_value`, and the
  best one is `master`'s choice, so its own decisions are graded best.
- What a decision lost (`drop`), in percentage points of winning chance: the drop of the
  seat's winning percentage, or `POINT_FLOOR` per point of expected margin dropped if that
  is more, so a seat whose chances are settled is still graded on its points. Its grade
  (`GRADES`) and accuracy (`move_accuracy`, Lichess's curve) follow from it; its `stake` is
  what the worst legal action would have lost.
- A seat's accuracy is over the decisions that matter, as gnubg and eXtreme Gammon grade by
  the error per non-obvious decision: `seat_accuracy` = 100 * exp(-L / ACCURACY_SCALE), L the
  mean of what its non-obvious decisions lost (those whose stake exceeds `OBVIOUS_STAKE`).
  Its `performance` (`performance_rating`) reads that accuracy on the rating scale, by the
  bots of known strength (`PERFORMANCE_POINTS`).
- Luck, in points of final margin, per card drawn (`domain.bots.luck`): what the card did
  to each seat's final margin as a value fitted to self-play sees it, less what the draw was
  expected to do. The rest of each change of a seat's margin (`winning.margins`) is
  decisions: its own (`skill`) or the other seats' (`others`), by who made the action.
  `start + skill + others + luck` is the final margin, exactly.
- Luck-adjusted results (`luck_adjusted`): each seat's result with that luck taken out, a
  control variate (each card's luck has expectation 0 given what the players knew, whatever
  the value's error, so the adjusted result has the raw one's expectation and, as far as the
  value sees the cards' effect, a smaller variance): its margin less its luck (= start +
  skill + others), a score whose differences between seats are those margins (the table's
  total kept), and its rank by that score in the rules' order of seats.

Why the judge, the floor and the grades are these: docs/design-notes.md.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Literal, Protocol

import msgspec

from domain.bots import luck as luck_model
from domain.bots.master import DEPTH, MARGIN_WEIGHT, action_value, searched
from domain.bots.odds import chance_outcomes
from domain.bots.winning import margins, win_chances
from domain.game.engine import evolve
from domain.game.legal import legal_actions
from domain.game.model import (
    Action,
    Bid,
    BidPassed,
    BidPlaced,
    BuyDeclined,
    CardBought,
    CardDrawn,
    Event,
    GameStarted,
    GameState,
    Stopped,
    TimedOut,
)
from domain.game.rejudge import recorded_action
from domain.game.results import place, ranks

Grade = Literal["best", "good", "inaccuracy", "mistake", "blunder"]
# the grade of a decision by what it lost (percentage points of winning chance, `drop`):
# below each bound, that grade ("best": the
# chosen action is the best one, or loses nothing measurable)
GRADES: tuple[tuple[float, Grade], ...] = (
    (1e-9, "best"),
    (2.0, "good"),
    (5.0, "inaccuracy"),
    (10.0, "mistake"),
    (math.inf, "blunder"),
)

Vector = tuple[float, ...]


class ActionValue(msgspec.Struct, frozen=True, kw_only=True):
    action: Action
    value: float  # the seat's expected margin after it (as the judge values it), in points
    chance: float  # the seat's chance of winning after it (the same)


class DecisionReview(msgspec.Struct, frozen=True, kw_only=True):
    version: int  # the position's version (its action's events carry version + 1)
    seat: int
    phase: str
    actions: tuple[ActionValue, ...]  # each legal action (legal_actions order)
    chosen: int  # index in actions
    best: int
    lost: float  # percentage points of winning chance (`drop`), the points floor included
    stake: float  # what the worst legal action would have lost (the same unit)
    grade: Grade
    accuracy: float  # 0-100 (move_accuracy of lost)


class CardLuck(msgspec.Struct, frozen=True, kw_only=True):
    version: int  # the position drawn from (the card_drawn event carries version + 1)
    seat: int  # who drew it
    card: str
    value: float  # the drawer's value after it (`luck.value`: points of final margin)
    expected: float  # the drawer's expected value of the draw (the same)
    luck: Vector  # per seat: the card's value less the draw's expected value


class SeatReview(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    decisions: int  # graded decisions
    non_obvious: int  # those of them whose stake exceeds OBVIOUS_STAKE
    accuracy: float | None  # seat_accuracy over the non-obvious ones (None: none)
    performance: float | None  # performance_rating of the accuracy (None: none)
    grades: dict[str, int]
    lost: float  # the sum of its decisions' lost (percentage points of winning chance)
    start: float  # its margin at the first decision
    skill: float  # what its own decisions did to its margin
    others: float  # what the other seats' decisions did to it
    luck: float  # what the cards did to it
    margin: float  # final score less the mean of the others' (= start + skill + others + luck)
    # the result with the luck taken out (`luck_adjusted`): margin - luck, a score whose
    # differences between seats are those margins (the table's total kept), the rank by it
    adjusted_margin: float
    adjusted_score: float
    adjusted_rank: int


class Chances(msgspec.Struct, frozen=True, kw_only=True):
    version: int  # the position's
    chances: Vector  # each seat's chance of winning there


class GameReview(msgspec.Struct, frozen=True, kw_only=True):
    seats: tuple[SeatReview, ...]
    decisions: tuple[DecisionReview, ...]
    cards: tuple[CardLuck, ...]
    chances: tuple[Chances, ...]  # before each action, and at the end


# the first event of each action a seat decides (the others follow from it)
ACTION_EVENTS = (CardDrawn, Stopped, BidPlaced, BidPassed, CardBought, BuyDeclined)


def review(events: Iterable[Event]) -> GameReview:
    """The review of a finished game from its public event log (ValueError if the log is
    not one of a finished game)."""
    steps = _steps(events)
    final = steps[-1][0]
    if final.results is None:
        raise ValueError("only a finished game is reviewed")
    if len(steps) < 2:
        raise ValueError("a game without a decision")
    n = len(final.players)
    start = margins(steps[0][0])
    skill = [0.0] * n  # each seat's own decisions
    others = [0.0] * n  # the other seats' decisions, as they changed each seat's margin
    luck = [0.0] * n
    decisions: list[DecisionReview] = []
    cards: list[CardLuck] = []
    chances: list[Chances] = []
    for (state, event), (after, _next) in itertools.pairwise(steps):
        assert event is not None
        seat: int = event.seat  # type: ignore[attr-defined]
        chances.append(Chances(version=state.version, chances=tuple(win_chances(state))))
        change = _minus(margins(after), margins(state))
        draws = _draw_values(state, seat) if type(event) is CardDrawn else None
        if draws is not None:
            assert type(event) is CardDrawn
            card = _card_luck(state, seat, event.card, draws)
            cards.append(card)
            luck = _plus(luck, card.luck)
            change = _minus(change, card.luck)
        for s, x in enumerate(change):
            if s == seat:
                skill[s] += x
            else:
                others[s] += x
        decision = _decision(state, seat, _chosen(event))
        if decision is not None:
            decisions.append(decision)
    chances.append(Chances(version=final.version, chances=tuple(win_chances(final))))
    end = margins(final)
    adjusted = luck_adjusted(end, luck, final.results)
    seats = _seats(decisions, start, (skill, others, luck), end, adjusted)
    return GameReview(
        seats=tuple(seats), decisions=tuple(decisions), cards=tuple(cards), chances=tuple(chances)
    )


def _card_luck(
    state: GameState, seat: int, card: str, draws: dict[str, tuple[float, Vector]]
) -> CardLuck:
    """The luck of drawing `card` (module docstring), each seat's."""
    if card not in draws:  # an explicit deck's card the standard one lacks
        draws[card] = (
            0.0,
            luck_model.value(luck_model.outcome(state, seat, card), luck_model.pile_share(state)),
        )
    expected = _mean(draws.values())
    value = draws[card][1]
    return CardLuck(
        version=state.version,
        seat=seat,
        card=card,
        value=value[seat],
        expected=expected[seat],
        luck=_minus(value, expected),
    )


def _seats(
    decisions: Sequence[DecisionReview],
    start: Vector,
    parts: tuple[Sequence[float], Sequence[float], Sequence[float]],
    end: Vector,
    adjusted: Sequence[LuckAdjusted],
) -> list[SeatReview]:
    skill, others, luck = parts
    seats = []
    for s in range(len(end)):
        mine = [d for d in decisions if d.seat == s]
        grades = {grade: 0 for _bound, grade in GRADES}
        for d in mine:
            grades[d.grade] += 1
        counted = [d.lost for d in mine if d.stake > OBVIOUS_STAKE]
        accuracy = seat_accuracy(counted)
        seats.append(
            SeatReview(
                seat=s,
                decisions=len(mine),
                non_obvious=len(counted),
                accuracy=accuracy,
                performance=None if accuracy is None else performance_rating(accuracy),
                grades=grades,
                lost=sum(d.lost for d in mine),
                start=start[s],
                skill=skill[s],
                others=others[s],
                luck=luck[s],
                margin=end[s],
                adjusted_margin=adjusted[s].margin,
                adjusted_score=adjusted[s].score,
                adjusted_rank=adjusted[s].rank,
            )
        )
    return seats


class SeatResult(Protocol):
    """What the rules' order of seats reads of a seat's result (`domain.game.model.Result`,
    or the archive's)."""

    @property
    def seat(self) -> int: ...
    @property
    def score(self) -> int: ...
    @property
    def currency(self) -> int: ...
    @property
    def cards(self) -> int: ...
    @property
    def resigned(self) -> bool: ...


class LuckAdjusted(msgspec.Struct, frozen=True, kw_only=True):
    margin: float
    score: float
    rank: int


def luck_adjusted(
    margin: Sequence[float], luck: Sequence[float], results: Iterable[SeatResult]
) -> tuple[LuckAdjusted, ...]:
    """Each seat's result with its luck taken out (seat order): `margin` and `luck` per seat
    as the review counts them (points), `results` the game's final results.

    - margin: `margin - luck` (= start + skill + others).
    - score: the score less `(n - 1) / n` of the luck for n seats (all of it alone): the luck
      of every seat sums to 0, so these scores keep the table's total and each one less the
      mean of the others' is the adjusted margin (a margin fixes scores only up to a shift
      common to the seats; this one moves the total by nothing).
    - rank: by that score, in the rules' order of seats (`domain.game.results.place`: a
      resigned seat below every other, ties by currency then cards, then shared)."""
    by_seat = sorted(results, key=lambda r: r.seat)
    n = len(by_seat)
    share = (n - 1) / n if n > 1 else 1.0
    scores = [r.score - share * x for r, x in zip(by_seat, luck, strict=True)]
    ranked = ranks(
        [place(s, r.resigned, r.currency, r.cards) for s, r in zip(scores, by_seat, strict=True)]
    )
    return tuple(
        LuckAdjusted(margin=m - x, score=s, rank=k)
        for m, x, s, k in zip(margin, luck, scores, ranked, strict=True)
    )


OBVIOUS_STAKE = 1.0  # a decision whose worst action loses no more than this is obvious
ACCURACY_SCALE = 2.0  # the mean loss per non-obvious decision at which accuracy is 100/e
# the bots of known strength, (accuracy, rating) each, by accuracy: each level's mean
# `seat_accuracy` in four-player games of the four levels, and its Weng-Lin mu on a ladder
# of the same games (`service.history.ratings`'s model); levels whose ratings fall out of
# the accuracies' order are pooled (their means), so that a better accuracy never reads as a
# lower rating. bench/bench_grades.py --calibrate measures them
PERFORMANCE_POINTS: tuple[tuple[float, float], ...] = (
    (29.4, -12.5),
    (81.5, 31.7),
    (100.0, 38.3),
)


def seat_accuracy(losses: Sequence[float]) -> float | None:
    """A seat's accuracy (0-100) from what its non-obvious decisions lost (percentage
    points of winning chance each): 100 * exp(-mean / ACCURACY_SCALE); None without any."""
    if not losses:
        return None
    return 100.0 * math.exp(-sum(losses) / len(losses) / ACCURACY_SCALE)


def performance_rating(accuracy: float) -> float:
    """The rating (Weng-Lin mu) of the bots that play with `accuracy`: linear between the
    two `PERFORMANCE_POINTS` around it, and beyond the first or last along their segment."""
    points = PERFORMANCE_POINTS
    k = next((i for i in range(1, len(points) - 1) if accuracy < points[i][0]), len(points) - 1)
    (a0, r0), (a1, r1) = points[k - 1], points[k]
    return r0 + (accuracy - a0) * (r1 - r0) / (a1 - a0)


POINT_FLOOR = 3.0  # a point of expected margin lost, in percentage points of winning chance


class Judged:
    """The judge's value of a position or an action to a seat (`master.position_value`),
    with the seat's winning chance and expected margin (points) beside it: it adds and
    scales by a probability component-wise and compares by `value` alone, so `master`'s
    search (`master.action_value`) picks the continuations it picks for a float."""

    __slots__ = ("chance", "margin", "value")

    def __init__(self, value: float, chance: float, margin: float) -> None:
        self.value = value
        self.chance = chance
        self.margin = margin

    def __add__(self, other: Judged) -> Judged:
        return Judged(
            self.value + other.value, self.chance + other.chance, self.margin + other.margin
        )

    def __radd__(self, other: float) -> Judged:  # 0.0 + self: the start of a sum
        assert other == 0
        return self

    def __rmul__(self, p: float) -> Judged:
        return Judged(p * self.value, p * self.chance, p * self.margin)

    def __gt__(self, other: Judged) -> bool:
        return self.value > other.value

    def __lt__(self, other: Judged) -> bool:
        return self.value < other.value


def judged(state: GameState, seat: int) -> Judged:
    """The judge's value of a position (`master.position_value`, the same sum)."""
    chance = win_chances(state)[seat]
    margin = margins(state)[seat]
    return Judged(chance + MARGIN_WEIGHT * margin, chance, margin)


def drop(best: Judged, chosen: Judged) -> float:
    """What choosing `chosen` over `best` lost (module docstring), in percentage points of
    winning chance: the drop of the winning percentage, or `POINT_FLOOR` per point of
    expected margin dropped if that is more (0 when the chosen one is worth as much)."""
    if not chosen < best:
        return 0.0
    return max(
        100.0 * (best.chance - chosen.chance), POINT_FLOOR * (best.margin - chosen.margin), 0.0
    )


def move_accuracy(lost: float) -> float:
    """A decision's accuracy (0-100) from what it lost (percentage points of winning
    chance): Lichess's curve of a move's accuracy from the drop of the mover's winning
    percentage: 100 for nothing lost, about 80 for 5, about 64 for 10, about 51 for 15."""
    if lost <= 0:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * lost) - 3.166924740191411
    return min(max(raw, 0.0), 100.0)


def grade(lost: float) -> Grade:
    for bound, name in GRADES:
        if lost < bound:
            return name
    raise AssertionError("the last bound is infinite")


def _steps(events: Iterable[Event]) -> list[tuple[GameState, Event | None]]:
    """The position before each action's first event, with that event; last, the final
    position (with None). A move the clock made after a timeout is the position before its
    `timed_out` event (which carries the version after the move): the one it was chosen on."""
    state: GameState | None = None
    steps: list[tuple[GameState, Event | None]] = []
    chosen_on: GameState | None = None  # the position a timed-out seat's move was made on
    for event in events:
        if state is None:
            if type(event) is not GameStarted:
                raise ValueError("an event log starts with game_started")
            state = evolve(None, event)
            continue
        if type(event) is TimedOut:
            chosen_on = state
        elif isinstance(event, ACTION_EVENTS):
            steps.append((chosen_on or state, event))
            chosen_on = None
        state = evolve(state, event)
    if state is None:
        raise ValueError("an empty event log")
    steps.append((state, None))
    return steps


def _chosen(event: Event) -> Action:
    """The action whose first event is `event` (`domain.game.rejudge.recorded_action`)."""
    recorded = recorded_action(event)
    if recorded is None:
        raise AssertionError(f"not an action's first event: {event!r}")
    return recorded[1]


def _same(a: Action, b: Action) -> bool:
    """The chosen action is this legal one (a bid whatever payment it named)."""
    if type(a) is Bid and type(b) is Bid:
        return a.amount == b.amount
    return a == b


def _decision(state: GameState, seat: int, chosen: Action) -> DecisionReview | None:
    """A decision valued by the judge, `master`'s search (module docstring)."""
    actions = legal_actions(state, seat)
    if len(actions) < 2:
        return None  # forced
    if not any(_same(chosen, a) for a in actions):
        actions.append(chosen)  # a purchase paid otherwise than the service would
    values: list[Judged] = [action_value(state, seat, a, judged, DEPTH) for a in actions]
    index = next(i for i, a in enumerate(actions) if _same(chosen, a))
    candidates = {id(a) for a in searched(state, seat, actions)}
    best = max(
        (i for i, a in enumerate(actions) if id(a) in candidates),
        key=lambda i: (values[i].value, -i),
    )
    lost = 0.0 if index == best else drop(values[best], values[index])
    stake = max(drop(values[best], v) for v in values)
    return DecisionReview(
        version=state.version,
        seat=seat,
        phase=state.phase,
        actions=tuple(
            ActionValue(action=a, value=v.margin, chance=v.chance)
            for a, v in zip(actions, values, strict=True)
        ),
        chosen=index,
        best=best,
        lost=lost,
        stake=stake,
        grade=grade(lost),
        accuracy=move_accuracy(lost),
    )


def _draw_values(state: GameState, seat: int) -> dict[str, tuple[float, Vector]]:
    """For each card the draw may bring: its probability, and each seat's value of the
    position it leads to (`luck.outcome`, `luck.value`)."""
    share = luck_model.pile_share(state)
    return {
        code: (float(p), luck_model.value(luck_model.outcome(state, seat, code), share))
        for code, p in chance_outcomes(state)
    }


def _mean(weighted: Iterable[tuple[float, Sequence[float]]]) -> Vector:
    total: list[float] | None = None
    for p, vector in weighted:
        if total is None:
            total = [p * x for x in vector]
        else:
            for i, x in enumerate(vector):
                total[i] += p * x
    assert total is not None, "a draw with no outcome"
    return tuple(total)


def _plus(a: Sequence[float], b: Sequence[float]) -> list[float]:
    return [x + y for x, y in zip(a, b, strict=True)]


def _minus(a: Sequence[float], b: Sequence[float]) -> Vector:
    return tuple(x - y for x, y in zip(a, b, strict=True))
