"""Instructions per request, in-process: a figure the machine's load does not move.

Run under valgrind, twice, and subtract (start-up and imports cancel out):

    for n in 200 600; do
      PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$n \\
        .venv/bin/python bench/instructions_http.py actions $n 2>&1 | grep Collected
    done
    # (I(600) - I(200)) / 400 = instructions per action (and the read that follows it)

Modes: `actions N` plays N actions through the service app (`service.app:app`, driven as
ASGI, no sockets) on 4-human games, each action followed by the read of the next seat's
legal actions, as a client does; `clocked N` the same games with a bank clock (an hour:
nobody times out, the clock's bookkeeping is the difference); `reads N` reads one game N times with a seat token;
`ceiling N` makes N writes of the ceiling app (`bench/ceiling_app.py`: HGET, decode, CAS).
Game ids, seeds and tokens come from a seeded random source, so two trees (main and a
`git worktree` of an older commit, run with `PYTHONPATH=<worktree>` from that worktree)
play the very same games. Redis at 127.0.0.1:6379 db 14 (flushed at start).
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


async def started(app) -> None:
    """Run the app's lifespan start-up (its store and archive connect)."""
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    asyncio.get_running_loop().create_task(app(scope, inbox.get, outbox.put))
    message = await outbox.get()
    assert message["type"] == "lifespan.startup.complete", message


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def actions(client: Asgi, n: int, create: bytes = FOUR) -> None:
    rng = random.Random(5)
    count = 0
    while count < n:
        _, body = await client.request("POST", "/v1/games", create)
        game = json.loads(body)
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        path = f"/v1/games/{game['id']}"
        view = game
        while view["phase"] != "finished" and count < n:
            token = tokens[view["to_act"]]
            _, body = await client.request("GET", path, headers=bearer(token))
            action = rng.choice(json.loads(body)["legal_actions"])
            status, body = await client.request(
                "POST", f"{path}/actions", json.dumps(action).encode(), bearer(token)
            )
            assert status == 200, (status, body[:300])
            view = json.loads(body)
            count += 1


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
        for _ in range(n):
            status, _ = await ceiling.request("POST", "/ceiling/write/0")
            assert status == 200, status
    await redis.aclose()


if __name__ == "__main__":
    import uvloop

    uvloop.run(main(sys.argv[1], int(sys.argv[2])))
