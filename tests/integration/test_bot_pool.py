"""Bot steps in the pool of worker processes (`infra.bot_pool`, `service.games.bot_work`), for
real: the pool computes exactly what the engine computes inline; a worker SIGKILLed in the
middle of a step fails that step cleanly (503 bots_busy, nothing saved) and the next step
runs on a new pool; through the HTTP API, a table of five experts refused that way leaves
no game behind, and sent again it is created."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import msgspec
import pytest
from litestar.testing import TestClient

from domain.bots.clock import play
from domain.bots.simulation import play_bots
from domain.game.engine import new_game, to_act
from domain.game.legal import legal_actions
from infra.bot_pool import BotPool
from service.core.errors import ServiceError
from service.core.settings import ArchiveSettings, RuntimeSettings, Settings
from service.entrypoints.api.app import create_app
from service.games.bot_work import BotWork
from service.games.use_cases import encode_events
from tests.servers import ROOT, wait_until
from tests.support.gates import Gate, held
from tests.support.processes import cpu_ticks, parent, running

FIVE_EXPERTS = {"players": [{"name": f"E{i}", "bot": "expert"} for i in range(5)]}


@pytest.fixture(scope="module")
def pool():
    pool = BotPool(1)
    yield pool
    pool.shutdown()


def kill_when_busy(pool: BotPool, stop: threading.Event) -> list[int]:
    """SIGKILL the pool's worker once it spends CPU (a step running); the pids killed."""
    killed: list[int] = []
    deadline = time.monotonic() + 30
    while not stop.is_set() and time.monotonic() < deadline and not killed:
        for pid in pool.pids():
            try:
                before = cpu_ticks(pid)
                time.sleep(0.02)
                if cpu_ticks(pid) > before:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            except (FileNotFoundError, ProcessLookupError):
                pass
        time.sleep(0.005)
    return killed


def test_the_pool_computes_what_the_engine_computes_inline(pool) -> None:
    work = BotWork(pool)
    rng = random.Random(7)

    async def body() -> int:
        steps = 0
        for seed in range(6):
            players = [("human", None), ("b1", "basic"), ("b2", "expert"), ("b3", "random")]
            state, _ = new_game(players, f"pool-{seed}")
            state, _ = play_bots(state)
            while (seat := to_act(state)) is not None:
                action = rng.choice(legal_actions(state, seat))
                inline = play(state, seat, action, 1000.0 + steps / 7)
                pooled = await work.step(True, play, state, seat, action, 1000.0 + steps / 7)
                assert pooled == inline  # the same state and the same events
                # byte for byte as stored: the events' JSON, the state's msgpack
                assert encode_events(pooled[1]) == encode_events(inline[1])
                assert msgspec.msgpack.encode(pooled[0]) == msgspec.msgpack.encode(inline[0])
                state = inline[0]
                steps += 1
        # a table of bots played to its end in one step (the lobby's, from a thread)
        dealt, _ = new_game([(f"E{i}", "expert") for i in range(3)], "pool-bots-only")
        inline = play_bots(dealt)
        pooled = await asyncio.to_thread(work.blocking_step, True, play_bots, dealt)
        assert pooled == inline
        assert encode_events(pooled[1]) == encode_events(inline[1])
        return steps

    assert asyncio.run(body()) > 50


def test_a_rule_refused_in_the_pool_is_raised_as_it_is_inline(pool) -> None:
    from domain.game.errors import RuleError
    from domain.game.model import Bid

    state, _ = new_game([("human", None), ("b", "basic")], "pool-refused")
    state, _ = play_bots(state)
    seat = to_act(state)
    with pytest.raises(RuleError) as inline:
        play(state, seat, Bid(amount=999), 0.0)
    with pytest.raises(RuleError) as pooled:
        asyncio.run(BotWork(pool).run(True, play, state, seat, Bid(amount=999), 0.0))
    assert (pooled.value.code, pooled.value.detail) == (inline.value.code, inline.value.detail)


def expert_games(count: int) -> int:
    """A long step: `count` games of five experts played to their end, one after another."""
    for seed in range(count):
        state, _ = new_game([(f"E{i}", "expert") for i in range(5)], f"pool-long-{seed}")
        play_bots(state)
    return count


def test_a_worker_killed_mid_step_fails_the_step_and_the_next_runs_on_a_new_pool(pool) -> None:
    work = BotWork(pool)
    state, _ = new_game([(f"E{i}", "expert") for i in range(5)], "pool-killed")
    assert asyncio.run(work.run(True, play_bots, state))  # the pool is up
    stop = threading.Event()
    killed: list[int] = []
    killer = threading.Thread(target=lambda: killed.extend(kill_when_busy(pool, stop)))
    killer.start()
    try:
        with pytest.raises(ServiceError) as refused:
            asyncio.run(work.run(True, expert_games, 200))  # seconds of work: killed in it
    finally:
        stop.set()
        killer.join()
    assert killed, "the worker was never seen busy"
    assert refused.value.code == "bots_busy"
    assert work.in_pool == 0
    final, events = asyncio.run(work.run(True, play_bots, state))
    assert final.phase == "finished"
    assert (final, events) == play_bots(state)
    assert killed[0] not in pool.pids()


def test_a_table_refused_when_its_worker_died_leaves_no_game_and_is_created_when_sent_again(
    tmp_path,
) -> None:
    pool = BotPool(1)
    settings = Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3")
    )
    app = create_app(settings)
    app.state.service.bots = BotWork(pool)
    try:
        with TestClient(app) as client:
            assert client.post("/v1/games", json=FIVE_EXPERTS).status_code == 201  # warm
            key = {"Idempotency-Key": "five-experts-killed"}
            # the worker stopped (SIGSTOP), the table sent to it, then the worker killed
            # with the step in its hands: as a worker dying mid-step, without the race
            workers = pool.pids()
            for pid in workers:
                os.kill(pid, signal.SIGSTOP)
            sending = ThreadPoolExecutor(1)
            sent = sending.submit(client.post, "/v1/games", json=FIVE_EXPERTS, headers=key)
            time.sleep(0.3)  # the request is waiting on the stopped worker (it cannot end)
            assert not sent.done()
            for pid in workers:
                os.kill(pid, signal.SIGKILL)
            refused = sent.result(timeout=30)
            sending.shutdown()
            killed = workers
            assert killed, "the worker was never seen busy"
            assert refused.status_code == 503, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
            assert refused.json()["code"] == "bots_busy"
            assert refused.headers["retry-after"] == "1"
            # nothing was saved: the same key creates the game now, and replays it after
            again = client.post("/v1/games", json=FIVE_EXPERTS, headers=key)
            assert again.status_code == 201, again.text
            assert again.headers.get("idempotent-replayed") != "true"
            assert again.json()["status"] == "finished"
            replayed = client.post("/v1/games", json=FIVE_EXPERTS, headers=key)
            assert replayed.headers.get("idempotent-replayed") == "true"
            assert replayed.json()["id"] == again.json()["id"]
    finally:
        pool.shutdown()


SERVING = """
import os, sys, time
sys.path.insert(0, {root!r})
if __name__ == "__main__":
    from infra.bot_pool import BotPool
    pool = BotPool(1)
    print(pool.submit(os.getpid).result(), flush=True)
    time.sleep(120)
"""


def test_the_workers_and_the_fork_server_exit_with_the_serving_process(tmp_path) -> None:
    """A serving process SIGKILLed (an OOM kill, say) leaves no bot worker nor fork server
    behind: each worker watches it and exits; the fork server follows its workers."""
    script = tmp_path / "serving.py"
    script.write_text(SERVING.format(root=str(ROOT)))
    serving = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, cwd=tmp_path, start_new_session=True
    )
    try:
        assert serving.stdout is not None
        worker = int(serving.stdout.readline())
        fork_server = parent(worker)
        assert fork_server is not None
        assert running(worker)
        assert running(fork_server)
    finally:
        serving.kill()
        serving.wait()
        if serving.stdout is not None:
            serving.stdout.close()
    wait_until(
        lambda: not running(worker) and not running(fork_server),
        10,
        "the bot worker and the fork server exiting",
    )


def test_steps_past_the_idle_workers_wait_their_turn_and_each_gets_its_own_result(pool) -> None:
    """Eight steps at once on one worker, from the event loop and from a thread (the
    lobby's `blocking`): each answered with what the engine computes inline."""
    work = BotWork(pool)
    states = [
        play_bots(new_game([("h", None), ("b", "expert")], f"queued-{i}")[0])[0] for i in range(8)
    ]
    seats = [to_act(s) for s in states]
    actions = [legal_actions(s, seat)[0] for s, seat in zip(states, seats, strict=True)]
    inline = [play(s, seat, a, 5.0) for s, seat, a in zip(states, seats, actions, strict=True)]

    async def body() -> list:
        from_thread = asyncio.to_thread(work.blocking, play, states[0], seats[0], actions[0], 5.0)
        looped = [
            work.run(True, play, s, seat, a, 5.0)
            for s, seat, a in zip(states[1:], seats[1:], actions[1:], strict=True)
        ]
        return await asyncio.gather(from_thread, *looped)

    assert asyncio.run(body()) == inline
    assert work.in_pool == 0


def test_a_step_given_up_mid_way_takes_its_worker_and_the_next_step_gets_a_new_one(pool) -> None:
    work = BotWork(pool)
    state, _ = new_game([(f"E{i}", "expert") for i in range(5)], "pool-cancelled")
    assert asyncio.run(work.run(True, play_bots, state))  # the pool is up
    before = pool.pids()

    async def give_up() -> None:
        step = asyncio.ensure_future(work.run(True, expert_games, 200))
        await asyncio.sleep(0.3)  # the worker is in the step
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step

    asyncio.run(give_up())
    assert work.in_pool == 0
    wait_until(lambda: not running(before[0]), 10, "the given-up worker killed")
    assert asyncio.run(work.run(True, play_bots, state)) == play_bots(state)
    assert pool.pids()
    assert pool.pids() != before


def test_the_next_step_waits_in_the_workers_pipe_and_the_one_after_is_sent_on_a_reply(
    pool, monkeypatch
) -> None:
    """With one worker and a loop kept busy (a task that yields at every turn of the loop),
    the second step goes down the worker's pipe at once, behind the first (`depth` 2): the
    worker starts it as soon as it is done with the first, whatever the loop is doing; the
    third goes in the turn of the loop in which the first one's reply is read."""
    from infra import bot_worker

    turns = 0
    read_at: list[int] = []
    sent_at: list[int] = []
    read, send = bot_worker.Reader.read, bot_worker.Worker.send

    def reading(self):
        message = read(self)
        if message is not None:
            read_at.append(turns)
        return message

    def sending(self, request):
        sent_at.append(turns)
        return send(self, request)

    monkeypatch.setattr(bot_worker.Reader, "read", reading)
    monkeypatch.setattr(bot_worker.Worker, "send", sending)
    states = [
        new_game([(f"E{i}", "expert") for i in range(3)], f"hand-off-{i}")[0] for i in range(3)
    ]

    async def body() -> list:
        nonlocal turns
        stop = False

        async def busy() -> None:
            nonlocal turns
            while not stop:
                turns += 1
                await asyncio.sleep(0)

        hog = asyncio.ensure_future(busy())
        try:
            return await asyncio.gather(*(pool.call(play_bots, s) for s in states))
        finally:
            stop = True
            await hog

    assert pool.depth == 2
    assert asyncio.run(body()) == [play_bots(s) for s in states]
    assert len(sent_at) == 3
    assert len(read_at) == 3
    assert turns > 10  # the loop turned while the steps ran
    assert sent_at[0] == sent_at[1] < read_at[0]  # the second waited in the pipe
    assert sent_at[2] == read_at[0]  # the third: sent in the turn the first reply was read


def test_a_step_given_up_in_the_pipe_is_dropped_and_the_others_get_their_replies(pool) -> None:
    """Three steps on one worker: the second, given up while it waits in the worker's pipe
    behind the first, is computed and its reply dropped; the first and third are answered,
    and no worker is killed for it."""
    work = BotWork(pool)
    states = [
        play_bots(new_game([("h", None), ("b", "expert")], f"dropped-{i}")[0])[0] for i in range(3)
    ]
    seats = [to_act(s) for s in states]
    actions = [legal_actions(s, seat)[0] for s, seat in zip(states, seats, strict=True)]
    before = pool.pids()

    async def body() -> tuple:
        steps = [
            asyncio.ensure_future(work.step(True, play, s, seat, a, 5.0))
            for s, seat, a in zip(states, seats, actions, strict=True)
        ]
        await asyncio.sleep(0)  # all three sent or waiting
        steps[1].cancel()
        first = await steps[0]
        with pytest.raises(asyncio.CancelledError):
            await steps[1]
        return first, await steps[2]

    first, third = asyncio.run(body())
    assert first == play(states[0], seats[0], actions[0], 5.0)
    assert third == play(states[2], seats[2], actions[2], 5.0)
    assert pool.pids() == before
    assert work.in_pool == 0


def test_the_steps_behind_a_killed_one_are_computed_by_the_next_worker(pool) -> None:
    """A worker killed while it computes a step fails that step (503 bots_busy); the step
    waiting behind it in its pipe, never started, is sent to the new worker and answered."""
    work = BotWork(pool)
    state, _ = new_game([(f"E{i}", "expert") for i in range(5)], "behind-killed")
    assert asyncio.run(work.step(True, play_bots, state))  # the pool is up
    stop = threading.Event()
    killed: list[int] = []

    async def body() -> tuple:
        long = asyncio.ensure_future(work.run(True, expert_games, 200))
        behind = asyncio.ensure_future(work.step(True, play_bots, state))
        await asyncio.sleep(0)
        killer = threading.Thread(target=lambda: killed.extend(kill_when_busy(pool, stop)))
        killer.start()
        try:
            return await asyncio.gather(long, behind, return_exceptions=True)
        finally:
            stop.set()
            await asyncio.to_thread(killer.join)

    long, behind = asyncio.run(body())
    assert killed, "the worker was never seen busy"
    assert isinstance(long, ServiceError)
    assert long.code == "bots_busy"
    assert behind == play_bots(state)
    assert killed[0] not in pool.pids()
    assert work.in_pool == 0


def test_a_live_bot_step_does_not_wait_behind_reviews_in_the_pool(tmp_path) -> None:
    """Reviews are background work: with the live games' one worker (TEN_BOT_WORKERS=1), a
    review computing (held at a gate) and another waiting behind it, an expert bot's move
    is still computed at once (it waited behind them, the create never came back)."""
    settings = Settings(
        runtime=RuntimeSettings(bot_workers=1),
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'archive.sqlite3'}",
            migrate_on_start=True,
        ),
    )
    app = create_app(settings)
    gates = [Gate(tmp_path, f"review-{i}") for i in range(2)]
    with TestClient(app, timeout=60) as client:
        reviews = app.state.reviews
        portal = client.blocking_portal
        waiting = [portal.start_task_soon(reviews.bots.run, True, held, g.path) for g in gates]
        try:
            wait_until(lambda: reviews.bots.in_pool == 2, 30, "the reviews in the pool")
            table = {"players": [{"name": "E", "bot": "expert"}, {"name": "Ann"}]}
            asker = ThreadPoolExecutor(1)
            creating = asker.submit(client.post, "/v1/games", json={**table, "starting_seat": 0})
            asker.shutdown(wait=False)
            created = creating.result(timeout=60)  # a failure bound: it hung behind them
            assert created.status_code == 201, created.text
            assert created.json()["to_act"] == 1  # the expert moved: it is Ann's turn
            assert not any(w.done() for w in waiting)  # the reviews still wait
        finally:
            for gate in gates:
                gate.open()
            assert [w.result(timeout=30) for w in waiting] == [b"open", b"open"]


def test_a_background_worker_runs_below_a_live_games_worker() -> None:
    """Live games' workers: SCHED_BATCH at nice 19; the background lane's (reviews):
    SCHED_IDLE, the lowest class, so a review takes a fifth of a live worker's share of a
    core both want, and the serving process (nice 0) is above both."""
    live, background = BotPool(1), BotPool(1, background=True)
    try:
        live_pid = live.submit(os.getpid).result(timeout=60)
        background_pid = background.submit(os.getpid).result(timeout=60)
        assert os.sched_getscheduler(live_pid) == os.SCHED_BATCH
        assert os.getpriority(os.PRIO_PROCESS, live_pid) == 19
        assert os.sched_getscheduler(background_pid) == os.SCHED_IDLE
    finally:
        live.shutdown()
        background.shutdown()
