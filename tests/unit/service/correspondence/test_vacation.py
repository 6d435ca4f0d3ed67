"""Vacations (service.correspondence.vacation and the use cases): the yearly allowance, a
vacation the allowance ends, and a correspondence deadline that stands still while its
player is away (`GameService.fire_due` on in-memory adapters, a fake clock)."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime

import pytest

from domain.game.model import DeadlineClock
from infra.memory_push import MemoryPlayerStore
from infra.memory_store import MemoryGameStore
from service.core.callers import ANONYMOUS, Caller
from service.core.errors import ServiceError
from service.core.settings import Settings
from service.core.unit_of_work import Retry
from service.correspondence.records import Away
from service.correspondence.use_cases import Correspondence
from service.correspondence.vacation import (
    DAY,
    POSTPONED_AT_LEAST,
    days_left,
    extended_deadline,
    on_vacation,
    spells,
    switched,
)
from service.games.commands import CreateTable, SeatRequest
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby

T0 = datetime(2027, 3, 1, tzinfo=UTC).timestamp()
HOUR = 3600.0


def test_a_vacation_counts_against_this_years_allowance_only():
    last_year = datetime(2026, 12, 30, tzinfo=UTC).timestamp()
    away = (Away(last_year, last_year + 5 * DAY), Away(T0, T0 + 2 * DAY))
    assert days_left(away, 30, T0 + 3 * DAY) == pytest.approx(30 - 2 - 3)  # Jan 1-3 count
    assert not on_vacation(away, 30, T0 + 3 * DAY)


def test_a_vacation_that_would_use_more_than_the_allowance_ends_where_it_runs_out():
    away = (Away(T0 - 10 * DAY, T0 - 7 * DAY), Away(T0))
    assert on_vacation(away, 5, T0 + DAY)
    assert not on_vacation(away, 5, T0 + 2 * DAY + 1)
    assert spells(away, 5, T0 + 9 * DAY)[-1] == (T0, T0 + 2 * DAY)
    assert days_left(away, 5, T0 + 9 * DAY) == 0
    # switched off afterwards: closed where the allowance ended
    assert switched(away, False, 5, T0 + 9 * DAY)[-1] == Away(T0, T0 + 2 * DAY)


def test_a_deadline_moves_by_the_time_its_player_was_away_during_the_wait():
    since, deadline = T0, T0 + 24 * HOUR
    away = (Away(T0 - DAY, T0 + 2 * HOUR), Away(T0 + 10 * HOUR, T0 + 13 * HOUR))
    assert extended_deadline(deadline, since, away, 30, deadline) == deadline + 5 * HOUR
    assert extended_deadline(deadline, since, (), 30, deadline) == deadline
    # still away: at least a while after now, so that the game is not looked at every poll
    on = (Away(deadline - 1.0),)
    assert extended_deadline(deadline, since, on, 30, deadline) == deadline + POSTPONED_AT_LEAST


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _world(clock: Clock) -> tuple[GameService, Lobby, Correspondence]:
    players = MemoryPlayerStore()
    corr = Correspondence(players, Retry(5), vacation_days=30, clock=clock)
    counter = itertools.count(1)
    games = GameService(
        MemoryGameStore(clock=clock),
        Settings(),
        clock=clock,
        random_hex=lambda n: f"{next(counter):0{2 * n}x}",
        away=corr.away,
    )
    return games, Lobby(games), corr


def test_a_players_deadline_stands_still_while_they_are_on_vacation_then_runs_again():
    async def body() -> None:
        clock = Clock()
        games, lobby, corr = _world(clock)
        made = await lobby.create(
            CreateTable(
                caller=ANONYMOUS,
                seats=[
                    SeatRequest(name="Ann", player_id="ann"),
                    SeatRequest(name="Bob", player_id="bob"),
                ],
                starting_seat=0,
                clock=DeadlineClock(hours=1),
            )
        )
        game_id = made.record.id
        deadline = made.record.state.clock.deadline
        assert deadline == T0 + HOUR
        clock.now = T0 + 0.25 * HOUR
        view = await corr.set_vacation(ANONYMOUS, "ann", True)
        assert view.on
        assert view.since == clock.now
        assert view.allowance == 30
        clock.now = T0 + 3 * HOUR  # ann away for 2.75 h: her hour still has 45 min in it
        fired = await games.fire_due(game_id)
        assert fired.outcome == "moved_on"
        kept = await games.get(game_id)
        assert kept.state.clock.deadline == pytest.approx(T0 + 3.75 * HOUR)
        assert kept.due == kept.state.clock.deadline
        clock.now = T0 + 3.5 * HOUR
        assert not (await corr.set_vacation(ANONYMOUS, "ann", False)).on
        clock.now = T0 + 4.0 * HOUR  # back since 3.5 h: the 45 min left end at 4.25 h
        assert (await games.fire_due(game_id)).outcome == "moved_on"
        assert (await games.get(game_id)).state.clock.deadline == pytest.approx(T0 + 4.25 * HOUR)
        clock.now = T0 + 4.25 * HOUR
        assert (await games.fire_due(game_id)).outcome == "timeout"  # her time ran out
        events = await games.events(game_id, 0, 100)
        assert sum(b'"type":"timed_out"' in e.data for e in events) == 1

    asyncio.run(body())


def test_turning_a_vacation_on_with_the_allowance_spent_is_refused_and_changes_nothing():
    async def body() -> None:
        clock = Clock()
        _games, _lobby, corr = _world(clock)
        corr.vacation_days = 1
        await corr.set_vacation(ANONYMOUS, "cy", True)
        clock.now = T0 + 2 * DAY  # the day is spent: the vacation ended after one
        view = await corr.vacation(ANONYMOUS, "cy")
        assert (view.on, view.days_left) == (False, 0)
        before = await corr.players.load_player("cy")
        with pytest.raises(ServiceError) as refused:
            await corr.set_vacation(ANONYMOUS, "cy", True)
        assert refused.value.code == "vacation_allowance_spent"
        assert await corr.players.load_player("cy") == before

    asyncio.run(body())


def test_another_players_vacation_is_refused_once_identities_are_verified():
    async def body() -> None:
        _games, _lobby, corr = _world(Clock())
        corr.identities_open = False
        ann = Caller(kind="player", player_id="ann")
        assert not (await corr.vacation(ann, "ann")).on
        with pytest.raises(ServiceError) as refused:
            await corr.set_vacation(ann, "bob", True)
        assert refused.value.code == "player_id_not_yours"
        assert await corr.players.load_player("bob") is None

    asyncio.run(body())
