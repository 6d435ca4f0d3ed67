"""The stand-alone verifier over many games:
`PYTHONPATH=. .venv/bin/python bench/bench_fair_verify.py [games]`.

Deals `games` (default 1,000) games with the engine, every player count 1 to 5, half of
them with seat entropy and a fifth with the starting seat named, plays them to their end
with bots, writes their records (the "ten-game-record" shape, tests/support/fair_records.py)
as one NDJSON file, and runs clients/verifier/ten_verify.py on it in its own process.
Then tampers with each record three ways (a card of the deck swapped, a drawn card swapped
in the log, the seed changed) and an entropy changed on those that have some, and runs it
again. Prints the times and the counts; no assertions: a report for people.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.fair_records import VERIFIER, bot_record

ENTROPY = ["ann", "", "bob's", "🂡", "x" * 64]


def records(games: int) -> list[dict]:
    made = []
    for i in range(games):
        players = 1 + i % 5
        entropy = ENTROPY[:players] if i % 2 else None
        seat = 0 if i % 5 == 4 else None
        made.append(bot_record(players, f"bench-{i}", entropy, starting_seat=seat))
    return made


def tampered(record: dict, how: int) -> dict:
    bad = copy.deepcopy(record)
    if how == 0:
        deck = bad["deck"]
        other = next(i for i, c in enumerate(deck) if c != deck[0])
        deck[0], deck[other] = deck[other], deck[0]
    elif how == 1:
        drawn = [e for e in bad["events"] if e["type"] == "card_drawn"]
        drawn[-1]["card"] = next(e["card"] for e in drawn if e["card"] != drawn[-1]["card"])
    elif how == 2:
        bad["fairness"]["seed"] += "0"
    else:
        for fair in (bad["fairness"], bad["events"][0]["fairness"]):
            fair["entropy"][0] += "!"
    return bad


def verify(path: Path, *flags: str) -> tuple[float, dict]:
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-I", str(VERIFIER), "--json", *flags, str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return time.perf_counter() - start, json.loads(run.stdout)


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    start = time.perf_counter()
    made = records(games)
    dealt = time.perf_counter() - start
    draws = sum(sum(e["type"] == "card_drawn" for e in r["events"]) for r in made)
    with tempfile.TemporaryDirectory() as scratch:
        good = Path(scratch) / "good.ndjson"
        good.write_text("".join(json.dumps(r) + "\n" for r in made))
        took, report = verify(good)
        print(f"{games} games dealt and played by bots in {dealt:.1f} s; {draws} draws")
        print(
            f"verified {report['verified']} of {report['records']} records "
            f"({good.stat().st_size / 1e6:.1f} MB) in {took:.2f} s"
        )
        bad = [
            tampered(r, how)
            for r in made
            for how in range(4)
            if how < 3 or any(r["fairness"]["entropy"])
        ]
        path = Path(scratch) / "bad.ndjson"
        path.write_text("".join(json.dumps(r) + "\n" for r in bad))
        took, report = verify(path)
        print(
            f"refused {report['refused']} of {report['records']} tampered records in {took:.2f} s"
        )


if __name__ == "__main__":
    main()
