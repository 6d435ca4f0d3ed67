"""The production game store on Redis (standalone, replicated or Cluster).

Keys of one game share the hash tag `{game:<id>}`, so every script touches one slot:
- `{game:<id>}`       hash: `v` (version) and `rec` (the msgpack-encoded GameRecord)
- `{game:<id>}:log`   stream: one entry per event, id `0-<seq>`, field `d` (the event JSON)
- `{game:<id>}:idem`  hash: Idempotency-Key -> the action's outcome (msgpack; entries of older
  releases hold the rendered answer, still read: `RenderedResponse`)
A save checks the version and writes state, events and idempotent response in one Lua
call (one round trip); every key expires together after the configured time. A save that
loses the race gets the stored record back from the same call, so the caller can retry on
it without another round trip.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import msgspec
from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster

from service.ports import (
    GameRecord,
    GameStore,
    IdempotentResponse,
    Remembered,
    RenderedResponse,
    Save,
    StoredEvent,
    StoreUnavailable,
    VersionConflict,
)

# Script arguments: ARGV[1] is a header of numbers, `"<version> <ttl ms> <seq> <length> ..."`
# (save: `"<expected version> <new version> <ttl ms> <seq> <length> ..."`), one `<seq>
# <length>` per event; ARGV[2] the record; ARGV[3] the events' data, concatenated. redis-py
# packs each argument in Python (a few microseconds each), so an action's save is 3 keys and
# 3 arguments (5 with an Idempotency-Key), whatever its number of events.
_EVENTS = """
local pos = 1
for seq, len in string.gmatch(events, ' (%d+) (%d+)') do
  local stop = pos + tonumber(len)
  redis.call('XADD', KEYS[2], '0-' .. seq, 'd', string.sub(ARGV[3], pos, stop - 1))
  pos = stop
end
"""

# A new game starts from a clean slate: a log or idempotency hash left by a vanished game
# of the same id (deleted or evicted state) would make XADD fail half-way or replay answers.
_CREATE = (
    """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local version, ttl, events = string.match(ARGV[1], '^(%d+) (%d+)(.*)$')
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'v', version, 'rec', ARGV[2])
"""
    + _EVENTS
    + """
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
"""
)

# 1 when saved; on a version conflict the stored record (0 when there is none). ARGV[4] and
# ARGV[5], when given, are an Idempotency-Key and the response to remember for it.
_SAVE = (
    """
local expected, version, ttl, events = string.match(ARGV[1], '^(%d+) (%d+) (%d+)(.*)$')
local v = redis.call('HGET', KEYS[1], 'v')
if v == false then return 0 end
if v ~= expected then return redis.call('HGET', KEYS[1], 'rec') end
redis.call('HSET', KEYS[1], 'v', version, 'rec', ARGV[2])
"""
    + _EVENTS
    + """
if ARGV[4] then
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return 1
"""
)

_BLOCK_MARGIN = 5.0  # seconds a blocking XREAD may take past its BLOCK time
_record_encoder = msgspec.msgpack.Encoder()
_record_decoder = msgspec.msgpack.Decoder(GameRecord)
_idem_decoder = msgspec.msgpack.Decoder(IdempotentResponse)
_rendered_decoder = msgspec.msgpack.Decoder(RenderedResponse)


def _decode_remembered(blob: bytes) -> Remembered:
    """An idempotent response; one a release before wrote (the rendered answer: status,
    body, version) decodes as that."""
    try:
        return _idem_decoder.decode(blob)
    except msgspec.ValidationError:
        return _rendered_decoder.decode(blob)


# The games in play, for the `ten_live_games` metric: a sorted set of game ids scored by
# when each was last seen stored. Written only when a game starts and when it finishes (not
# on every action: it is another hash slot, so it cannot join the save script on a Cluster);
# games that expired idle are found by `live_games`, which re-checks the entries it has not
# seen for RECHECK_SECONDS, at most RECHECK_BATCH of them per call.
LIVE_KEY = "ten:live-games"
RECHECK_SECONDS = 60
RECHECK_BATCH = 500
# Every game from its creation until a replica confirms it handed the finished game to the
# archive outbox (`archive_handed_over`), scored by when it was last looked at: what a
# process dying between a game's final save and that hand-off leaves behind
# (`unarchived`). Written with the live set's entry, in the same round trip.
UNARCHIVED_KEY = "ten:unarchived-games"


def _keys(game_id: str) -> tuple[str, str, str]:
    tag = f"{{game:{game_id}}}"
    return tag, f"{tag}:log", f"{tag}:idem"


# RedisClusterException: no node of the cluster could be reached (at start, or once the
# slots must be refreshed) -- not a ConnectionError in redis-py
_UNAVAILABLE = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    OSError,
    redis_errors.ClusterDownError,
    redis_errors.RedisClusterException,
)


class _UnavailableOnConnectionErrors:
    """`with unavailable_on_connection_errors():` Redis unreachable -> StoreUnavailable.
    A plain class, not @contextmanager: it wraps every store call (a generator-based one
    cost about 1.5 us each time)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is not None and isinstance(exc, _UNAVAILABLE):
            raise StoreUnavailable(str(exc)) from exc
        return False


_unavailable = _UnavailableOnConnectionErrors()


def unavailable_on_connection_errors() -> _UnavailableOnConnectionErrors:
    return _unavailable


def _header(numbers: str, events: Sequence[StoredEvent]) -> str:
    """ARGV[1] of the scripts: the numbers, then `<seq> <length>` of each event."""
    return numbers + "".join(f" {e.seq} {len(e.data)}" for e in events)


def _stream_events(entries) -> list[StoredEvent]:
    return [
        StoredEvent(int(entry_id.split(b"-", 1)[1]), fields[b"d"]) for entry_id, fields in entries
    ]


def connect(url: str, *, cluster: bool = False, max_connections: int = 200, **kwargs):
    """A Redis (or Redis Cluster) client; standalone, on a pool that waits for a free
    connection (5 s) rather than failing. The client owns its pool: `aclose()` closes both."""
    if cluster:
        return RedisCluster.from_url(url, max_connections=max_connections, **kwargs)
    kwargs.setdefault("timeout", 5)
    return Redis.from_pool(
        BlockingConnectionPool.from_url(url, max_connections=max_connections, **kwargs)
    )


class RedisGameStore(GameStore):
    def __init__(
        self,
        url: str,
        *,
        cluster: bool = False,
        max_connections: int = 200,
        live_key: str = LIVE_KEY,
        live_recheck: float = RECHECK_SECONDS,
        unarchived_key: str = UNARCHIVED_KEY,
    ) -> None:
        self._cluster = cluster
        self._live_key = live_key
        self._live_recheck = live_recheck
        self._unarchived_key = unarchived_key
        # SSE readers block on XREAD for up to TEN_SSE_KEEPALIVE seconds (15 by default):
        # redis-py's 5 s default socket timeout cut every idle stream after 5 s. Their client
        # has no read timeout; wait_events bounds each wait itself.
        no_read_timeout = {"socket_timeout": None, "socket_connect_timeout": 5}
        self._redis = connect(url, cluster=cluster, max_connections=max_connections)
        # SSE readers block on XREAD: their own pool, so they never starve actions
        self._blocking = connect(
            url, cluster=cluster, max_connections=max_connections * 4, **no_read_timeout
        )
        self._create = self._redis.register_script(_CREATE)
        self._save = self._redis.register_script(_SAVE)

    async def create(self, record: GameRecord, events: Sequence[StoredEvent], ttl: int) -> None:
        args = [
            _header(f"{record.version} {ttl * 1000}", events),
            _record_encoder.encode(record),
            b"".join(e.data for e in events),
        ]
        with unavailable_on_connection_errors():
            created = await self._create(keys=list(_keys(record.id)), args=args)
        if not created:
            raise VersionConflict(f"game {record.id} exists")
        now = time.time()
        pipe = self._pipeline()
        pipe.zadd(self._unarchived_key, {record.id: now})
        if record.state.phase != "finished":
            pipe.zadd(self._live_key, {record.id: now})
        with unavailable_on_connection_errors():
            await pipe.execute()

    def _pipeline(self):
        """One round trip for commands on keys of different slots (not a transaction)."""
        return self._redis.pipeline() if self._cluster else self._redis.pipeline(transaction=False)

    async def load(self, game_id: str) -> GameRecord | None:
        with unavailable_on_connection_errors():
            blob = await self._redis.hget(_keys(game_id)[0], "rec")
        return None if blob is None else _record_decoder.decode(blob)

    async def write(self, save: Save) -> None:
        record, expected_version, events, ttl, idempotency, _ = save
        args: list[bytes | str] = [
            _header(f"{expected_version} {record.version} {ttl * 1000}", events),
            _record_encoder.encode(record),
            b"".join(e.data for e in events),
        ]
        if idempotency is not None:
            args += (idempotency[0], _record_encoder.encode(idempotency[1]))
        with unavailable_on_connection_errors():
            saved = await self._save(keys=list(_keys(record.id)), args=args)
        if saved != 1:  # the stored record, or 0 when the game is gone
            current = _record_decoder.decode(saved) if isinstance(saved, bytes) else None
            raise VersionConflict(record.id, current=current)
        if record.state.phase == "finished":
            with unavailable_on_connection_errors():
                await self._redis.zrem(self._live_key, record.id)

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

    async def idempotent_response(self, game_id: str, key: str) -> Remembered | None:
        with unavailable_on_connection_errors():
            blob = await self._redis.hget(_keys(game_id)[2], key)
        return None if blob is None else _decode_remembered(blob)

    async def live_games(self) -> int:
        now = time.time()
        with unavailable_on_connection_errors():
            unseen = await self._redis.zrangebyscore(
                self._live_key, "-inf", now - self._live_recheck, start=0, num=RECHECK_BATCH
            )
            if unseen:
                ids = [member.decode() for member in unseen]
                pipe = self._pipeline()
                for game_id in ids:
                    pipe.exists(_keys(game_id)[0])
                exists = await pipe.execute()
                gone = [g for g, found in zip(ids, exists, strict=True) if not found]
                kept = {g: now for g, found in zip(ids, exists, strict=True) if found}
                if gone:
                    await self._redis.zrem(self._live_key, *gone)
                if kept:
                    await self._redis.zadd(self._live_key, kept, xx=True)
            return await self._redis.zcard(self._live_key)

    async def archive_handed_over(self, game_id: str) -> None:
        with unavailable_on_connection_errors():
            await self._redis.zrem(self._unarchived_key, game_id)

    async def unarchived(self, limit: int) -> list[GameRecord]:
        now = time.time()
        with unavailable_on_connection_errors():
            unseen = await self._redis.zrangebyscore(
                self._unarchived_key, "-inf", now - self._live_recheck, start=0, num=limit
            )
            if not unseen:
                return []
            ids = [member.decode() for member in unseen]
            pipe = self._pipeline()
            for game_id in ids:
                pipe.hget(_keys(game_id)[0], "rec")
            blobs = await pipe.execute()
            gone = [g for g, blob in zip(ids, blobs, strict=True) if blob is None]
            stored = [_record_decoder.decode(blob) for blob in blobs if blob is not None]
            if gone:  # expired: nothing left to archive
                await self._redis.zrem(self._unarchived_key, *gone)
            if stored:  # looked at again in a minute (a finished one, if still not handed over)
                seen = {record.id: now for record in stored}
                await self._redis.zadd(self._unarchived_key, seen, xx=True)
        return [record for record in stored if record.state.phase == "finished"]

    async def ping(self) -> None:
        with unavailable_on_connection_errors():
            await self._redis.ping()

    async def close(self) -> None:
        await self._redis.aclose()
        await self._blocking.aclose()
