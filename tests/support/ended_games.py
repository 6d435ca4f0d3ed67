"""Ended games as the service would archive them, with what the archive is expected to make
of them (tests/unit/service/history/test_archiving.py, tests/integration/test_archive.py, test_ratings.py):
a seeded dataset of finished bot games with verified or unverified player ids, games
aborted mid-play, and clocked ones (timeouts, seats taken over, resigned, abandoned)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

import msgspec

from domain.bots.basic import BOTS, bot_rng
from domain.bots.clock import play, start_clock, time_out
from domain.bots.simulation import SimulatedGame, play_bots, play_game
from domain.game.engine import information_state, new_game, to_act
from domain.game.model import (
    DeadlineClock,
    Event,
    GameState,
    Reclaim,
    Resign,
    SeatTakenOver,
)
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.games.use_cases import encode_events
from service.history.ratings import RatedSeat

PLAYERS = ("ann", "bob", "cy", "dee", "eve", "Zed")  # "Zed" < "ann": ids compare byte-wise


BASE = datetime(2025, 3, 1, tzinfo=UTC)


GAMES = 60


@dataclass(frozen=True)
class Played:
    """A simulated game as the service would archive it, with what the test expects."""

    sim: SimulatedGame
    record: GameRecord
    stored: list[StoredEvent]
    player_ids: tuple[str | None, ...]
    reasons: tuple[str, ...]  # why it is unranked, as the rule says (primary first)
    # the seats whose result does not count even in a ranked game (taken over, not resigned)
    excluded: frozenset[int] = frozenset()

    @property
    def ranked(self) -> bool:
        return not self.reasons

    @property
    def id(self) -> str:
        return self.record.id

    def seat_ranking(self) -> list[tuple[bool, str | None]]:
        """Per seat: whether its result counts, and its own reason not to."""
        return [
            (
                self.ranked and seat not in self.excluded,
                "taken_over" if seat in self.excluded else None,
            )
            for seat in range(len(self.player_ids))
        ]

    @property
    def finished_at(self) -> datetime:
        return datetime.fromtimestamp(self.record.updated_at, UTC)


def make_game(i: int, rng: random.Random, finished_at: datetime) -> Played:
    n = 1 + i % 5
    bots = [rng.choice(("random", "basic")) for _ in range(n)]
    sim = play_game(bots, f"archive/{i}")
    assert sim.state.phase == "finished"
    pool = list(PLAYERS)
    rng.shuffle(pool)
    player_ids = tuple(pool[seat] if rng.random() < 0.75 else None for seat in range(n))
    ts = finished_at.timestamp()
    vouched = i % 2 == 0  # the seats with a player id are verified humans (bots decided)
    state = sim.state
    if vouched:
        humans = tuple(
            msgspec.structs.replace(pl, bot=None) if player_ids[pl.seat] else pl
            for pl in state.players
        )
        state = msgspec.structs.replace(state, players=humans)
    custom_deck = i % 10 == 4
    record = GameRecord(
        id=f"{rng.getrandbits(80):020x}",
        state=state,
        token_hashes=(None,) * n,
        created_at=ts - 600 - i,
        updated_at=ts,
        player_ids=player_ids,
        verified=tuple(pid is not None for pid in player_ids) if vouched else (),
        custom_deck=custom_deck,
    )
    # the rule: every human verified (here: humans are vouched seats), two distinct humans
    humans_with_ids = sum(1 for pid in player_ids if pid is not None) if vouched else 0
    reasons = ("custom_deck",) * custom_deck + ("too_few_humans",) * (humans_with_ids < 2)
    return Played(
        sim=sim,
        record=record,
        stored=encode_events(sim.events),
        player_ids=player_ids,
        reasons=reasons,
    )


@cache
def dataset() -> tuple[Played, ...]:
    """60 games of 1 to 5 seats; three games share each finish time (id breaks the tie)."""
    rng = random.Random(20250301)
    return tuple(make_game(i, rng, BASE + timedelta(hours=i // 3)) for i in range(GAMES))


def aborted_game(i: int, after_actions: int = 25) -> Played:
    """A 3-seat game stopped by the host mid-play: the state and log after `after_actions`
    actions; two verified humans (it would have been ranked)."""
    seen: list[GameState] = []
    sim = play_game(["basic"] * 3, f"aborted/{i}", on_action=lambda *a: seen.append(a[3]))
    state = seen[after_actions - 1]
    assert state.phase != "finished"
    humans = tuple(
        msgspec.structs.replace(pl, bot=None) if pl.seat < 2 else pl for pl in state.players
    )
    state = msgspec.structs.replace(state, players=humans)
    ts = (BASE + timedelta(days=2, minutes=i)).timestamp()
    player_ids = ("ann", "bob", None)
    record = GameRecord(
        id=f"{0xABC000 + i:020x}",
        state=state,
        token_hashes=(None,) * 3,
        created_at=ts - 60,
        updated_at=ts,
        player_ids=player_ids,
        verified=(True, True, False),
        aborted=True,
    )
    stored = encode_events(sim.events[: state.last_seq])
    return Played(
        sim=sim, record=record, stored=stored, player_ids=player_ids, reasons=("aborted",)
    )


@dataclass(frozen=True)
class Scenario:
    """A game with a clock, as real players would have it: each seat a verified human (a
    player id) or a `basic` bot; humans play like the basic bot, but the `silent` ones let
    their deadline pass (the clock's bot moves for them, then takes the seat over after two
    timeouts in a row); `reclaim` take their seat back once taken over and play on; a seat
    of `resign` resigns at that version; `stop_at`: nobody acts from that version on, so
    the service ends it as abandoned."""

    name: str
    seats: tuple[str | None, ...]
    silent: tuple[int, ...] = ()
    reclaim: tuple[int, ...] = ()
    resign: tuple[tuple[int, int], ...] = ()
    stop_at: int | None = None
    verified: bool = True


SCENARIOS = (
    Scenario("timeout", ("ann", "bob", "cy"), silent=(1,)),
    Scenario("the only other human left", ("ann", None, "bob"), silent=(2,)),
    Scenario("resign", ("ann", "bob", "cy", "dee"), resign=((2, 15),)),
    Scenario("timeout then resign", ("ann", "bob"), silent=(1,), resign=((1, 30),)),
    Scenario("reclaim", ("ann", "bob", "cy"), silent=(0,), reclaim=(0,)),
    Scenario("everyone timed out", ("ann", "bob"), silent=(0, 1)),
    Scenario("abandoned", ("ann", "bob", "cy"), silent=(1,), stop_at=20),
    Scenario("unverified", ("ann", "bob"), silent=(1,), verified=False),
)


RENAMED = ({}, {"ann": "eve", "bob": "Zed", "cy": "ann", "dee": "bob"})  # a second cast


def play_clocked(scenario: Scenario, seed: str, now: float) -> tuple[GameState, list[Event], float]:
    """The game of `scenario` played through `domain.bots.clock` as the service plays it (one
    decision every 30 s; a silent seat's deadline passes): its last state, whole log and
    the time it ended."""
    seats = [(f"P{seat}", None if pid else "basic") for seat, pid in enumerate(scenario.seats)]
    state, events = new_game(seats, seed)
    state, more = play_bots(state)
    events += more
    state = start_clock(state, DeadlineClock(hours=1, takeover_after=2), now)
    resign, back = dict(scenario.resign), set()
    while (seat := to_act(state)) is not None:
        if scenario.stop_at is not None and state.version >= scenario.stop_at:
            break
        now += 30
        leaving = next((s for s, at in resign.items() if at <= state.version), None)
        taking_back = [s for s in scenario.reclaim if s not in back and state.players[s].stand_in]
        if leaving is not None:
            del resign[leaving]
            state, more = play(state, leaving, Resign(), now)
        elif taking_back:
            back.add(taking_back[0])
            state, more = play(state, taking_back[0], Reclaim(), now)
        elif seat in scenario.silent and seat not in back:
            assert state.clock is not None
            assert state.clock.deadline is not None
            now = state.clock.deadline
            state, more = time_out(state, now)
        else:
            action = BOTS["basic"](
                information_state(state), seat, bot_rng(state.seed, state.version)
            )
            state, more = play(state, seat, action, now)
        events += more
    return state, events, now


def clocked_game(i: int, scenario: Scenario, cast: dict[str, str]) -> Played:
    """A game of `scenario` as the service archives it, and what the test expects: the
    seats taken over (a `seat_taken_over` event for timeouts, none for resigning) do not
    count; the game is ranked when it finished and its humans were verified (two or more
    in every scenario)."""
    start = (BASE + timedelta(days=3, hours=i)).timestamp()
    state, events, end = play_clocked(scenario, f"clocked/{i}", start)
    player_ids = tuple(cast.get(pid, pid) if pid else None for pid in scenario.seats)
    abandoned = scenario.stop_at is not None
    assert (state.phase == "finished") is not abandoned
    record = GameRecord(
        id=f"{0xC10C000 + i:020x}",
        state=state,
        token_hashes=(None,) * len(player_ids),
        created_at=start,
        updated_at=end,
        player_ids=player_ids,
        verified=tuple(pid is not None for pid in player_ids) if scenario.verified else (),
        abandoned=abandoned,
    )
    taken = {e.seat for e in events if isinstance(e, SeatTakenOver) and e.reason == "timeouts"}
    resigned = {e.seat for e in events if isinstance(e, SeatTakenOver) and e.reason == "resigned"}
    reasons = ("abandoned",) * abandoned + ("unverified_identity",) * (not scenario.verified)
    return Played(
        sim=SimulatedGame(state=state, events=events, actions=state.version),
        record=record,
        stored=encode_events(events),
        player_ids=player_ids,
        reasons=reasons,
        excluded=frozenset(taken - resigned),
    )


@cache
def clocked() -> tuple[Played, ...]:
    """Every scenario with two casts (and two deals): 16 games."""
    return tuple(
        clocked_game(i, scenario, cast)
        for i, (cast, scenario) in enumerate(
            (cast, scenario) for cast in RENAMED for scenario in SCENARIOS
        )
    )


def scenario_games(name: str) -> list[Played]:
    index = [s.name for s in SCENARIOS].index(name)
    return [clocked()[index + k * len(SCENARIOS)] for k in range(len(RENAMED))]


def rated_seats(p: Played) -> list[RatedSeat]:
    """The rule restated: in a ranked game, the seats that count (not taken over) played by
    a human with a player id, placed by rank; two or more, else the game is not rated."""
    if not p.ranked:
        return []
    state = p.record.state
    assert state is not None
    assert state.results is not None
    table = [
        RatedSeat(player_id=pid, rank=state.results[seat].rank)
        for seat, pid in enumerate(p.player_ids)
        if pid is not None and state.players[seat].bot is None and seat not in p.excluded
    ]
    return table if len(table) >= 2 else []
