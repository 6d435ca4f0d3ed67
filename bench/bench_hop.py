"""The hop to the bot pool: the serving process's CPU per step sent to a worker process
(`service.games.bot_work.BotWork.run`, and `BotWork.step` as the service sends an engine step, over
`infra.bot_pool.bot_pool(1)`), for a step that only
hands back the state it was given (a 4-player game in mid-play), so what is measured is the
hop alone: pickling or msgpack both ways, the pipes, the event loop's wake-up. Also the archive's cost
per finished game on SQLite (`service.history.archiving.archive_game`, process CPU: the aiosqlite
thread's included). Prints figures, asserts nothing.

    .venv/bin/python bench/bench_hop.py [--steps 1000] [--games 50]

Run it in two trees (main's and a change's) one after the other to compare them.
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_archive import simulate
from domain.bots.simulation import play_game
from domain.game.model import GameState
from infra.archive import SqlArchive, make_engine, upgrade_async
from infra.bot_pool import bot_pool
from service.games.bot_work import BotWork
from service.history.archiving import archive_game


def echo(state: GameState) -> tuple[GameState, list]:
    """A step that computes nothing: the state back, no events."""
    return state, []


def mid_game_state() -> GameState:
    seen: list[GameState] = []
    play_game(["basic"] * 4, "hop/2", on_action=lambda state, *_: seen.append(state))
    return seen[len(seen) // 2]


async def hops(steps: int) -> None:

    state = mid_game_state()
    work = BotWork(bot_pool(1))
    await work.warm()
    pickled = len(pickle.dumps(state))
    # `run`: the call and its reply pickled; `step`: an engine step as the service sends it
    for name, hop in (("run", work.run), ("step", work.step)):
        for _ in range(50):
            await hop(True, echo, state)
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(steps):
            await hop(True, echo, state)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(
            f"hop ({name}): {cpu / steps * 1e6:.0f} us of the serving process's CPU per step, "
            f"{wall / steps * 1e6:.0f} us wall ({steps} steps; the state {pickled} B pickled)"
        )


async def archiving(games: int) -> None:

    jobs = simulate(games + 10)
    with tempfile.TemporaryDirectory() as where:
        url = f"sqlite+aiosqlite:///{where}/archive.sqlite3"
        await upgrade_async(url)
        archive = SqlArchive(make_engine(url))
        try:
            for job in jobs[:10]:  # warm
                await archive_game(archive, *job)
            cpu, wall = time.process_time(), time.perf_counter()
            for job in jobs[10:]:
                await archive_game(archive, *job)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            await archive.close()
    events = sum(len(e) for _, e, _ in jobs) / len(jobs)
    print(
        f"archive (SQLite file): {cpu / games * 1e6:.0f} us of CPU per finished game, "
        f"{wall / games * 1e6:.0f} us wall ({games} games, {events:.0f} events each)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--games", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(hops(args.steps))
    asyncio.run(archiving(args.games))


if __name__ == "__main__":
    main()
