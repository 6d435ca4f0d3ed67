"""The post-game review (issue 24, item 3): every decision of a finished game valued from
what its player knew, and each seat's result split into skill and luck.

Everything is read from the public event log (`evolve` folded over it: the pile `HIDDEN`,
no seed), so a review knows what the players knew and nothing more.

**Value.** A position's value to a seat is its *expected margin* in points: its equity
(`expert.equity`: the points of its best scoring plus what its tokens and spare cards are
worth) minus the mean of the other seats' equities; once the game is finished, the final
score minus the mean of the other final scores (the margins sum to 0 over the seats). Its
*winning chances* are `winning.win_chances` of the position.

**Each legal action** of a decision (those with two or more legal actions; a turn's first
draw is forced) is valued by its outcome:

- a stop, a purchase, a decline: the position right after it;
- a draw: the exact expectation over the next card (`odds.chance_outcomes`, each unseen
  card at its probability, given to the engine as the draw's outcome) of the position
  after that card and the seat's better stop then (a bust, or a wild card's auction, as it
  stands: the auction is a later decision);
- a bid or a pass: the position once the auction ends, its later bids played by the
  `expert` bot for every bidder.

The *best* action is the one of the highest value to the seat (the first in
`legal_actions` order among equals); *lost* is the best's value less the chosen one's
(points, >= 0). A decision's grade follows the points lost (`GRADES`); its accuracy is
Lichess's curve of a move's accuracy (`move_accuracy`), with a point of expected margin lost
counted as 10 percentage points of winning chance (about the slope of the win model at an
even two-player position in the middle of the pile). Winning chances themselves are not
graded: a seat far behind has chances near 0 whatever it does, and would look accurate.
A seat's accuracy is the mean over its graded decisions.

**Luck.** For every card drawn (forced draws included), each seat's luck is the value of
the card drawn (the position after it, the drawer's better stop then, as above) less the
expected value of the draw: on average over the cards it could have been, 0.

**Skill and luck account for the margin.** Each seat's final margin is its value at the
first decision (`start`, 0 when the seats start alike) plus the change of its value over
every step of the game. The changes over the cards drawn are the luck above; everything
else (the seat's own decisions, the other seats' decisions, and what the value's horizon
did not see coming, such as the realisation of a lucky card at the next stop) is `skill`:
so `start + skill + luck` is the final margin, exactly (the steps are summed one by one;
`tests/unit/test_review.py` checks the sum against the final scores).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from domain.engine import apply, evolve, to_act
from domain.expert import equity, expert_bot
from domain.legal import legal_actions
from domain.model import (
    Action,
    Bid,
    BidPassed,
    BidPlaced,
    Buy,
    BuyDeclined,
    CardBought,
    CardDrawn,
    Decline,
    Draw,
    Event,
    GameStarted,
    GameState,
    Pass,
    Stop,
    Stopped,
)
from domain.odds import chance_outcomes
from domain.rng import SeededRandom
from domain.winning import win_chances

Grade = Literal["best", "good", "inaccuracy", "mistake", "blunder"]
# the grade of a decision by the points it lost: below each bound, that grade ("best": the
# chosen action is the best one, or loses nothing measurable)
GRADES: tuple[tuple[float, Grade], ...] = (
    (1e-9, "best"),
    (0.5, "good"),
    (1.5, "inaccuracy"),
    (3.0, "mistake"),
    (math.inf, "blunder"),
)

Vector = tuple[float, ...]


class ActionValue(msgspec.Struct, frozen=True, kw_only=True):
    action: Action
    value: float  # the seat's expected margin after it, in points
    chance: float  # the seat's chance of winning after it


class DecisionReview(msgspec.Struct, frozen=True, kw_only=True):
    version: int  # the position's version (its action's events carry version + 1)
    seat: int
    phase: str
    actions: tuple[ActionValue, ...]  # each legal action (legal_actions order)
    chosen: int  # index in actions
    best: int
    lost: float  # points: the best's value less the chosen one's
    grade: Grade
    accuracy: float  # 0-100 (move_accuracy of the points lost)


class CardLuck(msgspec.Struct, frozen=True, kw_only=True):
    version: int  # the position drawn from (the card_drawn event carries version + 1)
    seat: int  # who drew it
    card: str
    value: float  # the drawer's expected margin after it
    expected: float  # the drawer's expected margin of the draw
    luck: Vector  # per seat: the card's value less the draw's expected value


class SeatReview(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    decisions: int  # graded decisions
    accuracy: float | None  # mean accuracy of its graded decisions (None: none)
    grades: dict[str, int]
    lost: float  # points lost over its decisions
    start: float  # its value at the first decision
    skill: float
    luck: float
    margin: float  # final score less the mean of the others' (= start + skill + luck)


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
_DRAW = Draw()
_NO_RNG = SeededRandom("review")  # the expert bot takes a random source and uses none


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
    skill = [0.0] * n
    luck = [0.0] * n
    decisions: list[DecisionReview] = []
    cards: list[CardLuck] = []
    chances: list[Chances] = []
    for (state, event), (after, _next) in itertools.pairwise(steps):
        assert event is not None
        seat: int = event.seat  # type: ignore[attr-defined]
        chances.append(Chances(version=state.version, chances=tuple(win_chances(state))))
        change = _minus(margins(after), margins(state))
        draws = _draw_outcomes(state, seat) if type(event) is CardDrawn else None
        if draws is not None:
            assert type(event) is CardDrawn
            card = _card_luck(state, seat, event.card, draws)
            cards.append(card)
            luck = _plus(luck, card.luck)
            change = _minus(change, card.luck)
        skill = _plus(skill, change)
        decision = _decision(state, seat, _chosen(event), draws)
        if decision is not None:
            decisions.append(decision)
    chances.append(Chances(version=final.version, chances=tuple(win_chances(final))))
    seats = _seats(decisions, start, skill, luck, margins(final))
    return GameReview(
        seats=tuple(seats), decisions=tuple(decisions), cards=tuple(cards), chances=tuple(chances)
    )


def _card_luck(
    state: GameState, seat: int, card: str, draws: dict[str, tuple[float, _Outcome]]
) -> CardLuck:
    """The luck of drawing `card` (module docstring), each seat's."""
    if card not in draws:  # an explicit deck's card the standard one lacks
        draws[card] = (0.0, _drawn(state, seat, card))
    expected = _mean((p, v) for p, (v, _c) in draws.values())
    value = draws[card][1][0]
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
    skill: Sequence[float],
    luck: Sequence[float],
    end: Vector,
) -> list[SeatReview]:
    seats = []
    for s in range(len(end)):
        mine = [d for d in decisions if d.seat == s]
        grades = {grade: 0 for _bound, grade in GRADES}
        for d in mine:
            grades[d.grade] += 1
        seats.append(
            SeatReview(
                seat=s,
                decisions=len(mine),
                accuracy=sum(d.accuracy for d in mine) / len(mine) if mine else None,
                grades=grades,
                lost=sum(d.lost for d in mine),
                start=start[s],
                skill=skill[s],
                luck=luck[s],
                margin=end[s],
            )
        )
    return seats


def margins(state: GameState) -> Vector:
    """Each seat's value (module docstring): its equity, or once finished its score, less
    the mean of the other seats'."""
    if state.results is not None:
        worth = [float(r.score) for r in sorted(state.results, key=lambda r: r.seat)]
    else:
        bonus = state.rules.perfect_bonus
        worth = [equity(p, bonus) for p in state.players]
    n = len(worth)
    if n == 1:
        return (worth[0],)
    total = sum(worth)
    return tuple(w - (total - w) / (n - 1) for w in worth)


POINT_PERCENT = 10.0  # a point of expected margin lost, in percentage points of winning chance


def move_accuracy(lost: float) -> float:
    """A decision's accuracy (0-100) from the points it lost: Lichess's curve of a move's
    accuracy from the drop of the mover's winning percentage, a point counted as
    `POINT_PERCENT`: 100 for nothing lost, about 64 for one point, about 40 for two."""
    if lost <= 0:
        return 100.0
    percent = lost * POINT_PERCENT
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * percent) - 3.166924740191411
    return min(max(raw, 0.0), 100.0)


def grade(lost: float) -> Grade:
    for bound, name in GRADES:
        if lost < bound:
            return name
    raise AssertionError("the last bound is infinite")


def _steps(events: Iterable[Event]) -> list[tuple[GameState, Event | None]]:
    """The position before each action's first event, with that event; last, the final
    position (with None)."""
    state: GameState | None = None
    steps: list[tuple[GameState, Event | None]] = []
    for event in events:
        if state is None:
            if type(event) is not GameStarted:
                raise ValueError("an event log starts with game_started")
            state = evolve(None, event)
            continue
        if isinstance(event, ACTION_EVENTS):
            steps.append((state, event))
        state = evolve(state, event)
    if state is None:
        raise ValueError("an empty event log")
    steps.append((state, None))
    return steps


def _chosen(event: Event) -> Action:
    """The action whose first event is `event`."""
    match event:
        case CardDrawn():
            return _DRAW
        case Stopped(take=take):
            return Stop(take=take)
        case BidPlaced(amount=amount):
            return Bid(amount=amount)
        case BidPassed():
            return Pass()
        case CardBought(card=card, payment=payment):
            return Buy(card=card, payment=payment)
        case BuyDeclined():
            return Decline()
    raise AssertionError(f"not an action's first event: {event!r}")


def _same(a: Action, b: Action) -> bool:
    """The chosen action is this legal one (a bid whatever payment it named)."""
    if type(a) is Bid and type(b) is Bid:
        return a.amount == b.amount
    return a == b


_Outcome = tuple[Vector, Vector]  # (margins, winning chances)


def _decision(
    state: GameState,
    seat: int,
    chosen: Action,
    draws: dict[str, tuple[float, _Outcome]] | None,
) -> DecisionReview | None:
    actions = legal_actions(state, seat)
    if len(actions) < 2:
        return None  # forced
    if not any(_same(chosen, a) for a in actions):
        actions.append(chosen)  # a purchase paid otherwise than the service would
    valued: list[ActionValue] = []
    index = -1
    for i, action in enumerate(actions):
        if type(action) is Draw:
            assert draws is not None or type(chosen) is not Draw
            outcomes = draws if draws is not None else _draw_outcomes(state, seat)
            value = _mean((p, v) for p, (v, _c) in outcomes.values())
            chance = _mean((p, c) for p, (_v, c) in outcomes.values())
        else:
            value, chance = _outcome(_after(state, seat, action))
        valued.append(ActionValue(action=action, value=value[seat], chance=chance[seat]))
        if index < 0 and _same(chosen, action):
            index = i
    best = max(range(len(valued)), key=lambda i: (valued[i].value, -i))
    lost = max(valued[best].value - valued[index].value, 0.0)
    if index == best:
        lost = 0.0
    return DecisionReview(
        version=state.version,
        seat=seat,
        phase=state.phase,
        actions=tuple(valued),
        chosen=index,
        best=best,
        lost=lost,
        grade=grade(lost),
        accuracy=move_accuracy(lost),
    )


def _outcome(state: GameState) -> _Outcome:
    return margins(state), tuple(win_chances(state))


def _after(state: GameState, seat: int, action: Action) -> GameState:
    """The position an action leads to (module docstring): a bid's or a pass's once the
    auction is over."""
    after, _events = apply(state, seat, action)
    while after.phase == "auction":
        bidder = to_act(after)
        assert bidder is not None
        after, _events = apply(after, bidder, expert_bot(after, bidder, _NO_RNG))
    return after


def _draw_outcomes(state: GameState, seat: int) -> dict[str, tuple[float, _Outcome]]:
    """For each card the draw may bring: its probability, and the outcome after it and
    the drawer's better stop (a bust or an auction as it stands)."""
    return {code: (float(p), _drawn(state, seat, code)) for code, p in chance_outcomes(state)}


def _drawn(state: GameState, seat: int, card: str) -> _Outcome:
    """The outcome of drawing `card`, then the drawer's better stop if it may stop."""
    after, _events = apply(state, seat, _DRAW, card=card)
    if after.phase == "draw" and after.drawn and to_act(after) == seat:
        stops = [
            _outcome(apply(after, seat, a)[0])
            for a in legal_actions(after, seat)
            if type(a) is Stop
        ]
        return max(stops, key=lambda o: o[0][seat])
    return _outcome(after)


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
