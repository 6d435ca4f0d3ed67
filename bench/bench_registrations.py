"""Players registering at once for one tournament, through the one write path
(`service.core.unit_of_work`), on the embedded store and on Redis. Prints figures, asserts
nothing.

    .venv/bin/python bench/bench_registrations.py [--redis redis://127.0.0.1:6379/15]
                                                  [--players 60] [--places 64] [--runs 20]
                                                  [--tree PATH]

`--tree`: the checkout whose code is measured (default: this one), e.g. a `git worktree` of
an older commit, to set two trees side by side; a tree before `service.core.unit_of_work` has no
retry rule to count (its lost races are shown as "-").

Each run creates a tournament of `--places` places and sends `--players` registrations at
once (asyncio.gather: on Redis each is a load and a compare-and-set script, so they race).
Shown per store: how many of the runs took every registration, the registrations refused
in all runs, the most lost races one registration survived (of GameSettings.act_retries) and
the wall time of a run (median, max).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import secrets
import statistics
import sys
import time
from pathlib import Path

# the tree measured (`--tree`, read before argparse: its code is imported below)
sys.path.insert(
    0,
    str(
        Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
        if "--tree" in sys.argv
        else Path(__file__).resolve().parents[1]
    ),
)

from infra.memory_store import MemoryGameStore
from infra.memory_tournaments import MemoryTournamentStore
from infra.queues import MemoryQueue
from infra.redis_client import connect
from infra.redis_tournaments import RedisTournamentStore
from service.core.callers import Caller
from service.core.settings import Settings
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.tournaments.records import CreateTournament
from service.tournaments.use_cases import Tournaments

TREE = Path(sys.path[0])

# a tree before the one write loop has no retry rule to hand the use case (an editable
# install would still find the module in this checkout: ask the use case itself)
if "retry" in inspect.signature(Tournaments).parameters:
    from service.core.unit_of_work import Retry
else:
    Retry = None


def counting_retry(tries: int):
    """The service's retry rule, counting the lost races each pause follows (None: none)."""
    if Retry is None:
        return None

    class CountingRetry(Retry):
        most = 0

        def pause(self, lost: int) -> float:
            self.most = max(self.most, lost + 1)
            return super().pause(lost)

    return CountingRetry(tries)


async def one_run(store, players: int, places: int) -> tuple[int, int, float]:
    retry = counting_retry(Settings().games.act_retries)
    lobby = Lobby(GameService(MemoryGameStore(), Settings()))
    options = {} if retry is None else {"retry": retry}
    tournaments = Tournaments(store, MemoryQueue("tournaments"), lobby.create, **options)
    created, _ = await tournaments.create(
        CreateTournament(caller=Caller(kind="platform"), name="Crowd", places=places)
    )
    callers = [Caller(kind="player", player_id=f"p{n}") for n in range(players)]
    start = time.perf_counter()
    answers = await asyncio.gather(
        *(tournaments.register(c, created.id, None) for c in callers), return_exceptions=True
    )
    took = time.perf_counter() - start
    refused = sum(isinstance(a, BaseException) for a in answers)
    return refused, None if retry is None else retry.most, took


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--players", type=int, default=60)
    parser.add_argument("--places", type=int, default=64)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tree", default=str(TREE))
    args = parser.parse_args()
    client = connect(args.redis)
    prefix = f"ten-bench-{secrets.token_hex(6)}"
    try:
        for kind in ("embedded", "redis"):
            results = []
            for _ in range(args.runs):
                store = (
                    MemoryTournamentStore()
                    if kind == "embedded"
                    else RedisTournamentStore(client, prefix=prefix)
                )
                results.append(await one_run(store, args.players, args.places))
            whole = sum(refused == 0 for refused, _, _ in results)
            refused = sum(r for r, _, _ in results)
            counted = [m for _, m, _ in results if m is not None]
            most = max(counted) if counted else "-"
            times = [t * 1000 for _, _, t in results]
            print(
                f"{kind:9} {TREE.name}: {args.players} players, {args.places} places, {args.runs} runs: "
                f"all in {whole}/{args.runs}, refused {refused}, most lost races "
                f"{most}/{Settings().games.act_retries}, run {statistics.median(times):.0f} ms "
                f"median, {max(times):.0f} ms max"
            )
    finally:
        keys = await client.keys(f"{prefix}:*")
        if keys:
            await client.delete(*keys)
        await client.aclose()


if __name__ == "__main__":
    asyncio.run(main())
