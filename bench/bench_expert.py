"""The `expert` bot's time per decision: `python bench/bench_expert.py [--games N] [--clock cpu]`.

`--bot master` times the `master` bot instead, in the same seats (the other seats as they
are: basic).

Plays seeded games (two players: expert against basic; four players: three experts and
one basic, the heaviest table a server would host), each move's random source from the
seed and version as the service's, and times every real decision of the expert (the
bot's call on the public view, the view's construction aside). Prints, per table and per
phase, the number of decisions and the median, p90, p99 and largest time in
milliseconds. No assertions: a report.

`--clock wall` (the default) times with `time.perf_counter`; `--clock cpu` with
`time.thread_time`, the CPU time of the thread, which other processes on a shared
machine disturb far less (a decision waiting for a core is not counted). The first line
names the `domain` package timed: with `PYTHONPATH=<a snapshot of another tree>` the same
script times that tree's bot (bench/README.md, "Expert bot, issue 23").

`--runs N` plays the same games in N fresh processes (the same decisions from the same
cold caches: the games are seeded and the bots have no clock) and keeps each decision's
least time over the runs: the noise of a shared machine (other sessions' load stretches
some decisions of a run) mostly falls out, the work timed stays the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable

import domain
from domain.bots.basic import basic_bot, bot_rng
from domain.bots.expert import expert_bot
from domain.bots.master import master_bot
from domain.game.engine import apply, information_state, new_game, to_act

TABLES = {
    "2 players, expert vs basic": ("expert", "basic"),
    "4 players, 3 experts + basic": ("expert", "expert", "expert", "basic"),
}


CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}
TIMED = {"expert": expert_bot, "master": master_bot}  # --bot: the bot in the expert's seats


def percentile(sorted_ms: list[float], q: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def line(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    return (
        f"  {name:<8} {len(ms):>6} decisions  median {statistics.median(ms):6.2f} ms"
        f"  p90 {percentile(ms, 0.90):6.2f}  p99 {percentile(ms, 0.99):6.2f}"
        f"  max {ms[-1]:6.2f}"
    )


def play(
    lineup: tuple[str, ...],
    seed: str,
    times: dict[str, list[float]],
    clock: Callable[[], float] = time.perf_counter,
    bot: str = "expert",
) -> None:
    """One game; every expert decision's time (ms, by `clock`) appended under its phase."""
    state, _ = new_game([(f"p{i}", None) for i in range(len(lineup))], seed)
    while (seat := to_act(state)) is not None:
        view = information_state(state)
        rng = bot_rng(state.seed, state.version)
        if lineup[seat] == "expert":
            started = clock()
            action = TIMED[bot](view, seat, rng)
            times[view.phase].append((clock() - started) * 1000)
        else:
            action = basic_bot(view, seat, rng)
        state, _ = apply(state, seat, action)


def timed(games: int, clock: str, bot: str = "expert") -> dict[str, dict[str, list[float]]]:
    """Per table, per phase, every decision's time (ms) of the bot timed in play order."""
    out: dict[str, dict[str, list[float]]] = {}
    for table, lineup in TABLES.items():
        times: dict[str, list[float]] = defaultdict(list)
        for i in range(games):
            play(lineup, f"bench-expert/{i}", times, CLOCKS[clock], bot)
        out[table] = dict(times)
    return out


def least_of_runs(
    games: int, clock: str, runs: int, bot: str = "expert"
) -> dict[str, dict[str, list[float]]]:
    """`timed` in `runs` fresh processes, each decision's least time."""
    command = [sys.executable, __file__, "--games", str(games), "--clock", clock, "--json"]
    command += ["--bot", bot]
    results = [
        json.loads(subprocess.run(command, check=True, capture_output=True, env=os.environ).stdout)
        for _ in range(runs)
    ]
    return {
        table: {
            phase: [min(ts) for ts in zip(*(r[table][phase] for r in results), strict=True)]
            for phase in phases
        }
        for table, phases in results[0].items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per table (default 20)")
    parser.add_argument(
        "--clock", choices=CLOCKS, default="wall", help="wall (perf_counter) or cpu (thread_time)"
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="fresh processes; each decision's least time"
    )
    parser.add_argument("--bot", choices=TIMED, default="expert", help="the bot timed")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        json.dump(timed(args.games, args.clock, args.bot), sys.stdout)
        return
    print(f"domain: {domain.__path__[0]}, bot: {args.bot}, clock: {args.clock}, runs: {args.runs}")
    if args.runs > 1:
        tables = least_of_runs(args.games, args.clock, args.runs, args.bot)
    else:
        tables = timed(args.games, args.clock, args.bot)
    for table, times in tables.items():
        print(f"{table.replace('expert', args.bot)} ({args.games} games)")
        print(line("all", [t for phase in times.values() for t in phase]))
        for phase in ("draw", "auction", "buy", "final_buy"):
            if times.get(phase):
                print(line(phase, times[phase]))


if __name__ == "__main__":
    main()
