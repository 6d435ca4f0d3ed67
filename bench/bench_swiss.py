"""Swiss pairing of the largest tournament allowed, timed (issue 38):
`python bench/bench_swiss.py [--tournaments T] [--sizes 2,3,4,5] [--rounds 12,20] [--health]`.

Pairing alone: for each table size and number of rounds, T tournaments of 64 entrants
(tournament i: hidden strengths from `bench/swiss/{i}`; each table's scores are the
strength plus a seeded draw, so the standings move as in play). Each round is
`domain.tournaments.rules.next_round` (what the director's step computes: the standings, the byes,
the tables, the seats), timed on the wall clock and on this process's CPU; `swiss_tables`
(the grouping alone) timed too. Printed per size and rounds: p50, p99 and max ms a round,
then what the pairing kept: the meetings repeated (over all rounds, and the rounds with
any), the most times one pair met, the most byes an entrant had, the widest seat spread
(an entrant's most held seat less its least held), and how far apart a table sits in the
standings (mean and max of a table's last place less its first).

`--health`: then one service process (`uvicorn service.app:app`, the embedded store)
plays a 64-place Swiss of random bots at tables of 5 over 12 rounds (`--health-rounds`),
created and started with the platform's key, while one client asks `GET /health` back to
back on one kept-alive connection (the server's latency, not the client's connecting); printed:
/health p50/p99/max ms over the idle seconds before the start, and while the tournament
plays until it finishes, with the rounds it paired. Bounded: every wait has a deadline, and
the server is stopped whatever happens. No assertions: a report.

    .venv/bin/python bench/bench_swiss.py
    .venv/bin/python bench/bench_swiss.py --tournaments 2 --health
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.game.rng import SeededRandom
from domain.tournaments import rules as tournament
from domain.tournaments.rules import (
    Entrant,
    Round,
    Settings,
    TableResult,
    meeting_counts,
    next_round,
    seat_counts,
    standings,
)

PLACES = 64
API_KEY = "bench-swiss-key-0123456789"
IDLE = 3.0  # seconds of /health before the tournament starts
FINISH = 900.0  # seconds the tournament may take


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def figures(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5):6.1f}  p99 {percentile(values, 0.99):6.1f}"
        f"  max {max(values):6.1f}"
    )


class Timed:
    """`swiss_tables` wrapped: the wall time of each call."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.inner = tournament.swiss_tables

    def __call__(self, *args):
        start = time.perf_counter()
        try:
            return self.inner(*args)
        finally:
            self.calls.append((time.perf_counter() - start) * 1000)


def play(settings: Settings, index: int, timed: Timed) -> dict:
    """One tournament: per round the wall and CPU ms of `next_round`, and what it paired."""
    field = [Entrant(id=f"e{i:02d}") for i in range(PLACES)]
    rng = SeededRandom(f"bench/swiss/{index}")
    strength = {e.id: rng.randbelow(100) for e in field}
    rounds: list[Round] = []
    results: list[TableResult] = []
    out: dict = {"wall": [], "cpu": [], "repeats": [], "spans": []}
    for _ in range(settings.rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        played = next_round(settings, field, rounds, results)
        out["wall"].append((time.perf_counter() - wall) * 1000)
        out["cpu"].append((time.process_time() - cpu) * 1000)
        order = [s.entrant for s in standings(settings, field, rounds, results)]
        place = {e: i for i, e in enumerate(e for e in order if e not in played.byes)}
        met = meeting_counts(rounds)
        out["repeats"].append(
            sum(
                met[frozenset(p)] for t in played.tables for p in itertools.combinations(t.seats, 2)
            )
        )
        out["spans"].extend(
            max(place[e] for e in t.seats) - min(place[e] for e in t.seats) for t in played.tables
        )
        rounds.append(played)
        for table in played.tables:
            scores = tuple(strength[e] + rng.randbelow(100) for e in table.seats)
            ranks = tuple(1 + sum(o > s for o in scores) for s in scores)
            results.append(
                TableResult(
                    round=played.number,
                    table=table.number,
                    deal=table.deal,
                    seats=table.seats,
                    ranks=ranks,
                    scores=scores,
                )
            )
    counts = seat_counts(rounds)
    size = settings.table_size
    out["met_most"] = max(meeting_counts(rounds).values())
    out["byes_most"] = max(Counter(e for r in rounds for e in r.byes).values(), default=0)
    out["seat_spread"] = max(
        max(counts[e][s] for s in range(size)) - min(counts[e][s] for s in range(size))
        for e in counts
    )
    return out


def pairing(args: argparse.Namespace) -> None:
    print(
        f"{PLACES} entrants, swiss, fresh deals, {args.tournaments} tournaments per size and"
        " rounds; ms a round (wall; CPU; swiss_tables alone, wall)"
    )
    timed = Timed()
    tournament.swiss_tables = timed  # next_round looks it up in the module
    try:
        for size, count in itertools.product(args.sizes, args.rounds):
            settings = Settings(table_size=size, rounds=count, deal_mode="fresh")
            timed.calls.clear()
            runs = [play(settings, i, timed) for i in range(args.tournaments)]
            wall = [v for r in runs for v in r["wall"]]
            cpu = [v for r in runs for v in r["cpu"]]
            repeats = [v for r in runs for v in r["repeats"]]
            spans = [v for r in runs for v in r["spans"]]
            print(f"tables of {size}, {count} rounds ({len(wall)} rounds timed)")
            print(f"  next_round wall   {figures(wall)}")
            print(f"  next_round cpu    {figures(cpu)}")
            print(f"  swiss_tables wall {figures(timed.calls)}")
            print(
                f"  repeated meetings {sum(repeats)} in {sum(1 for v in repeats if v)} of"
                f" {len(repeats)} rounds; a pair met at most {max(r['met_most'] for r in runs)}"
                f" times; byes at most {max(r['byes_most'] for r in runs)} an entrant;"
                f" seat spread at most {max(r['seat_spread'] for r in runs)}"
            )
            print(
                f"  a table's span in the standings: mean {statistics.mean(spans):.1f},"
                f" max {max(spans)} (of {PLACES - PLACES % size} seated)"
            )
    finally:
        tournament.swiss_tables = timed.inner


def probe(base: str, stop: threading.Event, out: list[tuple[float, float]]) -> None:
    """GET /health back to back on one kept-alive connection until `stop`: (when, ms) per
    answer."""
    with httpx.Client(base_url=base, timeout=30) as client:
        while not stop.is_set():
            start = time.perf_counter()
            client.get("/health").raise_for_status()
            out.append((start, (time.perf_counter() - start) * 1000))


def health(args: argparse.Namespace) -> None:
    from tests.servers import ServiceProcess

    env = {"TEN_API_KEYS": API_KEY}
    with tempfile.TemporaryDirectory() as tmp:
        server = ServiceProcess(env, stdout=Path(tmp) / "service.log")
        try:
            health_during(server.base, args.health_rounds)
        finally:
            server.stop()


def health_during(base: str, rounds: int) -> None:
    platform = {"X-API-Key": API_KEY}
    ask = {
        "name": "Swiss bench", "table_size": 5, "places": PLACES, "rounds": rounds,
        "bot_level": "random", "format": "swiss", "deal_mode": "duplicate",
    }  # fmt: skip
    created = httpx.post(f"{base}/v1/tournaments", json=ask, headers=platform, timeout=30)
    created.raise_for_status()
    tid = created.json()["id"]
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    thread = threading.Thread(target=probe, args=(base, stop, samples), daemon=True)
    thread.start()
    try:
        time.sleep(IDLE)  # the idle baseline: /health alone, for IDLE seconds
        started_at = time.perf_counter()
        httpx.post(f"{base}/v1/tournaments/{tid}/start", headers=platform, timeout=30)
        deadline = time.monotonic() + FINISH
        while True:
            shown = httpx.get(f"{base}/v1/tournaments/{tid}", timeout=30).json()
            if shown["status"] in ("finished", "stopped") or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    finally:
        stop.set()
        thread.join(timeout=60)
    ended_at = time.perf_counter()
    idle = [ms for when, ms in samples if when < started_at]
    busy = [ms for when, ms in samples if when >= started_at]
    print(
        f"\n/health (one kept-alive connection), one service process, a {PLACES}-place swiss of"
        f" random bots at tables of 5, {rounds} rounds"
    )
    print(f"  idle ({len(idle)} answers)             {figures(idle)} ms")
    print(f"  while it plays ({len(busy)} answers)   {figures(busy)} ms")
    print(
        f"  it ended {shown['status']} after {shown['rounds_played']} rounds paired,"
        f" {ended_at - started_at:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=4, help="0: /health alone")
    parser.add_argument(
        "--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[2, 3, 4, 5]
    )
    parser.add_argument("--rounds", type=lambda s: [int(x) for x in s.split(",")], default=[12, 20])
    parser.add_argument("--health", action="store_true", help="also /health while one plays")
    parser.add_argument("--health-rounds", type=int, default=12)
    args = parser.parse_args()
    if args.tournaments:
        pairing(args)
    if args.health:
        health(args)


if __name__ == "__main__":
    main()
