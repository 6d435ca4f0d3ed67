"""A busy bot pool is a wait of the tournament director, never a failure: its job is refused
(`bots_busy`) many more times than its worker's `max_failures` while another step holds the
pool's one place, is never set aside, and its round is dealt once the place is free. On the
use cases and memory adapters, with the real `service.jobs.worker.Worker` on a fake clock and a
pool of threads whose occupant waits for an event (no timing)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

from infra.memory_store import MemoryGameStore
from infra.memory_tournaments import MemoryTournamentStore
from infra.queues import MemoryQueue
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.settings import Settings
from service.games.bot_work import BotWork
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.reactions.relay import GAME_ENDED, Relay
from service.tournaments.director import TournamentReaction
from service.tournaments.records import CreateTournament, game_id
from service.tournaments.use_cases import Tournaments

PLATFORM = Caller(kind="platform")
MAX_FAILURES = 3


def test_a_tournament_waits_out_a_full_bot_pool_and_deals_its_round_once_it_frees() -> None:
    async def body() -> None:
        now = [1_800_000_000.0]
        clock = lambda: now[0]  # noqa: E731
        counter = itertools.count(1)
        hexes = lambda n: f"{next(counter):0{2 * n}x}"  # noqa: E731
        store = MemoryGameStore(clock=clock)
        queue = MemoryQueue("tournaments")
        made: list[Tournaments] = []
        reaction = TournamentReaction(lambda record: made[0].director.record_result(record))  # noqa: PLW0108 - made below
        relay = Relay(store, MemoryQueue("relay"), {GAME_ENDED: [reaction]}, clock=clock)
        executor = ThreadPoolExecutor(2)
        bots = BotWork(executor, limit=1)  # one step in the pool at once
        games = GameService(
            store, Settings(), relay=relay, clock=clock, random_hex=hexes, bots=bots
        )
        lobby, refused = Lobby(games), []

        async def create(command):  # the lobby's create, its refusals counted
            try:
                return await lobby.create(command)
            except ServiceError as error:
                refused.append(error.code)
                raise

        tournaments = Tournaments(
            MemoryTournamentStore(), queue, create, clock=clock, random_hex=hexes
        )
        made.append(tournaments)
        worker = tournaments.director.worker(clock=clock, max_failures=MAX_FAILURES)
        options = {"name": "Bots", "table_size": 4, "places": 8, "rounds": 1}
        record, _ = await tournaments.create(
            CreateTournament(caller=PLATFORM, bot_level="random", **options)
        )
        gate = threading.Event()
        occupant = asyncio.create_task(bots.run(True, gate.wait))  # holds the one place
        while bots.in_pool == 0:
            await asyncio.sleep(0)
        try:
            await tournaments.start(PLATFORM, record.id)
            for _ in range(4 * MAX_FAILURES):
                with contextlib.suppress(ServiceError):  # the worker held back
                    await worker.run_once()
                now[0] += 60.0  # past any wait
            assert refused == ["bots_busy"] * 4 * MAX_FAILURES
            assert await queue.quarantined(10) == []
            waiting = await tournaments.get(record.id)
            assert waiting.status == "running"
            assert await store.load(game_id(record.id, 1, 1)) is None  # not dealt yet
        finally:
            gate.set()
            await occupant
        for _ in range(20):  # the pool is free: the round is dealt and played
            with contextlib.suppress(ServiceError):
                await worker.run_once()
            now[0] += 60.0
            if (await tournaments.get(record.id)).status == "finished":
                break
        done = await tournaments.get(record.id)
        assert done.status == "finished"
        assert [r.round for r in done.results] == [1, 1]
        assert await queue.quarantined(10) == []
        executor.shutdown()

    asyncio.run(body())
