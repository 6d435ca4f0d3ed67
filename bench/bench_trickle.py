"""A normal client next to hundreds of slow ones, on the server as `bash scripts/run` starts it.

Run: `.venv/bin/python bench/bench_trickle.py [--seconds 30] [--slow 500]
[--protocol infra.http_protocol:BoundedHttpToolsProtocol]` (prints figures, asserts nothing;
about two minutes). The server is `bash scripts/run` itself (tests/support/launchers.py: the
script from a copy, with its own defaults: the embedded store, one worker, UVICORN_HTTP and
UVICORN_LIMIT_CONCURRENCY=512 as the image); `--protocol httptools` runs it on uvicorn's plain
httptools protocol instead (its own limit, counting connections: how it was before).

Phases, each `--seconds` long (the quiet one a third of it):

- quiet: the normal client alone;
- `--slow` trickling bodies: each slow connection sends a POST's headers and then a byte of
  its body every 2 s (as in the report that found it), and connects again when the server
  closes it (TEN_BODY_TIMEOUT: 408);
- half trickling bodies, half trickling heads (a header line every 2 s, TEN_HEADER_TIMEOUT).

The normal client, in a thread of its own on one kept-alive connection, creates a game and
reads it, over and over; per phase: its requests' statuses (the 503s: goal 0) and latency
p50/p99, and what the slow connections did (connections made, answers the server gave them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.api import README_DECK
from tests.support.launchers import scripts_run

GAME = {"players": [{"name": "Ann"}], "deck": README_DECK, "starting_seat": 0}
BODY_HEAD = (
    b"POST /v1/games HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
    b"Content-Length: 60000\r\n\r\n{"
)
HEAD_START = b"GET /v1/games HTTP/1.1\r\nHost: bench\r\n"
DRIP_EVERY = 2.0


class Slow:
    """`count` slow connections kept up (connecting again when closed), in an event loop of
    a thread of their own."""

    def __init__(self, host: str, port: int, bodies: int, heads: int) -> None:
        self.host, self.port = host, port
        self.kinds = ["body"] * bodies + ["head"] * heads
        self.connections = 0
        self.answers: Counter[str] = Counter()
        self.loop = asyncio.new_event_loop()
        self.stopping = asyncio.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._run(),))

    async def _run(self) -> None:
        tasks = []
        for i, kind in enumerate(self.kinds):
            tasks.append(asyncio.create_task(self._one(kind)))
            if i % 50 == 49:
                await asyncio.sleep(0.05)  # connect in waves, not all in one accept burst
        self.ready.set()
        await self.stopping.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _one(self, kind: str) -> None:
        first, drip = (BODY_HEAD, b" ") if kind == "body" else (HEAD_START, b"X-Slow: 1\r\n")
        while not self.stopping.is_set():  # (3.11's wait_for may swallow a cancel)
            try:
                reader, writer = await asyncio.open_connection(self.host, self.port)
            except OSError:
                self.answers["connect failed"] += 1
                await asyncio.sleep(DRIP_EVERY)
                continue
            self.connections += 1
            try:
                writer.write(first)
                while not self.stopping.is_set():
                    try:
                        data = await asyncio.wait_for(reader.read(4096), DRIP_EVERY)
                    except TimeoutError:
                        writer.write(drip)
                        await writer.drain()
                        continue
                    if not data:
                        break
                    if data.startswith(b"HTTP/1.1 "):
                        self.answers[data[9:12].decode()] += 1
            except OSError:
                pass
            finally:
                writer.close()

    def start(self) -> None:
        self.thread.start()
        self.ready.wait()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join()
        self.loop.close()


def normal_client(base: str, seconds: float) -> tuple[Counter[int], list[float]]:
    statuses: Counter[int] = Counter()
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=base, timeout=30) as http:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            created = http.post("/v1/games", json=GAME)
            latencies.append(time.perf_counter() - started)
            statuses[created.status_code] += 1
            if created.status_code != 201:
                continue
            game = created.json()
            auth = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
            started = time.perf_counter()
            read = http.get(f"/v1/games/{game['id']}", headers=auth)
            latencies.append(time.perf_counter() - started)
            statuses[read.status_code] += 1
    return statuses, latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def phase(name: str, base: str, seconds: float, slow: Slow | None) -> None:
    if slow is not None:
        slow.start()
    try:
        statuses, latencies = normal_client(base, seconds)
    finally:
        if slow is not None:
            slow.stop()
    line = (
        f"{name:<34} requests {sum(statuses.values()):>5}  503: {statuses.get(503, 0):>4}  "
        f"statuses {dict(sorted(statuses.items()))}  "
        f"p50 {percentile(latencies, 0.5) * 1e3:6.1f} ms  p99 {percentile(latencies, 0.99) * 1e3:6.1f} ms"
    )
    if slow is not None:
        line += (
            f"\n{'':<34} slow connections made {slow.connections}, answered {dict(slow.answers)}"
        )
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--protocol", default=None, help="UVICORN_HTTP (default: scripts/run's)")
    args = parser.parse_args()
    env = {"UVICORN_HTTP": args.protocol} if args.protocol else {}
    with tempfile.TemporaryDirectory() as tmp, scripts_run(Path(tmp), env) as (_, base):
        host, port = base.removeprefix("http://").split(":")
        print(
            f"bash scripts/run ({args.protocol or 'its UVICORN_HTTP'}, UVICORN_LIMIT_CONCURRENCY"
            f" and TEN_* defaults), embedded store, 1 worker; {args.seconds:g} s a phase",
            flush=True,
        )
        phase("quiet", base, args.seconds / 3, None)
        n = args.slow
        phase(f"{n} trickling bodies", base, args.seconds, Slow(host, int(port), n, 0))
        half = n // 2
        phase(
            f"{half} bodies + {n - half} heads trickling",
            base,
            args.seconds,
            Slow(host, int(port), half, n - half),
        )
        with contextlib.suppress(httpx.TransportError):
            print("after: GET /health", httpx.get(f"{base}/health", timeout=10).status_code)


if __name__ == "__main__":
    main()
