"""`domain.bots.review`: every decision of a finished game valued, skill and luck per seat (issue 24)."""

from __future__ import annotations

import itertools
import math
import statistics

import msgspec
import pytest
from msgspec.structs import replace

from domain.bots import luck
from domain.bots.clock import start_clock, time_out
from domain.bots.master import DEPTH, MARGIN_WEIGHT, action_value, position_value, searched, settle
from domain.bots.odds import chance_outcomes
from domain.bots.review import (
    ACCURACY_SCALE,
    ACTION_EVENTS,
    GRADES,
    OBVIOUS_STAKE,
    PERFORMANCE_POINTS,
    POINT_FLOOR,
    Judged,
    drop,
    grade,
    luck_adjusted,
    margins,
    move_accuracy,
    performance_rating,
    review,
    seat_accuracy,
)
from domain.bots.simulation import play_bots, play_game
from domain.bots.winning import win_chances
from domain.game.engine import apply, evolve, new_game
from domain.game.legal import legal_actions
from domain.game.model import (
    BankClock,
    CardBought,
    CardDrawn,
    GameStarted,
    Player,
    Rules,
    Stop,
    TimedOut,
)
from domain.game.results import final_results

# the module's tests on one worker: its module fixture `reviewed` (18 games, each reviewed by the
# master judge) is made once (--dist loadgroup would spread them over the workers, and each would
# make it)
pytestmark = pytest.mark.xdist_group("unit-review")

TABLES = [
    ["expert", "basic"],
    ["random", "expert"],
    ["basic", "random", "expert"],
    ["random", "basic", "expert", "master"],
    ["master", "expert"],
    ["basic", "basic", "random", "expert", "basic"],
]


def games(tables=TABLES, per=3, seed="review"):
    for t, bots in enumerate(tables):
        for g in range(per):
            yield bots, play_game(bots, f"{seed}/{t}/{g}")


@pytest.fixture(scope="module")
def reviewed():
    return [(bots, game, review(game.events)) for bots, game in games()]


def test_skill_others_and_luck_add_up_to_each_seats_final_margin(reviewed) -> None:
    """The margin is computed here from the final scores, independently of the review."""
    for _bots, game, r in reviewed:
        scores = {res.seat: res.score for res in game.state.results}
        n = len(scores)
        for seat in r.seats:
            others = [scores[s] for s in scores if s != seat.seat]
            margin = scores[seat.seat] - sum(others) / (n - 1)
            assert seat.margin == pytest.approx(margin, abs=1e-9)
            parts = seat.start + seat.skill + seat.others + seat.luck
            assert parts == pytest.approx(margin, abs=1e-9)
            assert seat.start == pytest.approx(0.0, abs=1e-9)  # the seats start alike
        # the margins, and every card's luck, sum to 0 over the seats
        assert sum(s.margin for s in r.seats) == pytest.approx(0.0, abs=1e-9)
        for card in r.cards:
            assert sum(card.luck) == pytest.approx(0.0, abs=1e-9)


def _order(score: float, result) -> tuple:
    """The rules' order of seats, written out here (rules.md D16): not resigned first, then
    the higher score, the most currency, the fewest cards."""
    return (result.resigned, -score, -result.currency, result.cards)


def test_a_seats_luck_adjusted_result_is_its_result_with_its_luck_taken_out(reviewed) -> None:
    """Checked against the final results, not the review's own margins: the adjusted scores
    keep the table's total and differ between seats as the adjusted margins do; the adjusted
    rank is the rules' order by them."""
    reordered = 0
    for _bots, game, r in reviewed:
        results = {res.seat: res for res in game.state.results}
        n = len(results)
        total = sum(res.score for res in results.values())
        assert sum(s.adjusted_score for s in r.seats) == pytest.approx(total, abs=1e-9)
        for seat in r.seats:
            assert seat.adjusted_margin == pytest.approx(seat.margin - seat.luck, abs=1e-9)
            own = seat.start + seat.skill + seat.others
            assert seat.adjusted_margin == pytest.approx(own, abs=1e-9)
            others = [s.adjusted_score for s in r.seats if s.seat != seat.seat]
            margin = seat.adjusted_score - sum(others) / (n - 1)
            assert margin == pytest.approx(seat.adjusted_margin, abs=1e-9)
            mine = _order(seat.adjusted_score, results[seat.seat])
            before = [s for s in r.seats if _order(s.adjusted_score, results[s.seat]) < mine]
            assert seat.adjusted_rank == 1 + len(before)
        if [s.adjusted_rank for s in r.seats] != [results[s.seat].rank for s in r.seats]:
            reordered += 1
    assert reordered > 0, "the luck changed no game's order: the ranks were not checked"


def test_without_luck_the_adjusted_results_are_the_results() -> None:
    """The rules' ties included: a resigned seat last whatever its score, equal scores
    ordered by currency then cards, a full tie shared (the next rank skipped)."""
    names = ("Ann", "Bob", "Cid", "Dee", "Eve")
    players = [
        Player(seat=0, name=names[0], cards=("R1", "R2", "R3"), resigned=True),  # 3 points
        Player(seat=1, name=names[1], cards=("B1",), currency=2),  # 1 point
        Player(seat=2, name=names[2], cards=("G1",), currency=4),  # 1 point, more currency
        Player(seat=3, name=names[3], cards=("O1", "O5"), currency=4),  # more cards
        Player(seat=4, name=names[4], cards=("R1",), currency=4),  # tied with Cid
    ]
    results = final_results(players, Rules())
    assert [r.rank for r in results] == [5, 4, 1, 3, 1]
    scores = [r.score for r in results]
    end = [x - (sum(scores) - x) / 4 for x in scores]
    adjusted = luck_adjusted(end, [0.0] * 5, reversed(results))  # results in any order
    assert [a.rank for a in adjusted] == [r.rank for r in results]
    assert [a.score for a in adjusted] == scores
    assert [a.margin for a in adjusted] == end


class _Result(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    score: int
    currency: int = 0
    cards: int = 5
    resigned: bool = False


def test_the_luck_taken_out_can_change_the_order_but_never_lifts_a_resigned_seat() -> None:
    # heads-up: 30 against 25 on a card worth 7 points of margin: the loser played better
    two = luck_adjusted(
        [5.0, -5.0], [7.0, -7.0], [_Result(seat=0, score=30), _Result(seat=1, score=25)]
    )
    assert [(a.margin, a.score, a.rank) for a in two] == [(-2.0, 26.5, 2), (2.0, 28.5, 1)]
    # a resigned seat with the worst luck stays last; alone, the whole luck comes off the score
    three = luck_adjusted(
        [3.0, 0.0, -3.0],
        [-20.0, 10.0, 10.0],
        [
            _Result(seat=0, score=12, resigned=True),
            _Result(seat=1, score=10),
            _Result(seat=2, score=8),
        ],
    )
    assert [a.rank for a in three] == [3, 1, 2]
    assert three[0].score > three[1].score  # ahead on the adjusted score, still last
    (alone,) = luck_adjusted([20.0], [6.5], [_Result(seat=0, score=20)])
    assert (alone.margin, alone.score, alone.rank) == (13.5, 13.5, 1)


def test_every_card_drawn_is_valued_against_the_draw_it_came_from(reviewed) -> None:
    for _bots, game, r in reviewed:
        drawn = [e for e in game.events if type(e) is CardDrawn]
        assert [(c.seat, c.card) for c in r.cards] == [(e.seat, e.card) for e in drawn]
        for card in r.cards:
            assert card.luck[card.seat] == pytest.approx(card.value - card.expected, abs=1e-9)


def test_luck_is_the_card_against_the_mean_over_the_unseen_cards() -> None:
    """Rebuilt here by folding the log: the expected value of a draw is the mean over the
    unseen cards of each seat's `luck.value` of the position the card leads to, at the share
    of the pile the card was drawn from; the card's luck is its value less that mean."""
    game = play_game(["basic", "expert", "random"], "review/values")
    r = review(game.events)
    for card in r.cards:
        before = _state_at(game.events, card.version)
        share = luck.pile_share(before)
        expected = [0.0, 0.0, 0.0]
        for code, p in chance_outcomes(before):
            v = luck.value(luck.outcome(before, card.seat, code), share)
            expected = [e + float(p) * x for e, x in zip(expected, v, strict=True)]
        drawn = luck.value(luck.outcome(before, card.seat, card.card), share)
        assert card.expected == pytest.approx(expected[card.seat], abs=1e-9)
        assert card.value == pytest.approx(drawn[card.seat], abs=1e-9)
        assert list(card.luck) == pytest.approx(
            [d - e for d, e in zip(drawn, expected, strict=True)], abs=1e-9
        )
    assert len(r.cards) > 20


def test_the_values_are_the_judges_masters_search() -> None:
    """A stop's chance and margin are those of the position settled after it; every
    action's value (chance + MARGIN_WEIGHT x margin) is the one master's search gives."""
    game = play_game(["basic", "expert", "random", "master"], "review/judge")
    r = review(game.events)
    checked = 0
    for d in r.decisions:
        before = _state_at(game.events, d.version)
        for av in d.actions:
            if type(av.action) is Stop:
                after = settle(apply(before, d.seat, av.action)[0])
                assert av.value == pytest.approx(margins(after)[d.seat], abs=1e-9)
                assert av.chance == pytest.approx(win_chances(after)[d.seat], abs=1e-9)
            judge = action_value(before, d.seat, av.action, position_value, DEPTH)
            assert av.chance + MARGIN_WEIGHT * av.value == pytest.approx(judge, abs=1e-9)
            checked += 1
        # the best is master's choice among the actions it searches
        candidates = searched(before, d.seat, legal_actions(before, d.seat))
        assert any(c == d.actions[d.best].action for c in candidates)
    assert checked > 50


def _state_at(events, version):
    """The position at `version`, before the action whose events make `version + 1`."""
    state = None
    for event in events:
        if type(event) is GameStarted:
            state = evolve(None, event)
            continue
        if event.version == version + 1 and isinstance(event, ACTION_EVENTS):
            return state
        state = evolve(state, event)
    raise AssertionError(f"no action at version {version}")


def test_each_decision_names_its_chosen_and_best_actions(reviewed) -> None:
    for _bots, _game, r in reviewed:
        for d in r.decisions:
            values = [a.chance + MARGIN_WEIGHT * a.value for a in d.actions]
            assert len(d.actions) >= 2  # forced moves are not graded
            best, chosen = d.actions[d.best], d.actions[d.chosen]
            if d.phase != "auction":  # there only what master searches may be the best
                assert values[d.best] == pytest.approx(max(values), abs=1e-12)
            if values[d.chosen] >= values[d.best] - 1e-12:
                assert d.lost == pytest.approx(0, abs=1e-9)
            else:
                win = 100 * (best.chance - chosen.chance)
                points = POINT_FLOOR * (best.value - chosen.value)
                assert d.lost == pytest.approx(max(win, points), abs=1e-9)
            assert d.lost >= 0
            assert d.grade == grade(d.lost)
            assert d.accuracy == move_accuracy(d.lost)
            assert (d.grade == "best") == (d.lost < GRADES[0][0])
        for seat in r.seats:
            mine = [d for d in r.decisions if d.seat == seat.seat]
            assert seat.decisions == len(mine) == sum(seat.grades.values())
            assert seat.lost == pytest.approx(sum(d.lost for d in mine))


def test_masters_decisions_are_the_judges_best(reviewed) -> None:
    """By construction: the judge is master's search, which reads what master read."""
    graded = 0
    for bots, _game, r in reviewed:
        for d in r.decisions:
            if bots[d.seat] == "master":
                assert (d.chosen, d.lost, d.grade) == (d.best, 0.0, "best")
                graded += 1
    assert graded > 100


def test_what_a_decision_lost_is_the_drop_in_winning_chance_or_the_points_floor() -> None:
    live_best, live_chosen = Judged(0.62, 0.60, 2.0), Judged(0.505, 0.50, 0.5)
    assert drop(live_best, live_chosen) == pytest.approx(10.0)  # 10 points of win% > 3 x 1.5
    settled_best, settled_chosen = Judged(0.04, 0.0, -4.0), Judged(0.01, 0.0, -7.0)
    assert drop(settled_best, settled_chosen) == pytest.approx(3 * POINT_FLOOR)
    # more points for less chance: the drop in winning chance alone
    assert drop(Judged(0.5, 0.5, 0.0), Judged(0.48, 0.45, 3.0)) == pytest.approx(5.0)
    assert drop(live_best, live_best) == 0
    assert drop(live_chosen, live_best) == 0  # worth more to the judge: nothing lost


def test_grades_and_accuracy_fall_with_what_was_lost() -> None:
    assert move_accuracy(0) == 100
    assert 60 < move_accuracy(10) < 70
    lost = [0, 1e-12, 0.5, 2, 4, 5, 9, 10, 20, 50, 100]
    accuracies = [move_accuracy(x) for x in lost]
    assert accuracies == sorted(accuracies, reverse=True)
    assert accuracies[-1] == 0
    names = [g for _bound, g in GRADES]
    ranks = [names.index(grade(x)) for x in lost]
    assert ranks == sorted(ranks)
    assert [grade(x) for x in (0, 1.9, 4, 9, 10)] == [
        "best",
        "good",
        "inaccuracy",
        "mistake",
        "blunder",
    ]


def test_a_stronger_bot_is_more_accurate(reviewed) -> None:
    accuracy: dict[str, list[float]] = {}
    seats: dict[str, list[float]] = {}
    for bots, _game, r in reviewed:
        for d in r.decisions:
            accuracy.setdefault(bots[d.seat], []).append(d.accuracy)
        for seat in r.seats:
            if seat.accuracy is not None:
                seats.setdefault(bots[seat.seat], []).append(seat.accuracy)
    for by in (accuracy, seats):
        mean = {level: statistics.mean(a) for level, a in by.items()}
        assert mean["random"] < mean["basic"] < mean["expert"] < mean["master"], mean
    assert statistics.mean(seats["random"]) < 50  # random play grades low
    assert min(seats["master"]) == 100.0  # the judge's own choices lose nothing


def test_a_seats_skill_is_its_own_decisions_and_others_the_rest(reviewed) -> None:
    """Folded here action by action, independently of the review: each action's change of
    the margins (less its card's luck) goes to its own seat's skill and to the other seats'
    `others`."""
    for _bots, game, r in reviewed:
        steps = list(_positions(game.events))
        n = len(r.seats)
        own, rest = [0.0] * n, [0.0] * n
        luck = {c.version: c.luck for c in r.cards}
        for (event, before), (_next, after) in itertools.pairwise(steps):
            change = [a - b for a, b in zip(margins(after), margins(before), strict=True)]
            if type(event) is CardDrawn:
                change = [c - x for c, x in zip(change, luck[before.version], strict=True)]
            for s in range(n):
                if s == event.seat:
                    own[s] += change[s]
                else:
                    rest[s] += change[s]
        for seat in r.seats:
            assert seat.skill == pytest.approx(own[seat.seat], abs=1e-6)
            assert seat.others == pytest.approx(rest[seat.seat], abs=1e-6)


def _positions(events):
    """Each action's first event with the position before it (none of these games has a
    timeout), then (None, the final position)."""
    state = None
    for event in events:
        if type(event) is GameStarted:
            state = evolve(None, event)
            continue
        if isinstance(event, ACTION_EVENTS):
            yield event, state
        state = evolve(state, event)
    yield None, state


def test_a_seats_accuracy_is_over_its_non_obvious_decisions(reviewed) -> None:
    for _bots, _game, r in reviewed:
        for seat in r.seats:
            mine = [d for d in r.decisions if d.seat == seat.seat]
            counted = [d.lost for d in mine if d.stake > OBVIOUS_STAKE]
            assert seat.non_obvious == len(counted)
            if not counted:
                assert seat.accuracy is None
                assert seat.performance is None
                continue
            mean = sum(counted) / len(counted)
            assert seat.accuracy == pytest.approx(100 * math.exp(-mean / ACCURACY_SCALE))
            assert seat.performance == performance_rating(seat.accuracy)
        for d in r.decisions:
            assert d.stake >= d.lost >= 0  # the worst action loses at least the chosen one


def test_accuracy_is_100_for_nothing_lost_and_falls_with_the_mean_loss() -> None:
    assert seat_accuracy([]) is None
    assert seat_accuracy([0.0, 0.0]) == 100.0
    assert seat_accuracy([ACCURACY_SCALE]) == pytest.approx(100 / math.e)
    assert seat_accuracy([1.0, 3.0]) == seat_accuracy([2.0, 2.0])  # by the mean
    assert seat_accuracy([1.0]) > seat_accuracy([2.0]) > seat_accuracy([20.0]) > 0


def test_the_performance_rating_passes_through_the_bots_and_rises_with_accuracy() -> None:
    for accuracy, rating in PERFORMANCE_POINTS:
        assert performance_rating(accuracy) == pytest.approx(rating)
    grid = [performance_rating(a / 2) for a in range(201)]
    assert grid == sorted(grid)
    (a0, r0), (a1, r1) = PERFORMANCE_POINTS[:2]
    assert performance_rating(0.0) == pytest.approx(r0 - a0 * (r1 - r0) / (a1 - a0))


def test_only_a_finished_game_is_reviewed() -> None:
    game = play_game(["basic", "basic"], "review/unfinished")
    cut = next(i for i, e in enumerate(game.events) if type(e) is CardBought)
    with pytest.raises(ValueError, match="finished"):
        review(game.events[:cut])
    with pytest.raises(ValueError, match="game_started"):
        review(game.events[1:])
    with pytest.raises(ValueError, match="empty"):
        review([])


def _timed_out_game(seed: str) -> list:
    """A game whose human seat 0 lets every deadline pass (its bot moves for it, then takes it
    over) against an expert: the log of a game the clock played in part."""
    state, events = new_game([("Ann", None), ("Bot", "expert")], seed)
    state = replace(state, takeover_bot="basic")
    state, moved = play_bots(state)
    events = [*events, *moved]
    state = start_clock(state, BankClock(initial_seconds=60, takeover_after=3), now=0.0)
    now = 0.0
    while state.phase != "finished":
        now += 1000.0
        state, moved = time_out(state, now)
        events.extend(moved)
    return events


def test_a_move_the_clock_made_is_reviewed_at_the_position_it_was_chosen_on() -> None:
    events = _timed_out_game("review/timeout")
    timed = [e for e in events if type(e) is TimedOut]
    assert timed, "no timeout in the log"
    r = review(events)
    # every action's first event carries its position's version + 1: a decision, a card and
    # a chances entry name the position before the action, the timed-out ones included
    firsts = {e.version - 1: e for e in events if isinstance(e, ACTION_EVENTS)}
    for item in (*r.decisions, *r.cards):
        assert item.version in firsts, item
        assert firsts[item.version].seat == item.seat, (item, firsts[item.version])
    for timeout in timed:
        first = next(e for e in events if e.seq == timeout.seq + 1)
        assert isinstance(first, ACTION_EVENTS), first
        reviewed = [d for d in r.decisions if d.version == first.version - 1]
        drawn = [c for c in r.cards if c.version == first.version - 1]
        assert reviewed or drawn, f"the timed-out move at v{first.version - 1} not reviewed"
        assert all(d.seat == timeout.seat for d in reviewed), reviewed
    versions = [c.version for c in r.chances]
    assert versions == sorted(set(versions)), versions  # one entry per position, in order
