"""The ceiling of this stack for the game endpoints: a bare Litestar app (no DI, no headers
parsed, no engine) that does only the storage and serialization work a game request needs.

Run by `bench/bench_http.py` as `uvicorn bench.ceiling_app:app` with the same settings as the
service. Environment:
- `TEN_REDIS_URL`           the Redis (same pool settings as `infra.redis_client`)
- `CEILING_READ_BYTES`      pad the read reply to this many bytes (a real `GET` reply's size)
- `CEILING_WRITE_BYTES`     pad the write reply to this many bytes (a real action reply's size)
- `TEN_GC_THRESHOLD`        the garbage-collector tuning, as the service does it (`infra.runtime`)

Keys (prepared by the benchmark): `{bench:ceil}:<n>` hashes with `v` (version) and `rec` (the
msgpack blob of a real stored game record, so the decode does the real work).

- `GET  /ceiling/read/{n}`   HGET rec -> msgspec decode (GameRecord) -> JSON reply (the state
                             without draw pile and seed, padded to a real reply's size)
- `POST /ceiling/write/{n}`  HGET rec -> decode -> version + 1 -> encode -> ONE Lua call that
                             checks the version and writes `v` and `rec` -> JSON reply
- `POST /ceiling/kept/{n}`   the write ceiling without its HGET, as the service's actions do
                             (they start from the process's copy of the game): the record
                             decoded last is kept in memory; a refused CAS reads it again.
                             Not the issue's ceiling: shown beside it by breakdown_http.py
"""

from __future__ import annotations

import os
import time

import msgspec
from litestar import Litestar, Response, get, post
from msgspec.structs import replace
from redis.asyncio import BlockingConnectionPool, Redis

from domain.game.model import GameState
from infra.runtime import tune_gc
from service.core.model import GameRecord
from service.core.settings import Settings

JSON = "application/json"
REDIS_URL = os.environ.get("TEN_REDIS_URL", "redis://127.0.0.1:6379/0")
READ_BYTES = int(os.environ.get("CEILING_READ_BYTES", "0"))
WRITE_BYTES = int(os.environ.get("CEILING_WRITE_BYTES", "0"))

_CAS = """
local v = redis.call('HGET', KEYS[1], 'v')
if v == false or v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'rec', ARGV[3])
return 1
"""

_redis = Redis(
    connection_pool=BlockingConnectionPool.from_url(REDIS_URL, max_connections=200, timeout=5)
)
_cas = _redis.register_script(_CAS)
_decoder = msgspec.msgpack.Decoder(GameRecord)
_msgpack = msgspec.msgpack.Encoder()
_json = msgspec.json.Encoder()


class Reply(msgspec.Struct):
    id: str
    state: GameState  # the secrets blanked, as a reply would: about a real reply's size
    pad: str = ""


def _key(n: int) -> str:
    return f"{{bench:ceil}}:{n}"


def _reply(record: GameRecord, size: int) -> bytes:
    state = replace(record.state, draw_pile=(), seed="")
    body = _json.encode(Reply(record.id, state))
    if len(body) < size:  # a real reply's size: the same bytes to write to the socket
        body = _json.encode(Reply(record.id, state, "x" * (size - len(body))))
    return body


@get("/ceiling/read/{n:int}")
async def read(n: int) -> Response[bytes]:
    blob = await _redis.hget(_key(n), "rec")
    if blob is None:
        return Response(b'{"error":"no such key"}', status_code=404, media_type=JSON)
    record = _decoder.decode(blob)
    return Response(_reply(record, READ_BYTES), media_type=JSON)


@post("/ceiling/write/{n:int}", status_code=200)
async def write(n: int) -> Response[bytes]:
    key = _key(n)
    blob = await _redis.hget(key, "rec")
    if blob is None:
        return Response(b'{"error":"no such key"}', status_code=404, media_type=JSON)
    record = _decoder.decode(blob)
    version = record.state.version
    new = replace(record, state=replace(record.state, version=version + 1), updated_at=time.time())
    if not await _cas(keys=[key], args=[version, version + 1, _msgpack.encode(new)]):
        return Response(b'{"error":"version conflict"}', status_code=409, media_type=JSON)
    return Response(_reply(new, WRITE_BYTES), media_type=JSON)


_kept: dict[int, GameRecord] = {}


@post("/ceiling/kept/{n:int}", status_code=200)
async def write_kept(n: int) -> Response[bytes]:
    key = _key(n)
    record = _kept.get(n)
    for _ in range(2):
        if record is None:
            blob = await _redis.hget(key, "rec")
            if blob is None:
                return Response(b'{"error":"no such key"}', status_code=404, media_type=JSON)
            record = _decoder.decode(blob)
        version = record.state.version
        new = replace(
            record, state=replace(record.state, version=version + 1), updated_at=time.time()
        )
        if await _cas(keys=[key], args=[version, version + 1, _msgpack.encode(new)]):
            _kept[n] = new
            return Response(_reply(new, WRITE_BYTES), media_type=JSON)
        record = None
    return Response(b'{"error":"version conflict"}', status_code=409, media_type=JSON)


@get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


def _tune_process() -> None:
    """The same process tuning as the service (`TEN_GC_THRESHOLD`): the same server settings."""
    tune_gc(Settings.from_env().runtime.gc_threshold)


async def _close() -> None:
    await _redis.aclose()


app = Litestar(
    route_handlers=[read, write, write_kept, health],
    on_startup=[_tune_process],
    on_shutdown=[_close],
    openapi_config=None,
)
