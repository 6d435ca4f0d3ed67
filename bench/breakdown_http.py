"""Where a request's server CPU goes, in microseconds, without sockets or a load generator.

Run: `.venv/bin/python bench/breakdown_http.py` (Redis at 127.0.0.1:6379 db 15; ~30 s;
prints figures, asserts nothing). Companion of `bench/bench_http.py`, whose `us/req` column
is the whole server's CPU per request under load (uvicorn + httptools + Litestar + handler).
Here one request runs at a time in this process and CPU time is measured
(`time.process_time`: waiting for Redis and other processes' load do not count):

1. `GameService.act` called directly, each stage timed by wrapping what `act` calls (1: a
   human and 3 random bots, 1b: 4 humans, no bot moves in the request);
2. single pieces: one redis-py round trip (with the store's BlockingConnectionPool, a plain
   ConnectionPool, and a bare asyncio protocol + hiredis as the floor), msgpack, rendering,
   decoding an action body;
3. the service app and the ceiling app (`bench/ceiling_app.py`) driven as ASGI in-process:
   3 - 1 is Litestar's share, and `bench_http.py`'s us/req minus 3 is uvicorn, httptools,
   uvloop and the socket system calls; 3c measures the service against the ceiling in
   turns, the least load-sensitive comparison this machine allows;
4. the framework alone: the service app with its use case stubbed (no Redis, no engine)
   against a bare Litestar handler doing the same stub work without dependency injection,
   declared header parameters or a typed `data` body.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import msgspec
from litestar import Litestar, Request, Response, get, post

# a Redis database and an archive of its own (see bench_http.py: the archive outbox is shared
# by every service process on a database); this script never starts the archiver itself
os.environ.setdefault("TEN_REDIS_URL", "redis://127.0.0.1:6379/15")
_TMP = tempfile.mkdtemp(prefix="bench-breakdown-")
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
os.environ.setdefault("TEN_DATABASE_URL", f"sqlite+aiosqlite:///{_TMP}/archive.sqlite3")
OUTBOX_KEY = "ten:archive:outbox"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `bench.ceiling_app`

import domain.bots.clock as clock_mod  # noqa: E402 - after the environment is set
import service.games.use_cases as games_mod  # noqa: E402 - after the environment is set
from bench.loadgen import next_move  # noqa: E402 - the load generator's own move choice
from domain.game.model import Action  # noqa: E402 - after the environment is set
from infra.redis_client import connect  # noqa: E402 - after the environment is set
from infra.redis_layout import record_decoder, record_encoder  # noqa: E402 - after the environment is set
from service.core.callers import Caller  # noqa: E402 - after the environment is set
from service.core.settings import Settings  # noqa: E402 - after the environment is set
from service.entrypoints.api.app import create_app  # noqa: E402 - after the environment is set
from service.entrypoints.api.game_views import etag, render_acted, view_fields  # noqa: E402 - after the environment is set
from service.entrypoints.api.schemas import GameOut  # noqa: E402 - after the environment is set
from service.games.commands import Act  # noqa: E402 - after the environment is set
from service.games.use_cases import Acted, GameService  # noqa: E402 - after the environment is set
from service.lobby.use_cases import Lobby  # noqa: E402 - after the environment is set

ACTIONS = 2000
CALLS = 2000
CEIL_N = 999999  # the ceiling app's key {bench:ceil}:<n> used here
W = 44  # label width


def line(label: str, us: float, note: str = "") -> None:
    print(f"   {label:<{W}} {us:7.1f} us{('  ' + note) if note else ''}")


class Timers:
    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)

    def wrap_sync(self, name, fn):
        def wrapped(*a, **kw):
            t = time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                self.cpu[name] += time.process_time() - t

        return wrapped

    def wrap_async(self, name, fn):
        async def wrapped(*a, **kw):
            t = time.process_time()
            try:
                return await fn(*a, **kw)
            finally:
                self.cpu[name] += time.process_time() - t

        return wrapped


BOTS = ["random"]  # `--bots random,basic`: the bots' levels, each measured in turn


def players(bots: str | None = None, humans: int = 1):
    return [(f"human{i}", None) for i in range(humans)] + [
        (f"bot{i}", bots or BOTS[0]) for i in range(4 - humans)
    ]


class Asgi:
    """Drives an ASGI app in-process: one request at a time, no sockets."""

    def __init__(self, app) -> None:
        self.app = app

    async def request(self, method, path, body=b"", headers=()):
        path, _, query = path.partition("?")
        hdrs = [(b"host", b"bench"), *((k.encode(), v.encode()) for k, v in headers)]
        if body:
            hdrs.append((b"content-length", str(len(body)).encode()))
            hdrs.append((b"content-type", b"application/json"))
        scope = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1", "method": method, "scheme": "http", "path": path,
            "raw_path": path.encode(), "root_path": "", "query_string": query.encode(), "headers": hdrs,
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "state": {},
        }  # fmt: skip
        sent = False

        async def receive():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        out = {"status": 0, "body": []}

        async def send(message):
            if message["type"] == "http.response.start":
                out["status"] = message["status"]
            elif message["type"] == "http.response.body":
                out["body"].append(message.get("body", b""))

        await self.app(scope, receive, send)
        return out["status"], b"".join(out["body"])


async def cpu_per_call(fn, n: int = CALLS, rounds: int = 5) -> float:
    """Median over `rounds` of the CPU us per call of `await fn()`."""
    for _ in range(100):
        await fn()
    results = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(n // rounds):
            await fn()
        results.append((time.process_time() - t) / (n // rounds) * 1e6)
    return statistics.median(results)


async def play_direct(
    service: GameService, actions: int, rng, ids, render=render_acted, humans=1, bots=None
):
    """`GameService.act` on fresh games, each outcome rendered as the API does; returns (CPU s
    in act and rendering, actions, games)."""
    total, count, games = 0.0, 0, 0
    while count < actions:
        created = await Lobby(service).deal(players(bots, humans=humans))
        ids.append(created.record.id)
        auths = dict(created.tokens)
        seat, legal = next_move(msgspec.to_builtins(view_fields(created.record, None)))
        games += 1
        while legal and count < actions:
            action = msgspec.convert(rng.choice(legal), type=Action)
            t = time.process_time()
            acted = await service.act(
                Act(caller=Caller(seat_token=auths[seat]), game_id=created.record.id, action=action)
            )
            body = render(acted)
            total += time.process_time() - t
            count += 1
            seat, legal = next_move(msgspec.json.decode(body))
    return total, count, games


async def asgi_actions(client: Asgi, actions: int, rng, ids, humans=1, bots=None):
    """POST actions through the whole app; returns (CPU s, actions, statuses, mean bytes)."""
    total, count, statuses, size = 0.0, 0, defaultdict(int), 0
    decode, encode = msgspec.json.decode, msgspec.json.encode
    body = encode({"players": [{"name": n, "bot": b} for n, b in players(bots, humans=humans)]})
    while count < actions:
        _, data = await client.request("POST", "/v1/games", body)
        game = decode(data)
        ids.append(game["id"])
        auths = {s["seat"]: (("authorization", f"Bearer {s['token']}"),) for s in game["seats"]}
        seat, legal = next_move(game)
        while legal and count < actions:
            payload = encode(rng.choice(legal))
            t = time.process_time()
            status, data = await client.request(
                "POST", f"/v1/games/{game['id']}/actions", payload, auths[seat]
            )
            total += time.process_time() - t
            count += 1
            statuses[status] += 1
            size += len(data)
            if status != 200:
                break
            seat, legal = next_move(decode(data))
    return total, count, dict(statuses), size // max(count, 1)


class ActionPlayer:
    """One POST action per `step()` through the whole app, playing games one after another
    (creating a game and its first read are done apart, their CPU not counted)."""

    def __init__(self, client: Asgi, rng, ids, humans: int, bots: str | None = None) -> None:
        self.client, self.rng, self.ids, self.humans, self.bots = client, rng, ids, humans, bots
        self.game, self.seat, self.legal, self.auths = None, None, [], {}
        self.cpu = 0.0

    async def _new_game(self) -> None:
        body = msgspec.json.encode(
            {"players": [{"name": n, "bot": b} for n, b in players(self.bots, humans=self.humans)]}
        )
        _, data = await self.client.request("POST", "/v1/games", body)
        game = msgspec.json.decode(data)
        self.ids.append(game["id"])
        self.game = game["id"]
        self.auths = {
            s["seat"]: (("authorization", f"Bearer {s['token']}"),) for s in game["seats"]
        }
        self.seat, self.legal = next_move(game)

    async def step(self) -> None:
        while not self.legal:
            await self._new_game()
        payload = msgspec.json.encode(self.rng.choice(self.legal))
        t = time.process_time()
        status, data = await self.client.request(
            "POST", f"/v1/games/{self.game}/actions", payload, self.auths[self.seat]
        )
        self.cpu += time.process_time() - t
        assert status == 200, (status, data[:200])
        self.seat, self.legal = next_move(msgspec.json.decode(data))


async def interleaved(cases: dict, rounds: int = 12, per_round: int = 150) -> dict[str, float]:
    """CPU us per call of each case, measured in turns (`per_round` calls of one, then of
    the next...) so that the machine's changing load weighs on every case alike; the median
    over the rounds. A case is `(fn, counter)`: `counter()` the CPU seconds `fn` counted
    itself (to leave out what it does apart), or None to time the whole call."""
    for fn, _ in cases.values():
        for _ in range(30):
            await fn()
    results: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (fn, counter) in cases.items():
            before = counter() if counter else None
            t = time.process_time()
            for _ in range(per_round):
                await fn()
            spent = (counter() - before) if counter else time.process_time() - t
            results[name].append(spent / per_round * 1e6)
    return {name: statistics.median(values) for name, values in results.items()}


async def stage_breakdown(
    service: GameService, rng, ids, humans: int = 1, bots: str | None = None
) -> float:
    store = service.store
    timers = Timers()
    # the engine runs through `domain.bots.clock.play` (apply, then the bots' moves)
    wrapped = {
        (clock_mod, "apply"): timers.wrap_sync(
            "engine: apply (the human's action)", clock_mod.apply
        ),
        (clock_mod, "play_bots"): timers.wrap_sync(
            "engine: play_bots (the bots' moves)", clock_mod.play_bots
        ),
        (games_mod, "encode_events"): timers.wrap_sync(
            "encode events (JSON)", games_mod.encode_events
        ),
    }
    originals = {where: getattr(*where) for where in wrapped}
    load, save, seat_of, create = store.load, store.save, service.seat_of, Lobby.deal
    store.load = timers.wrap_async("load: HGET + msgpack decode", load)
    store.save = timers.wrap_async("save: msgpack encode + EVALSHA (Lua CAS)", save)
    service.seat_of = timers.wrap_async("seat check (sha256 of the token)", seat_of)
    render = timers.wrap_sync("render: view + legal actions + JSON", render_acted)
    create_cpu: dict[str, float] = defaultdict(float)

    async def create_apart(*a, **kw):  # creates also apply, play bots, encode: not actions
        before = dict(timers.cpu)
        try:
            return await create(*a, **kw)  # (self, players, ...)
        finally:
            for k, v in timers.cpu.items():
                create_cpu[k] += v - before.get(k, 0.0)

    Lobby.deal = create_apart
    for (module, name), fn in wrapped.items():
        setattr(module, name, fn)
    try:
        total, count, games = await play_direct(service, ACTIONS, rng, ids, render, humans, bots)
    finally:
        for (module, name), fn in originals.items():
            setattr(module, name, fn)
        store.load, store.save = load, save
        service.seat_of, Lobby.deal = seat_of, create
    act_us = total / count * 1e6
    who = f"1 human + 3 {bots or BOTS[0]} bots" if humans == 1 else "4 humans, no bot"
    print(f"GameService.act called directly: {act_us:.0f} us CPU per action "
          f"({count} actions in {games} games, {who})")  # fmt: skip
    accounted = 0.0
    stages = {k: v - create_cpu.get(k, 0.0) for k, v in timers.cpu.items()}
    for name, cpu in sorted(stages.items(), key=lambda kv: -kv[1]):
        us = cpu / count * 1e6  # (a load only when the process's copy of the game is stale)
        accounted += us
        line(name, us)
    line("rest of GameService.act (and timer overhead)", act_us - accounted)
    return act_us


async def pieces(service: GameService, game_id: str, client) -> None:
    """`client`: a client as the Redis store makes its own (`infra.redis_client.connect`)."""
    import hiredis
    import redis.asyncio as aredis

    record = await service.get(game_id)
    key = f"{{game:{game_id}}}"
    blob = await client.hget(key, "rec")
    plain = aredis.Redis.from_url(os.environ["TEN_REDIS_URL"])
    loop = asyncio.get_running_loop()

    class Proto(asyncio.Protocol):
        def __init__(self) -> None:
            self.reader, self.waiter = hiredis.Reader(), None

        def connection_made(self, transport) -> None:
            self.transport = transport

        def data_received(self, data) -> None:
            self.reader.feed(data)
            reply = self.reader.gets()
            if reply is not False:
                self.waiter.set_result(reply)

    host = client.connection_pool.connection_kwargs.get("host", "127.0.0.1")
    port = client.connection_pool.connection_kwargs.get("port", 6379)
    transport, proto = await loop.create_connection(Proto, host, port)
    hget = f"*3\r\n$4\r\nHGET\r\n${len(key)}\r\n{key}\r\n$3\r\nrec\r\n".encode()

    async def raw_hget():
        proto.waiter = loop.create_future()
        transport.write(hget)
        await proto.waiter

    decoder = msgspec.json.Decoder(Action)
    body = b'{"type":"bid","amount":3}'

    async def run(fn):
        fn()

    print("\n2. pieces, one at a time:")
    line(
        "redis-py HGET, the store's BlockingConnectionPool",
        await cpu_per_call(lambda: client.hget(key, "rec")),
    )
    line("redis-py HGET, plain ConnectionPool", await cpu_per_call(lambda: plain.hget(key, "rec")))
    line("asyncio protocol + hiredis HGET (the floor)", await cpu_per_call(raw_hget))
    line(
        f"msgpack decode of the record ({len(blob)} B)",
        await cpu_per_call(lambda: run(lambda: record_decoder.decode(blob))),
    )
    line(
        "msgpack encode of the record",
        await cpu_per_call(lambda: run(lambda: record_encoder.encode(record))),
    )
    line(
        "GET body: public_view + GameOut JSON",
        await cpu_per_call(
            lambda: run(lambda: msgspec.json.encode(GameOut(**view_fields(record, None))))
        ),
    )
    line(
        "  the same with legal_actions (seat token)",
        await cpu_per_call(
            lambda: run(lambda: msgspec.json.encode(GameOut(**view_fields(record, 0))))
        ),
    )
    line(
        "action body: msgspec.json.decode(type=Action)",
        await cpu_per_call(lambda: run(lambda: msgspec.json.decode(body, type=Action))),
        "(what Litestar does per request)",
    )
    line(
        "action body: msgspec.json.Decoder(Action)",
        await cpu_per_call(lambda: run(lambda: decoder.decode(body))),
        "(a decoder built once)",
    )
    transport.close()
    await plain.aclose()  # fmt: skip


async def framework(service: GameService) -> list[str]:
    """Litestar's cost for the service's handler signatures, with the use case stubbed."""
    created = await Lobby(service).deal(players())  # a game whose seat token we know
    rec = await service.get(created.record.id)
    auth = f"Bearer {created.tokens[0][1]}"
    canned = Acted(record=rec, seat=0, events=[], replayed=False)
    enc = msgspec.json.Encoder()
    decoder = msgspec.json.Decoder(Action)

    class Stub(GameService):
        """The same calls, no Redis and no engine: get returns a record in memory."""

        async def get(self, _game_id):
            return rec

        async def act(self, command):
            seat = await self.seat_of_caller(await self.get(command.game_id), command.caller)
            assert seat == 0
            return canned

    stub = Stub(service.store, service.settings)
    app = create_app(service.settings, store=service.store)
    app.state.service = stub
    as_is = Asgi(app)

    @post("/act/{game_id:str}", status_code=200)
    async def lean_act(request: Request, game_id: str) -> Response[bytes]:
        body = await request.body()
        token = request.headers.get("authorization", "").partition(" ")[2]
        acted = await stub.act(
            Act(caller=Caller(seat_token=token), game_id=game_id, action=decoder.decode(body))
        )
        return Response(
            render_acted(acted),
            media_type="application/json",
            headers={"ETag": etag(acted.record.version)},
        )

    @get("/get/{game_id:str}")
    async def lean_get(request: Request, game_id: str) -> Response[bytes]:
        rec_ = await stub.get(game_id)
        seat = await stub.seat_of(
            rec_, request.headers.get("authorization", "").partition(" ")[2] or None
        )
        body = enc.encode(GameOut(**view_fields(rec_, seat)))
        return Response(body, media_type="application/json", headers={"ETag": etag(rec_.version)})

    @get("/empty")
    async def empty() -> Response[bytes]:
        return Response(b"{}", media_type="application/json")

    lean = Asgi(Litestar(route_handlers=[lean_act, lean_get, empty], openapi_config=None))
    gid = rec.id
    hdr = (("authorization", auth),)
    body = b'{"type":"draw"}'
    cases = [
        ("POST action, service app (DI, typed params)", as_is, "POST", f"/v1/games/{gid}/actions", body, hdr),
        ("POST action, bare handler, same stub work", lean, "POST", f"/act/{gid}", body, hdr),
        ("GET game, service app", as_is, "GET", f"/v1/games/{gid}", b"", ()),
        ("GET game, bare handler, same work", lean, "GET", f"/get/{gid}", b"", ()),
        ("GET empty endpoint, bare app", lean, "GET", "/empty", b"", ()),
    ]  # fmt: skip
    print("\n4. the framework alone (use case stubbed: no Redis, no engine):")
    for label, client, method, path, data, headers in cases:
        status, out = await client.request(method, path, data, headers)
        assert status == 200, (label, status, out[:200])

        async def one(client=client, method=method, path=path, data=data, headers=headers):
            await client.request(method, path, data, headers)

        line(label, await cpu_per_call(one))
    return [created.record.id]


async def main() -> None:
    rng = random.Random(3)
    app = create_app(Settings.from_env())
    service: GameService = app.state.service
    client = Asgi(app)
    raw = connect(os.environ["TEN_REDIS_URL"])  # for the keys this script reads and deletes
    ids: list[str] = []
    print(f"python {sys.version.split()[0]}; CPU us per request, one request at a time, "
          f"in-process (machine load average {os.getloadavg()[0]:.2f})\n")  # fmt: skip
    try:
        await play_direct(service, 200, rng, ids)  # warm-up of every path
        direct_by_bots = {}
        for bots in BOTS:
            print("1. ", end="")
            direct_by_bots[bots] = await stage_breakdown(service, rng, ids, bots=bots)
        direct_act = direct_by_bots[BOTS[0]]
        print("1b. ", end="")
        direct_humans = await stage_breakdown(service, rng, ids, humans=4)
        game_id = ids[-1]
        await pieces(service, game_id, raw)

        print("\n3. the apps driven as ASGI in-process (no sockets, no uvicorn):")
        a_total, a_count, statuses, act_bytes = await asgi_actions(client, ACTIONS, rng, ids)
        asgi_act = a_total / a_count * 1e6
        line("service POST /v1/games/{id}/actions", asgi_act, f"({a_count} actions, {statuses})")
        line("  of which Litestar and routes.py (3 - 1)", asgi_act - direct_act)
        h_total, h_count, h_statuses, _ = await asgi_actions(client, ACTIONS, rng, ids, humans=4)
        asgi_humans = h_total / h_count * 1e6
        line(
            "  the same, 4 humans (no bot moves)", asgi_humans, f"({h_count} actions, {h_statuses})"
        )
        line("    of which Litestar and routes.py (3 - 1b)", asgi_humans - direct_humans)

        async def get_game():
            status, _ = await client.request("GET", f"/v1/games/{game_id}")
            assert status == 200, status

        async def get_direct():
            rec = await service.get(game_id)
            await service.seat_of(rec, None)
            msgspec.json.encode(GameOut(**view_fields(rec, None)))

        asgi_get = await cpu_per_call(get_game)
        direct_get = await cpu_per_call(get_direct)
        line("service GET /v1/games/{id}", asgi_get)
        line("  of which the handler's work (load, view, JSON)", direct_get)
        line("  of which Litestar", asgi_get - direct_get)

        os.environ["CEILING_READ_BYTES"] = str(
            len((await client.request("GET", f"/v1/games/{game_id}"))[1])
        )
        os.environ["CEILING_WRITE_BYTES"] = str(act_bytes)
        from bench import ceiling_app

        blob = await raw.hget(f"{{game:{game_id}}}", "rec")
        version = (await service.get(game_id)).version
        for n in (CEIL_N, CEIL_N + 1):  # the second for the kept-record endpoint
            await raw.hset(f"{{bench:ceil}}:{n}", mapping={"v": version, "rec": blob})
        ceil = Asgi(ceiling_app.app)

        async def ceil_read():
            status, _ = await ceil.request("GET", f"/ceiling/read/{CEIL_N}")
            assert status == 200, status

        async def ceil_write():
            status, _ = await ceil.request("POST", f"/ceiling/write/{CEIL_N}", b'{"type":"draw"}')
            assert status == 200, status

        async def ceil_kept():
            status, _ = await ceil.request(
                "POST", f"/ceiling/kept/{CEIL_N + 1}", b'{"type":"draw"}'
            )
            assert status == 200, status

        ceiling_read = await cpu_per_call(ceil_read)
        ceiling_write = await cpu_per_call(ceil_write)
        line("ceiling GET  /ceiling/read/{n}", ceiling_read)
        line("ceiling POST /ceiling/write/{n}", ceiling_write)
        bot_players = {b: ActionPlayer(client, rng, ids, humans=1, bots=b) for b in BOTS}
        humans_player = ActionPlayer(client, rng, ids, humans=4)
        turns = await interleaved(
            {
                "read ceiling": (ceil_read, None),
                "read service": (get_game, None),
                "write ceiling": (ceil_write, None),
                **{
                    f"action service (3 {b} bots)": (p.step, lambda p=p: p.cpu)
                    for b, p in bot_players.items()
                },
                "action humans": (humans_player.step, lambda: humans_player.cpu),
                "write ceiling without its read": (ceil_kept, None),
            }
        )
        print("\n3c. the same, measured in turns (median of 12 rounds of 150 calls each):")
        for name, us in turns.items():
            line(name, us)
        write = turns["write ceiling"]
        with_bots = ", ".join(
            f"{write / turns[f'action service (3 {b} bots)'] * 100:.0f}% with 3 {b} bots' moves"
            for b in BOTS
        )
        print(
            f"   ceiling / service CPU: read "
            f"{turns['read ceiling'] / turns['read service'] * 100:.0f}%, action "
            f"{with_bots}, "
            f"{write / turns['action humans'] * 100:.0f}% humans only (in-process: uvicorn, "
            "httptools and the sockets, the same for both, are left out)"
        )
        kept = turns["write ceiling without its read"]
        print(
            "   (not the issue's ceiling: against a write ceiling that also keeps the record in "
            f"memory and skips its HGET, as actions do, "
            f"{kept / turns[f'action service (3 {BOTS[0]} bots)'] * 100:.0f}% "
            f"with bots, {kept / turns['action humans'] * 100:.0f}% humans only)"
        )
        await ceiling_app._redis.aclose()

        ids += await framework(service)
    finally:
        keys = [f"{{bench:ceil}}:{CEIL_N}", f"{{bench:ceil}}:{CEIL_N + 1}"]
        for g in ids:
            keys += [f"{{game:{g}}}", f"{{game:{g}}}:log", f"{{game:{g}}}:idem"]
        for i in range(0, len(keys), 500):
            await raw.delete(*keys[i : i + 500])
        for i in range(0, len(ids), 500):  # the finished games handed to the archive outbox
            await raw.hdel(OUTBOX_KEY, *ids[i : i + 500])
        await raw.aclose()
        await service.store.close()
        shutil.rmtree(_TMP, ignore_errors=True)


if __name__ == "__main__":
    import argparse

    import uvloop

    parser = argparse.ArgumentParser(description="Where a request's server CPU goes.")
    parser.add_argument(
        "--bots", default="random", help="the 3 bots' level(s), comma-separated: random,basic"
    )
    BOTS[:] = parser.parse_args().bots.split(",")

    uvloop.run(main())
