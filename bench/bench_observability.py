"""What observability costs per request: server CPU with and without metrics, request ids and
the access log, the app driven as ASGI in-process (no sockets, no load generator).

Run: `.venv/bin/python bench/bench_observability.py` (~1 minute; prints figures, asserts
nothing). The embedded store, so no Redis round trip blurs the figures; the same requests go
to apps that differ only in their observability settings, in interleaved rounds (the median
of the rounds is printed; the machine is shared, so repeat it). The access log is written to
/dev/null. With `--multiproc` it runs again with PROMETHEUS_MULTIPROC_DIR set (prometheus_client
then keeps every value in a memory-mapped file, for several workers).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_TMP = tempfile.mkdtemp(prefix="bench-obs-")
os.environ.setdefault("TEN_DATABASE_URL", f"sqlite+aiosqlite:///{_TMP}/archive.sqlite3")

from bench.breakdown_http import Asgi  # noqa: E402 - the same in-process ASGI driver
from infra.memory_store import MemoryGameStore  # noqa: E402 - after the environment is set
from service.core.settings import ObservabilitySettings, Settings  # noqa: E402 - after the environment is set
from service.entrypoints.api.app import create_app  # noqa: E402 - after the environment is set

ROUNDS = 7
PER_ROUND = 1500
GAME_BODY = msgspec.json.encode(
    {"players": [{"name": "a"}, {"name": "b", "bot": "random"}, {"name": "c", "bot": "random"}]}
)


class Player:
    """Plays games on one app: each `step()` is one request (an action, or a game read)."""

    def __init__(self, app) -> None:
        self.client = Asgi(app)
        self.game = None

    async def new_game(self) -> None:
        status, body = await self.client.request("POST", "/v1/games", GAME_BODY)
        assert status == 201, body
        created = msgspec.json.decode(body)
        self.game = created["id"]
        self.auth = [("authorization", f"Bearer {created['seats'][0]['token']}")]
        status, body = await self.client.request("GET", f"/v1/games/{self.game}", headers=self.auth)
        self.legal = msgspec.json.decode(body)["legal_actions"]

    async def act(self) -> None:
        if self.game is None or not self.legal:
            await self.new_game()
        action = msgspec.json.encode(self.legal[0])
        status, body = await self.client.request(
            "POST", f"/v1/games/{self.game}/actions", action, self.auth
        )
        assert status == 200, body
        view = msgspec.json.decode(body)
        self.legal = view["legal_actions"] if view["status"] != "finished" else []

    async def read(self) -> None:
        if self.game is None:
            await self.new_game()
        status, _ = await self.client.request("GET", f"/v1/games/{self.game}", headers=self.auth)
        assert status == 200

    async def health(self) -> None:
        status, _ = await self.client.request("GET", "/health")
        assert status == 200


def app_for(name: str):
    metrics = "metrics" in name
    access = "access" in name
    settings = Settings(
        observability=ObservabilitySettings(metrics=metrics, access_log=access, log_format="json")
    )
    app = create_app(settings, store=MemoryGameStore())
    if name == "bare":  # no request-id wrapper either
        app.asgi_handler = app.asgi_handler.app
    return app


async def measure(names: list[str], kind: str) -> dict[str, float]:
    players = {}
    for name in names:
        app = app_for(name)
        players[name] = Player(app)
    per: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm up
        for _ in range(200):
            await getattr(players[name], kind)()
    for _ in range(ROUNDS):
        for name in names:
            step = getattr(players[name], kind)
            t = time.process_time()
            for _ in range(PER_ROUND):
                await step()
            per[name].append((time.process_time() - t) / PER_ROUND * 1e6)
    return {name: statistics.median(values) for name, values in per.items()}


async def _wrapper_us(app, n: int = 20000) -> float:
    """Best-of-5 CPU us per request through `app` around a do-nothing routed endpoint."""

    async def send(message) -> None:
        pass

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    def scope():
        return {
            "type": "http", "method": "GET", "path": "/v1/games/abc",
            "headers": [(b"host", b"x"), (b"authorization", b"Bearer x"), (b"accept", b"*/*")],
        }  # fmt: skip

    best = []
    for _ in range(6):
        t = time.process_time()
        for _ in range(n):
            await app(scope(), receive, send)
        best.append((time.process_time() - t) / n * 1e6)
    return min(best[1:])


async def _endpoint(scope, receive, send) -> None:
    scope["path_template"] = "/v1/games/{game_id}"
    scope["path_params"] = {"game_id": "abc"}
    await send({"type": "http.response.start", "status": 200, "headers": [(b"a", b"b")]})
    await send({"type": "http.response.body", "body": b"{}"})


async def _store_us(store, game_id: str, n: int = 20000) -> float:
    best = []
    for _ in range(6):
        t = time.process_time()
        for _ in range(n):
            await store.load(game_id)
        best.append((time.process_time() - t) / n * 1e6)
    return min(best[1:])


def wrapper_costs() -> None:
    """The observability pieces alone, around a do-nothing endpoint: less noise than whole
    requests, whose CPU varies with the (random) games each app plays."""
    from infra.observability.instrumented_store import InstrumentedStore
    from infra.observability.logs import RequestContext
    from infra.observability.metrics import Metrics

    m = Metrics()
    rows = {
        "endpoint alone": _endpoint,
        "+ request id": RequestContext(_endpoint, access_log=False),
        "+ request id + HTTP metrics": RequestContext(_endpoint, False, m),
        "+ ... + JSON access log": RequestContext(_endpoint, True, m),
    }
    results = {name: asyncio.run(_wrapper_us(app)) for name, app in rows.items()}
    base = results["endpoint alone"]
    print("The pieces alone, best of 5 x 20000, CPU us per request:")
    for name, us in results.items():
        print(f"   {name:<30} {us:6.2f} us  (+{us - base:.2f})")
    store = MemoryGameStore()
    game = asyncio.run(_create(store))
    bare = asyncio.run(_store_us(store, game))
    timed = asyncio.run(_store_us(InstrumentedStore(store, m), game))
    print(f"   store.load bare / timed        {bare:6.2f} / {timed:.2f} us  (+{timed - bare:.2f})")


async def _create(store) -> str:
    from service.games.use_cases import GameService
    from service.lobby.use_cases import Lobby

    created = await Lobby(GameService(store, Settings())).deal([("a", None)])
    return created.record.id


def main() -> None:
    names = ["bare", "request-id", "metrics", "metrics+access"]
    devnull = open(os.devnull, "w")  # noqa: SIM115 - the access log's sink for the run
    real_stdout, sys.stdout = sys.stdout, devnull
    try:
        wrapper_out = __import__("io").StringIO()
        sys.stdout = wrapper_out
        wrapper_costs()
        sys.stdout = devnull
        results = {kind: asyncio.run(measure(names, kind)) for kind in ("health", "read", "act")}
    finally:
        sys.stdout = real_stdout
    print(wrapper_out.getvalue().replace("\n", "\n", 1), end="")
    print("Whole requests (the games differ between apps: noisier):")
    mode = (
        "multiprocess (mmap files)" if os.environ.get("PROMETHEUS_MULTIPROC_DIR") else "one process"
    )
    print(
        f"CPU us per request, median of {ROUNDS} rounds of {PER_ROUND}; prometheus_client: {mode}"
    )
    print(f"   {'request':<26}" + "".join(f"{n:>16}" for n in names))
    labels = {
        "health": "GET /health",
        "read": "GET /v1/games/{id}",
        "act": "POST .../actions (+2 bots)",
    }
    for kind, row in results.items():
        base = row["bare"]
        cells = "".join(
            f"{row[n]:>9.1f} ({row[n] - base:+5.1f})" if n != "bare" else f"{row[n]:>16.1f}"
            for n in names
        )
        print(f"   {labels[kind]:<26}{cells}")
    print("   (in parentheses: the difference to `bare`, in us)")


if __name__ == "__main__":
    try:
        if "--multiproc" in sys.argv and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            main()
            directory = tempfile.mkdtemp(prefix="bench-obs-prom-")
            env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": directory}
            subprocess.run([sys.executable, __file__], env=env, check=True)
            shutil.rmtree(directory, ignore_errors=True)
        else:
            main()
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)
