"""How many due deadlines one replica's poller handles per second, on Redis and on the
embedded store. Prints figures, asserts nothing.

    .venv/bin/python bench/bench_deadlines.py [--redis redis://127.0.0.1:6379/13]
                                              [--games 2000] [--seconds 10]

`--games` two-seat games, both seats human and silent, with a bank clock of 0.1 s, no
increment and `takeover_after` 100: once a seat's bank is spent every deadline it gets is
due at once, so every game stays due and each poll finds a full batch. The poller
(`service.reactions.deadlines.DeadlinePoller`, as a replica runs it: batches of 100, 32 games fired at
once) runs for `--seconds`; each fire is what production does: the game read, the timeout
applied (the `basic` bot's move for the seat), the game saved with its version compared, the
due index written and the claim settled (on Redis: the claim, the read, the save, the due
write and the settle, five round trips per timeout, 32 in flight). Shown: timeouts applied
per second. The Redis database given is flushed first.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.game.model import BankClock
from service.core.settings import Settings
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.reactions.deadlines import DeadlinePoller

CLOCK = BankClock(initial_seconds=0.1, increment_seconds=0, takeover_after=100)


async def measure(store, games: int, seconds: float) -> tuple[float, int]:
    service = GameService(store, Settings())
    lobby = Lobby(service)
    await store.open()
    for _ in range(games):
        await lobby.deal([("a", None), ("b", None)], clock=CLOCK)
    await asyncio.sleep(0.2)  # every first deadline passes
    poller = DeadlinePoller(store, service.fire_due, poll=0.01, lease=15)
    fired = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        fired += await poller.run_once(time.time())
    elapsed = time.perf_counter() - start
    await store.close()
    return fired / elapsed, fired


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()

    import redis.asyncio as aioredis

    from infra.memory_store import MemoryGameStore
    from infra.redis_store import RedisGameStore

    client = aioredis.Redis.from_url(args.redis)
    await client.flushdb()
    await client.aclose()
    for name, store in (
        ("redis", RedisGameStore(args.redis)),
        ("embedded", MemoryGameStore()),
    ):
        rate, fired = await measure(store, args.games, args.seconds)
        print(
            f"{name:9} {args.games} games always due: {rate:8.0f} timeouts/s "
            f"({fired} in {args.seconds:g} s, one poller, one process)"
        )


if __name__ == "__main__":
    import uvloop

    uvloop.run(main())
