"""The metrics' reaction to every save (`infra.observability.metrics.GameMetrics`, a local
reaction of the relay) on the use cases with in-memory adapters and a fake clock: each
action a seat sent and the service accepted is counted once by its type (not the bots'
moves after it, nor a timeout's move, nor an Idempotency-Key's replay), and so are the
games created and finished; the counters are the app's own registry, no process-wide one."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter

from msgspec.structs import replace

from domain.bots.basic import BOTS, bot_rng
from domain.game.engine import information_state, to_act
from domain.game.model import BankClock, Draw, Reclaim, Resign
from infra.memory_store import MemoryGameStore
from infra.observability.metrics import GameMetrics, Metrics
from infra.queues import MemoryQueue
from service.core.callers import Caller
from service.core.settings import Settings
from service.games.commands import Act
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.reactions.relay import Relay, saved_change
from tests.support.games import play_to_end, started
from tests.support.reactions import every_kind

T0 = 1_800_000_000.0
ACTION_TYPES = ["draw", "stop", "bid", "pass", "buy", "decline", "resign", "reclaim"]


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    metrics.flush()
    return metrics.registry.get_sample_value(name, labels) or 0.0


def counted(metrics: Metrics) -> dict[str, float]:
    found = {t: sample(metrics, "ten_actions_total", type=t) for t in ACTION_TYPES}
    return {t: n for t, n in found.items() if n}


def test_every_accepted_action_is_counted_once_by_type_and_nothing_else_is():
    async def body() -> None:
        clock, metrics = Clock(), Metrics()
        store = MemoryGameStore(clock=clock)
        relay = Relay(store, MemoryQueue("relay"), every_kind(GameMetrics(metrics)), clock=clock)
        counter = itertools.count(1)
        games = GameService(
            store,
            Settings(),
            relay=relay,
            clock=clock,
            random_hex=lambda n: f"{next(counter):0{2 * n}x}",
        )
        dealt = await Lobby(games).deal(
            [("ann", None), ("bob", None), ("cy", None)],
            starting_seat=0,
            clock=BankClock(initial_seconds=60, takeover_after=1),
        )
        game_id = dealt.record.id
        seats = {seat: Caller(seat_token=token) for seat, token in dealt.tokens}
        assert sample(metrics, "ten_games_created_total") == 1
        sent: Counter[str] = Counter()

        # a replay of the same Idempotency-Key saves nothing: counted once
        for _ in range(2):
            await games.act(
                Act(caller=seats[0], game_id=game_id, action=Draw(), idempotency_key="k-1")
            )
        sent["draw"] += 1
        assert counted(metrics) == dict(sent)
        # a timeout (the bot moves for seat 0 and takes it over): no action of a seat
        clock.now += 61
        assert (await games.fire_due(game_id)).outcome == "timeout"
        assert counted(metrics) == dict(sent)
        await games.act(Act(caller=seats[0], game_id=game_id, action=Reclaim()))
        # its bot plays on: its moves uncounted
        await games.act(Act(caller=seats[2], game_id=game_id, action=Resign()))
        sent.update(["reclaim", "resign"])
        assert counted(metrics) == dict(sent)
        # the humans left play to the end, each move a basic bot's choice
        while (record := await games.get(game_id)).status == "active":
            state = record.state
            seat = to_act(state)
            action = BOTS["basic"](
                information_state(state), seat, bot_rng(state.seed, state.version)
            )
            await games.act(Act(caller=seats[seat], game_id=game_id, action=action))
            sent[type(action).__struct_config__.tag] += 1
        assert record.status == "finished"
        assert set(sent) == set(ACTION_TYPES)  # this game has every kind of action
        assert counted(metrics) == dict(sent)
        assert sample(metrics, "ten_games_finished_total") == 1
        assert sample(metrics, "ten_games_created_total") == 1

    asyncio.run(body())


def test_a_game_is_counted_finished_by_the_save_that_finishes_it_only():
    metrics = Metrics()
    reaction = GameMetrics(metrics)
    record, _ = started()
    before, finished, _ = play_to_end(record)
    reaction.saved(saved_change(before, finished, []))
    reaction.saved(
        saved_change(finished, replace(finished, updated_at=finished.updated_at + 1), [])
    )
    assert sample(metrics, "ten_games_finished_total") == 1
    reaction.saved(saved_change(None, finished, []))  # made and played to its end at once
    assert sample(metrics, "ten_games_finished_total") == 2
    assert sample(metrics, "ten_games_created_total") == 1
    assert counted(metrics) == {}  # no events: no action
    assert Metrics().registry is not metrics.registry  # one registry per app
