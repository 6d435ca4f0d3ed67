"""The erasure ledger's reconciliation (`PlayerData.reconcile`) over an archive of N games:
the full pass (what every run cost before the stores kept applied marks: every player id of
the archive read and tested against the ledger), the steady state (both marks are the
ledger's: nothing scanned), and the pass after a restore of the archive from a backup
older than an erasure (the archive alone scanned, the player found there erased again).
In process: the embedded live store (empty), the SQL archive.

    PYTHONPATH=. .venv/bin/python bench/bench_reconcile.py                  # SQLite, 10,000 games
    PYTHONPATH=. .venv/bin/python bench/bench_reconcile.py --database-url postgresql://postgres@127.0.0.1:5432/test
    PYTHONPATH=. .venv/bin/python bench/bench_reconcile.py --games 1000     # smaller
    PYTHONPATH=. .venv/bin/python bench/bench_reconcile.py --games 100000 --no-events  # faster to fill

The games are bench_player_data's (a few played by the engine, repeated under new ids,
written by `executemany`), each between two of `--players` players (default: a player
every two games), with 100 erasures in the ledger, of players the archive does not hold.
`--no-events`: the games without their logs (what a reconciliation reads of the archive is
its seats and ratings), an archive of 100,000 games filled in a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import time

from bench_player_data import insert_games  # the sibling module

from infra.archive import SqlArchive, make_engine, upgrade_async
from infra.archive.privacy import SqlPlayerData
from infra.memory_matchmaking import MemoryTicketStore
from infra.memory_privacy import MemoryLiveData
from infra.memory_push import MemoryPlayerStore
from infra.memory_store import MemoryGameStore
from infra.memory_tournaments import MemoryTournamentStore
from infra.queues import MemoryQueue
from service.core.unit_of_work import Retry
from service.privacy.ports import Erasure
from service.privacy.pseudonyms import ledger_digest, ledger_mark
from service.privacy.use_cases import PlayerData
from tests.support.player_data import OTHER, SUBJECT, Counting
from tests.support.scratch import scratch_database

KEY = b"bench-ledger-key"
LEDGER = 100  # erasures in the ledger


def player(n: int, players: int) -> str:
    return f"player-{n % players:07d}"


def player_data(url: str) -> PlayerData:
    store = MemoryGameStore()
    tickets, tournaments, players = MemoryTicketStore(), MemoryTournamentStore(), MemoryPlayerStore()  # fmt: skip
    queue = functools.cache(MemoryQueue)
    live = MemoryLiveData(store, tickets, tournaments, players, queue)
    archive = SqlArchive(make_engine(url))
    archived = Counting(SqlPlayerData(archive), "player_ids_page")
    return PlayerData(store, Counting(live, "player_ids"), archive, archived, tournaments,
                      players, tickets, key=KEY, retry=Retry(3),
                      clock=lambda: time.time() + 3600)  # every erasure settled  # fmt: skip


async def timed(data: PlayerData, what: str) -> None:
    before = data.live.calls["player_ids"], data.archived.calls["player_ids_page"]
    started = time.perf_counter()
    found = await data.reconcile()
    took = time.perf_counter() - started
    live, pages = (data.live.calls["player_ids"] - before[0],
                   data.archived.calls["player_ids_page"] - before[1])  # fmt: skip
    print(f"{what}: {took * 1000:,.1f} ms; live store scanned {live}x, archive pages of ids "
          f"read {pages}; {found} erased player(s) found again")  # fmt: skip


async def measure(url: str, players: int) -> None:
    data = player_data(url)
    old = [Erasure(digest=ledger_digest(KEY, f"gone-{n}"), pseudonym=f"erased-{n:032x}",
                   at=time.time() - 86400) for n in range(LEDGER)]  # fmt: skip
    for side in (data.live, data.archived):
        await side.record_erasures(old)
    await timed(data, "full pass (each run before the marks)")
    for n in (1, 2, 3):
        await timed(data, f"steady state, run {n}")
    # the archive restored from a backup taken before a player of it was erased: the live
    # store holds the erasure (and its mark says so), the archive neither
    restored = player(7, players)
    erasure = Erasure(digest=ledger_digest(KEY, restored), pseudonym="erased-" + "7" * 32,
                      at=time.time() - 7200)  # fmt: skip
    await data.live.record_erasures([erasure])
    digests = [e.digest for e in (*old, erasure)]
    assert await data.live.swap_applied(await data.live.applied(), ledger_mark(digests))
    await timed(data, "after a restore of the archive")
    await timed(data, "steady state again")
    await data.archive.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=None, help="default: games / 2")
    parser.add_argument("--no-events", action="store_true", help="the games without their logs")
    parser.add_argument("--database-url", default="sqlite+aiosqlite:///bench.sqlite3",
                        help="the server a throwaway database is made on")  # fmt: skip
    args = parser.parse_args()
    players = args.players or max(2, args.games // 2)
    runner = asyncio.Runner()
    context = scratch_database(args.database_url, prefix="ten_bench")
    url = runner.run(context.__aenter__())
    try:
        runner.run(upgrade_async(url))

        def seated(i: int) -> dict[str, str]:  # game i: players 2i and 2i + 1
            return {SUBJECT: player(2 * i, players), OTHER: player(2 * i + 1, players)}

        inserted = runner.run(insert_games(url, args.games, seated=seated, logs=not args.no_events))
        print(f"inserted {args.games:,} archived games of {min(players, 2 * args.games):,} "
              f"players in {inserted:.1f} s{' (no logs)' if args.no_events else ''}; "
              f"{LEDGER} erasures in the ledger")  # fmt: skip
        runner.run(measure(url, players))
    finally:
        runner.run(context.__aexit__(None, None, None))
        runner.close()


if __name__ == "__main__":
    main()
