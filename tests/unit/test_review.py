"""`domain.review`: every decision of a finished game valued, skill and luck per seat (issue 24)."""

from __future__ import annotations

import statistics

import pytest

from domain.engine import apply, evolve
from domain.legal import legal_actions
from domain.model import CardBought, CardDrawn, Draw, GameStarted, Stop
from domain.odds import chance_outcomes
from domain.review import ACTION_EVENTS, GRADES, grade, margins, move_accuracy, review
from domain.simulation import play_game

pytestmark = pytest.mark.unit

TABLES = [
    ["expert", "basic"],
    ["random", "expert"],
    ["basic", "random", "expert"],
    ["random", "basic", "expert", "expert"],
    ["basic", "basic", "random", "expert", "basic"],
]


def games(tables=TABLES, per=3, seed="review"):
    for t, bots in enumerate(tables):
        for g in range(per):
            yield bots, play_game(bots, f"{seed}/{t}/{g}")


@pytest.fixture(scope="module")
def reviewed():
    return [(bots, game, review(game.events)) for bots, game in games()]


def test_skill_and_luck_add_up_to_each_seats_final_margin(reviewed) -> None:
    """The margin is computed here from the final scores, independently of the review."""
    for _bots, game, r in reviewed:
        scores = {res.seat: res.score for res in game.state.results}
        n = len(scores)
        for seat in r.seats:
            others = [scores[s] for s in scores if s != seat.seat]
            margin = scores[seat.seat] - sum(others) / (n - 1)
            assert seat.margin == pytest.approx(margin, abs=1e-9)
            assert seat.start + seat.skill + seat.luck == pytest.approx(margin, abs=1e-9)
            assert seat.start == pytest.approx(0.0, abs=1e-9)  # the seats start alike
        # the margins, and every card's luck, sum to 0 over the seats
        assert sum(s.margin for s in r.seats) == pytest.approx(0.0, abs=1e-9)
        for card in r.cards:
            assert sum(card.luck) == pytest.approx(0.0, abs=1e-9)


def test_every_card_drawn_is_valued_against_the_draw_it_came_from(reviewed) -> None:
    for _bots, game, r in reviewed:
        drawn = [e for e in game.events if type(e) is CardDrawn]
        assert [(c.seat, c.card) for c in r.cards] == [(e.seat, e.card) for e in drawn]
        for card in r.cards:
            assert card.luck[card.seat] == pytest.approx(card.value - card.expected, abs=1e-9)
        # a graded draw's value is the expected value of the card it drew
        by_version = {c.version: c for c in r.cards}
        for d in r.decisions:
            chosen = d.actions[d.chosen]
            if type(chosen.action) is Draw:
                assert chosen.value == pytest.approx(by_version[d.version].expected, abs=1e-9)


def test_the_values_are_those_of_the_engines_outcomes() -> None:
    """Rebuilt here by folding the log: a stop's value is the position right after it, a
    draw's the mean over the unseen cards of the better stop after the card."""
    bots = ["basic", "expert", "random"]
    game = play_game(bots, "review/values")
    r = review(game.events)
    checked = 0
    for d in r.decisions:
        if d.phase != "draw":
            continue
        before = _state_at(game.events, d.version)
        for av in d.actions:
            if type(av.action) is Stop:
                after, _ = apply(before, d.seat, av.action)
                assert av.value == pytest.approx(margins(after)[d.seat], abs=1e-9)
            else:
                total = 0.0
                for code, p in chance_outcomes(before):
                    drawn, _ = apply(before, d.seat, Draw(), card=code)
                    if drawn.phase == "draw" and drawn.drawn and drawn.active_seat == d.seat:
                        stops = [a for a in legal_actions(drawn, d.seat) if type(a) is Stop]
                        value = max(margins(apply(drawn, d.seat, a)[0])[d.seat] for a in stops)
                    else:
                        value = margins(drawn)[d.seat]
                    total += float(p) * value
                assert av.value == pytest.approx(total, abs=1e-9)
            checked += 1
    assert checked > 20


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
            values = [a.value for a in d.actions]
            assert len(d.actions) >= 2  # forced moves are not graded
            assert d.actions[d.best].value == max(values)
            assert d.lost == pytest.approx(max(values) - values[d.chosen], abs=1e-12)
            assert d.lost >= 0
            assert d.grade == grade(d.lost)
            assert d.accuracy == move_accuracy(d.lost)
            assert (d.grade == "best") == (d.lost < GRADES[0][0])
        for seat in r.seats:
            mine = [d for d in r.decisions if d.seat == seat.seat]
            assert seat.decisions == len(mine) == sum(seat.grades.values())
            assert seat.lost == pytest.approx(sum(d.lost for d in mine))


def test_grades_and_accuracy_fall_with_the_points_lost() -> None:
    assert move_accuracy(0) == 100
    assert 60 < move_accuracy(1) < 70
    lost = [0, 1e-12, 0.2, 0.5, 1, 1.5, 2, 3, 5, 50]
    accuracies = [move_accuracy(x) for x in lost]
    assert accuracies == sorted(accuracies, reverse=True)
    assert accuracies[-1] == 0
    names = [g for _bound, g in GRADES]
    ranks = [names.index(grade(x)) for x in lost]
    assert ranks == sorted(ranks)
    assert [grade(x) for x in (0, 0.4, 1, 2, 4)] == [
        "best",
        "good",
        "inaccuracy",
        "mistake",
        "blunder",
    ]


def test_a_stronger_bot_is_more_accurate(reviewed) -> None:
    accuracy: dict[str, list[float]] = {}
    for bots, _game, r in reviewed:
        for d in r.decisions:
            accuracy.setdefault(bots[d.seat], []).append(d.accuracy)
    mean = {level: statistics.mean(a) for level, a in accuracy.items()}
    assert mean["random"] < mean["basic"] < mean["expert"]


def test_only_a_finished_game_is_reviewed() -> None:
    game = play_game(["basic", "basic"], "review/unfinished")
    cut = next(i for i, e in enumerate(game.events) if type(e) is CardBought)
    with pytest.raises(ValueError, match="finished"):
        review(game.events[:cut])
    with pytest.raises(ValueError, match="game_started"):
        review(game.events[1:])
    with pytest.raises(ValueError, match="empty"):
        review([])
