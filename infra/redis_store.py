"""The production game store on Redis (standalone, replicated or Cluster).

Keys of one game share the hash tag `{game:<id>}`, so every script touches one slot:
- `{game:<id>}`       hash: `v` (version) and `rec` (the msgpack-encoded GameRecord)
- `{game:<id>}:log`   stream: one entry per event, id `0-<seq>`, field `d` (the event JSON)
- `{game:<id>}:idem`  hash: Idempotency-Key -> the first response (msgpack)
A save checks the version and writes state, events and idempotent response in one Lua
call (one round trip); every key expires together after the configured time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import contextmanager

import msgspec
from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster

from service.ports import (
    GameRecord,
    IdempotentResponse,
    StoredEvent,
    StoreUnavailable,
    VersionConflict,
)

# A new game starts from a clean slate: a log or idempotency hash left by a vanished game
# of the same id (deleted or evicted state) would make XADD fail half-way or replay answers.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'rec', ARGV[2])
for i = 4, #ARGV, 2 do
  redis.call('XADD', KEYS[2], '0-' .. ARGV[i], 'd', ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""

_SAVE = """
local v = redis.call('HGET', KEYS[1], 'v')
if v == false or v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'rec', ARGV[3])
for i = 7, #ARGV, 2 do
  redis.call('XADD', KEYS[2], '0-' .. ARGV[i], 'd', ARGV[i + 1])
end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[5], ARGV[6])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1
"""

_BLOCK_MARGIN = 5.0  # seconds a blocking XREAD may take past its BLOCK time
_record_encoder = msgspec.msgpack.Encoder()
_record_decoder = msgspec.msgpack.Decoder(GameRecord)
_idem_decoder = msgspec.msgpack.Decoder(IdempotentResponse)


def _keys(game_id: str) -> tuple[str, str, str]:
    tag = f"{{game:{game_id}}}"
    return tag, f"{tag}:log", f"{tag}:idem"


@contextmanager
def unavailable_on_connection_errors():
    try:
        yield
    except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
        raise StoreUnavailable(str(exc)) from exc
    except (redis_errors.ClusterDownError, redis_errors.RedisClusterException) as exc:
        # RedisClusterException: no node of the cluster could be reached (at start, or once
        # the slots must be refreshed) -- not a ConnectionError in redis-py
        raise StoreUnavailable(str(exc)) from exc


def _stream_events(entries) -> list[StoredEvent]:
    return [
        StoredEvent(int(entry_id.split(b"-", 1)[1]), fields[b"d"]) for entry_id, fields in entries
    ]


class RedisGameStore:
    def __init__(self, url: str, *, cluster: bool = False, max_connections: int = 200) -> None:
        self._cluster = cluster
        # SSE readers block on XREAD for up to TEN_SSE_KEEPALIVE seconds (15 by default):
        # redis-py's 5 s default socket timeout cut every idle stream after 5 s. Their client
        # has no read timeout; wait_events bounds each wait itself.
        no_read_timeout = {"socket_timeout": None, "socket_connect_timeout": 5}
        if cluster:
            self._redis = RedisCluster.from_url(url, max_connections=max_connections)
            self._blocking = RedisCluster.from_url(
                url, max_connections=max_connections, **no_read_timeout
            )
        else:
            # from_pool: the client owns its pool, so close() also closes the connections
            self._redis = Redis.from_pool(
                BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=5)
            )
            # SSE readers block on XREAD: their own pool, so they never starve actions
            self._blocking = Redis.from_pool(
                BlockingConnectionPool.from_url(
                    url, max_connections=max_connections * 4, timeout=5, **no_read_timeout
                )
            )
        self._create = self._redis.register_script(_CREATE)
        self._save = self._redis.register_script(_SAVE)

    @property
    def client(self):
        return self._redis

    async def create(self, record: GameRecord, events: Sequence[StoredEvent], ttl: int) -> None:
        args: list[bytes | int | str] = [record.version, _record_encoder.encode(record), ttl * 1000]
        for event in events:
            args.extend((event.seq, event.data))
        with unavailable_on_connection_errors():
            created = await self._create(keys=list(_keys(record.id)), args=args)
        if not created:
            raise VersionConflict(f"game {record.id} exists")

    async def load(self, game_id: str) -> GameRecord | None:
        with unavailable_on_connection_errors():
            blob = await self._redis.hget(_keys(game_id)[0], "rec")
        return None if blob is None else _record_decoder.decode(blob)

    async def save(
        self,
        record: GameRecord,
        expected_version: int,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
    ) -> None:
        key, response = idempotency if idempotency is not None else ("", None)
        args: list[bytes | int | str] = [
            expected_version,
            record.version,
            _record_encoder.encode(record),
            ttl * 1000,
            key,
            b"" if response is None else _record_encoder.encode(response),
        ]
        for event in events:
            args.extend((event.seq, event.data))
        with unavailable_on_connection_errors():
            saved = await self._save(keys=list(_keys(record.id)), args=args)
        if not saved:
            raise VersionConflict(record.id)

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        if limit <= 0:
            return []  # redis-py refuses COUNT 0 (raw DataError); Redis would read it as "all"
        with unavailable_on_connection_errors():
            entries = await self._redis.xrange(
                _keys(game_id)[1], min=f"(0-{max(after, 0)}", max="+", count=limit
            )
        return _stream_events(entries)

    async def wait_events(self, game_id: str, after: int, timeout: float) -> list[StoredEvent]:
        log_key = _keys(game_id)[1]
        with unavailable_on_connection_errors():  # TimeoutError is an OSError
            found = await asyncio.wait_for(
                self._blocking.xread(
                    {log_key: f"0-{max(after, 0)}"}, count=1000, block=max(int(timeout * 1000), 1)
                ),
                timeout + _BLOCK_MARGIN,  # a Redis that stopped answering (frozen, partition)
            )
        if not found:
            return []
        return _stream_events(found[0][1])

    async def idempotent_response(self, game_id: str, key: str) -> IdempotentResponse | None:
        with unavailable_on_connection_errors():
            blob = await self._redis.hget(_keys(game_id)[2], key)
        return None if blob is None else _idem_decoder.decode(blob)

    async def ping(self) -> None:
        with unavailable_on_connection_errors():
            await self._redis.ping()

    async def close(self) -> None:
        await self._redis.aclose()
        await self._blocking.aclose()

    async def memory_usage(self, game_id: str) -> tuple[int, int]:
        """Bytes the game's state and event log take in Redis (for benchmarks)."""
        state_key, log_key, _ = _keys(game_id)
        with unavailable_on_connection_errors():
            state = await self._redis.memory_usage(state_key, samples=0) or 0
            log = await self._redis.memory_usage(log_key, samples=0) or 0
        return state, log
