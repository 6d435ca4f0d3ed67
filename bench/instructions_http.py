"""Instructions per request, in-process: a figure the machine's load does not move.

Run under valgrind, twice, and subtract (start-up and imports cancel out):

    for n in 200 600; do
      PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$n \\
        .venv/bin/python bench/instructions_http.py actions $n 2>&1 | grep Collected
    done
    # (I(600) - I(200)) / 400 = instructions per action (and the read that follows it)

Modes (`TEN_BENCH_QUIET=1`: `actions` and `clocked` stop the app's background tasks
first, as `phases` and `steps` always do): `actions N` plays N actions through the service app (`service.app:app`, driven as
ASGI, no sockets) on 4-human games, each action followed by the read of the next seat's
legal actions, as a client does; `clocked N` the same games with a bank clock (an hour:
nobody times out, the clock's bookkeeping is the difference); `reads N` reads one game N times with a seat token;
`ceiling N` makes N writes of the ceiling app (`bench/ceiling_app.py`: HGET, decode, CAS).
`phases N` does it all in one run, side by side, with callgrind's client requests (see
`Callgrind`): N write-ceiling writes, N reads, then N actions of 4-human games of which
only the POSTs are counted (not the reads of the next seat's legal actions, the games'
creation nor this client's JSON decoding), each phase dumped to its own file:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --instr-atstart=no \\
      --callgrind-out-file=/tmp/cg.phases .venv/bin/python bench/instructions_http.py phases 200
    grep -H totals /tmp/cg.phases.*   # .1 ceiling, .2 reads, .3 actions; / N per request
    callgrind_annotate --inclusive=yes /tmp/cg.phases.3 | head -60

`steps N` splits those costs by step: each step is a function of the service, of Litestar or of
redis-py that callgrind stops collecting in while it runs, one step per phase, every action
phase replaying the very same games (the database flushed, the seeded ids and choices
restarted): a step's inclusive cost is the phase without it subtracted from the whole.
The list of steps is `STEPS` (and `CEILING_STEPS` for the write ceiling); the dumps are
numbered in the order `steps` prints them (to stderr). Both stop the app's background tasks
first (`quiet_background`).

Game ids, seeds and tokens come from a seeded random source, so two trees (main and a
`git worktree` of an older commit, run with `PYTHONPATH=<worktree>` from that worktree)
play the very same games. Redis at 127.0.0.1:6379 db 14 (flushed at start, and by `steps`
before each action phase; `TEN_REDIS_URL` names another).
Prints nothing but errors: valgrind's `Collected` line is the figure.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TEN_REDIS_URL", "redis://127.0.0.1:6379/14")
# the deadline poller looks at Redis every 0.2 s of wall time: under valgrind that is many
# looks, more on a slower run; an hour between them keeps the count the requests' alone
os.environ.setdefault("TEN_DEADLINE_POLL", "3600")
os.environ.setdefault("TEN_DATABASE_URL", f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/a.sqlite3")
_seeded = random.Random(11)
secrets.token_hex = lambda k=16: f"{_seeded.getrandbits(8 * k):0{2 * k}x}"
secrets.token_urlsafe = lambda k=32: f"{_seeded.getrandbits(8 * k):0{2 * k}x}"
sys.path.insert(0, str(Path(__file__).resolve().parent))  # ceiling_app


FOUR = json.dumps({"players": [{"name": f"p{i}"} for i in range(4)]}).encode()
# the same games with a real-time clock (an hour's bank: nobody times out)
CLOCK = {"type": "bank", "initial_seconds": 3600, "increment_seconds": 10}
FOUR_CLOCKED = json.dumps(
    {"players": [{"name": f"p{i}"} for i in range(4)], "clock": CLOCK}
).encode()


class Asgi:
    """One request at a time into an ASGI app (bench/breakdown_http.py has the same; that one
    imports today's service modules, this one must also run against older trees)."""

    def __init__(self, app) -> None:
        self.app = app

    async def request(self, method: str, path: str, body: bytes = b"", headers=()):
        hdrs = [(b"host", b"bench"), *((k.encode(), v.encode()) for k, v in headers)]
        if body:
            hdrs += [(b"content-length", str(len(body)).encode())]
            hdrs += [(b"content-type", b"application/json")]
        scope = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1", "method": method, "scheme": "http", "path": path,
            "raw_path": path.encode(), "root_path": "", "query_string": b"", "headers": hdrs,
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "state": {},
        }  # fmt: skip
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        out: dict = {"status": 0, "body": []}

        async def receive():
            if messages:
                return messages.pop()
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start":
                out["status"] = message["status"]
            elif message["type"] == "http.response.body":
                out["body"].append(message.get("body", b""))

        await self.app(scope, receive, send)
        return out["status"], b"".join(out["body"])


class Callgrind:
    """Callgrind's client requests (valgrind.h's magic instruction sequence, amd64), called
    through a few bytes of machine code: no-ops outside valgrind. Dumps and toggles cost a
    few instructions, not the seconds `callgrind_control` takes."""

    _BASE = (ord("C") << 24) | (ord("T") << 16)
    DUMP_AT, TOGGLE_COLLECT, START = _BASE + 3, _BASE + 2, _BASE + 4
    ZERO = _BASE + 1

    def __init__(self) -> None:
        import ctypes
        import mmap

        code = bytes.fromhex(
            "4889f8"  # mov rax, rdi (the request's six words)
            "4889f2"  # mov rdx, rsi (the result outside valgrind)
            "48c1c703" "48c1c70d" "48c1c73d" "48c1c733"  # rol rdi 3, 13, 61, 51
            "4887db"  # xchg rbx, rbx: the request
            "4889d0"  # mov rax, rdx
            "c3"
        )  # fmt: skip
        self._page = mmap.mmap(
            -1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
        )
        self._page.write(code)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._call = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t)(address)
        self._args = (ctypes.c_size_t * 6)()
        self._keep: list = []

    def request(self, code: int, arg: int = 0) -> int:
        self._args[0], self._args[1] = code, arg
        return self._call(self._args, 0)

    def dump(self, name: str) -> None:
        import ctypes

        text = ctypes.create_string_buffer(name.encode())
        self._keep.append(text)
        self.request(self.DUMP_AT, ctypes.addressof(text))


async def started(app) -> None:
    """Run the app's lifespan start-up (its store and archive connect)."""
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    asyncio.get_running_loop().create_task(app(scope, inbox.get, outbox.put))
    message = await outbox.get()
    assert message["type"] == "lifespan.startup.complete", message


def quiet_background() -> None:
    """Stop the app's background tasks (`service.bootstrap.Background`: the job workers, the
    deadline poller, the metrics flusher...): they wake by the wall clock, and a run under
    callgrind is so slow that their looks would weigh on the requests they land beside."""
    for task in asyncio.all_tasks():
        if task.get_name().startswith("ten-"):
            task.cancel()


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def actions(client: Asgi, n: int, create: bytes = FOUR) -> None:
    if os.environ.get("TEN_BENCH_QUIET") == "1":  # compare trees without their wake-ups
        quiet_background()
    await posted_actions(client, n, random.Random(5), create=create)


async def posted_actions(
    client: Asgi, count: int, rng: random.Random, cg=None, create: bytes = FOUR
) -> None:
    """`count` actions of 4-human games (made by `create`), each after the read of its seat's
    legal actions; with `cg` (collection off on entry), callgrind collects only while the
    service handles the POSTs (not the reads, the games' creation, nor the replies' decoding
    here)."""
    done = 0
    while done < count:
        _, body = await client.request("POST", "/v1/games", create)
        game = json.loads(body)
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        path = f"/v1/games/{game['id']}"
        view = game
        while view["phase"] != "finished" and done < count:
            token = tokens[view["to_act"]]
            _, body = await client.request("GET", path, headers=bearer(token))
            payload = json.dumps(rng.choice(json.loads(body)["legal_actions"])).encode()
            if cg is not None:
                cg.request(cg.TOGGLE_COLLECT)  # on
            status, body = await client.request("POST", f"{path}/actions", payload, bearer(token))
            if cg is not None:
                cg.request(cg.TOGGLE_COLLECT)  # off
            assert status == 200, (status, body[:300])
            view = json.loads(body)
            done += 1


async def phases(client: Asgi, ceiling: Asgi, n: int) -> None:
    """Ceiling writes, reads and actions, each phase dumped apart (see the module's doc)."""
    quiet_background()
    cg = Callgrind()
    _, body = await client.request("POST", "/v1/games", FOUR)
    game = json.loads(body)
    read_path, read_auth = f"/v1/games/{game['id']}", bearer(game["seats"][0]["token"])

    async def write_ceiling(count: int) -> None:
        for _ in range(count):
            status, _ = await ceiling.request("POST", "/ceiling/write/0")
            assert status == 200, status

    async def read(count: int) -> None:
        for _ in range(count):
            status, _ = await client.request("GET", read_path, headers=read_auth)
            assert status == 200, status

    rng = random.Random(5)

    # warm-up, not instrumented (`--instr-atstart=no`): every path once
    await write_ceiling(50)
    await read(50)
    await posted_actions(client, 100, rng)
    cg.request(cg.START)
    await write_ceiling(20)
    await read(20)
    await posted_actions(client, 20, rng)
    cg.request(cg.ZERO)
    await write_ceiling(n)
    cg.dump("ceiling")
    await read(n)
    cg.dump("reads")
    cg.request(cg.TOGGLE_COLLECT)  # off: collected only inside the POSTs
    await posted_actions(client, n, rng, cg)
    cg.request(cg.TOGGLE_COLLECT)
    cg.dump("actions")


def _resolve(dotted: str):
    """`module:Attr.attr` -> (the object holding the attribute, its name)."""
    import importlib

    module, _, attrs = dotted.partition(":")
    *path, name = attrs.split(".")
    owner = importlib.import_module(module)
    for part in path:
        owner = getattr(owner, part)
    return owner, name


# the steps of an action (dotted `module:attribute`), each left out of one phase; the
# environment's STEPS and CEILING_STEPS (comma-separated, may be empty) replace them. A step
# is patched where its caller looks it up: `routes:render_acted` and `routes:strictly` are
# the names the act handler calls (defined in api.game_views and api.bodies)
STEPS = [
    "service.games.use_cases:GameService.act",
    "service.games.use_cases:GameService.seat_of_caller",
    "service.games.use_cases:play",
    "service.games.use_cases:encode_events",
    "service.games.use_cases:GameService.store_change",
    "service.core.ports:GameStore.save",
    "infra.redis_store:RedisGameStore.write",
    "infra.redis_store:record_encoder",
    "redis.commands.core:AsyncScript.__call__",
    "service.entrypoints.api.routes:render_acted",
    "service.entrypoints.api.routes:strictly",
    "litestar._kwargs.kwargs_model:KwargsModel.to_kwargs",
    "litestar._signature.model:SignatureModel.parse_values_from_connection_kwargs",
    "litestar.handlers.http_handlers.base:HTTPRouteHandler.to_response",
]
CEILING_STEPS = [
    "ceiling_app:_redis.hget",
    "redis.commands.core:AsyncScript.__call__",
    "ceiling_app:_decoder",
    "ceiling_app:_msgpack",
    "ceiling_app:_reply",
    "litestar._kwargs.kwargs_model:KwargsModel.to_kwargs",
    "litestar._signature.model:SignatureModel.parse_values_from_connection_kwargs",
    "litestar.handlers.http_handlers.base:HTTPRouteHandler.to_response",
]
if "STEPS" in os.environ:
    STEPS = [step for step in os.environ["STEPS"].split(",") if step]
if "CEILING_STEPS" in os.environ:
    CEILING_STEPS = [step for step in os.environ["CEILING_STEPS"].split(",") if step]


class _Uncounted:
    """A msgspec Encoder/Decoder stand-in whose encode/decode callgrind does not count."""

    def __init__(self, inner, cg: Callgrind) -> None:
        self._inner, self._cg = inner, cg

    def _uncounted(self, method: str, *a):
        self._cg.request(self._cg.TOGGLE_COLLECT)
        try:
            return getattr(self._inner, method)(*a)
        finally:
            self._cg.request(self._cg.TOGGLE_COLLECT)

    def encode(self, *a):
        return self._uncounted("encode", *a)

    def decode(self, *a):
        return self._uncounted("decode", *a)


def uncounted(dotted: str, cg: Callgrind):
    """Patch the step so that callgrind does not count it; returns the undo."""
    import functools
    import inspect

    owner, name = _resolve(dotted)
    raw = inspect.getattr_static(owner, name)
    fn = raw.__func__ if isinstance(raw, classmethod) else raw
    if not inspect.isclass(owner) and not inspect.ismodule(owner) and name not in vars(owner):
        fn = getattr(owner, name)  # a method of an instance: patched on the instance
        raw = None
    toggle = functools.partial(cg.request, cg.TOGGLE_COLLECT)
    if hasattr(fn, "encode") or hasattr(fn, "decode"):
        wrapped = _Uncounted(fn, cg)
    elif inspect.iscoroutinefunction(fn):

        async def wrapped(*a, **kw):
            toggle()
            try:
                return await fn(*a, **kw)
            finally:
                toggle()
    else:

        def wrapped(*a, **kw):
            toggle()
            try:
                result = fn(*a, **kw)
            finally:
                toggle()
            if not inspect.isawaitable(result):
                return result

            async def awaited():  # e.g. redis-py's commands: a coroutine from a plain call
                toggle()
                try:
                    return await result
                finally:
                    toggle()

            return awaited()

    setattr(owner, name, classmethod(wrapped) if isinstance(raw, classmethod) else wrapped)
    return (lambda: delattr(owner, name)) if raw is None else (lambda: setattr(owner, name, raw))


async def steps(client: Asgi, ceiling: Asgi, n: int, service, redis) -> None:
    """The write ceiling and an action, whole and without each step (see the module's doc)."""
    quiet_background()
    cg = Callgrind()
    rng = random.Random(5)
    import ceiling_app

    ceiling_record = await redis.hgetall(ceiling_app._key(0))

    async def write_ceiling(count: int) -> None:
        for _ in range(count):
            status, _ = await ceiling.request("POST", "/ceiling/write/0")
            assert status == 200, status

    async def act(count: int) -> None:
        """`count` POST actions, the very same ones each time; only the POSTs collected."""
        await redis.flushdb()
        await redis.hset(ceiling_app._key(0), mapping=ceiling_record)
        service._recent.clear()
        _seeded.seed(11)
        rng.seed(5)
        await posted_actions(client, count, rng, cg)

    await write_ceiling(50)
    await act(100)
    cg.request(cg.START)
    await write_ceiling(20)
    cg.request(cg.ZERO)
    dumps = 0

    def dump(label: str) -> None:
        nonlocal dumps
        dumps += 1
        cg.dump(label)
        print(f"dump {dumps}: {label}", file=sys.stderr)

    for step in [None, *CEILING_STEPS]:
        undo = uncounted(step, cg) if step else None
        await write_ceiling(n)
        if undo:
            undo()
        dump(f"ceiling without {step}" if step else "ceiling")
    cg.request(cg.TOGGLE_COLLECT)  # off: `act` counts only inside its POSTs
    for step in [None, *STEPS, None]:
        undo = uncounted(step, cg) if step else None
        await act(n)
        if undo:
            undo()
        cg.request(cg.TOGGLE_COLLECT)
        dump(f"action without {step}" if step else "action")
        cg.request(cg.TOGGLE_COLLECT)
    cg.request(cg.TOGGLE_COLLECT)


async def main(mode: str, n: int) -> None:
    import redis.asyncio as aioredis

    redis = aioredis.Redis.from_url(os.environ["TEN_REDIS_URL"])
    await redis.flushdb()
    from service.app import app

    await started(app)
    client = Asgi(app)
    if mode == "actions":
        await actions(client, n)
    elif mode == "clocked":
        await actions(client, n, FOUR_CLOCKED)
    elif mode == "reads":
        _, body = await client.request("POST", "/v1/games", FOUR)
        game = json.loads(body)
        for _ in range(n):
            status, _ = await client.request(
                "GET", f"/v1/games/{game['id']}", headers=bearer(game["seats"][0]["token"])
            )
            assert status == 200, status
    else:
        import ceiling_app

        await started(ceiling_app.app)
        _, body = await client.request("POST", "/v1/games", FOUR)
        game = json.loads(body)
        blob = await redis.hget(f"{{game:{game['id']}}}", "rec")
        await redis.hset(ceiling_app._key(0), mapping={"rec": blob, "v": game["version"]})
        ceiling = Asgi(ceiling_app.app)
        if mode == "phases":
            await phases(client, ceiling, n)
        elif mode == "steps":
            await steps(client, ceiling, n, app.state.service, redis)
        for _ in range(n if mode == "ceiling" else 0):
            status, _ = await ceiling.request("POST", "/ceiling/write/0")
            assert status == 200, status
    await redis.aclose()


if __name__ == "__main__":
    import uvloop

    uvloop.run(main(sys.argv[1], int(sys.argv[2])))
