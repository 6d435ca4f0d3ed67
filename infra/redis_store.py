"""The production game store on Redis (standalone, replicated or Cluster).

Keys of one game share the hash tag `{game:<id>}`, so every script touches one slot:
- `{game:<id>}`       hash: `v` (the record's stamp), `rec` (the msgpack-encoded GameRecord)
  and `r` (the relay cursor, `service.reactions.relay`: the last seq relayed; absent: none)
- `{game:<id>}:log`   stream: one entry per event, id `0-<seq>`, field `d` (the event JSON)
- `{game:<id>}:idem`  hash: idempotency entry (`service.core.idempotency.entry_key`) -> the outcome
  of the act, join or create that wrote it (msgpack; action entries of older releases hold
  the rendered answer, still read: `RenderedResponse`)
A create writes the game, its first events and its idempotent response, a save checks the
version and writes state, events and idempotent response, each in one Lua call (one round
trip, shared with the other loads, saves and creates of the same event-loop turn:
`infra.redis_batch`); every key expires together after the configured time. A save that
loses the race gets the stored record back from the same call, so the caller can retry on
it without another round trip.

Outside the games' slots (each key in its own slot, written in pipelines, never a scan):
- `ten:index:{<name>}` sorted set per listing (`GameRecord.indexes`: "open",
  "player:<id>"): member the game id, score its created_at. Kept in step by create and by
  the saves that change a game's listings (one more round trip, only then); entries of
  games that expired are dropped by `list_games` when it meets them. A host's listing
  ("host:<caller>") is never listed over the API.
- `ten:quota:{<kind>:<owner>}` sorted set per quota and owner (`service.core.quotas`, the
  scripts of `infra.quotas`): the items held, scored by when each was held.

The due index (`GameStore.due_games`), three keys under one hash tag (one slot: its
scripts run on a Cluster too):
- `{ten:due}`         sorted set: game id -> when it is due (unix seconds)
- `{ten:due}:stamp`   hash: game id -> the stamp (GameRecord.stamp) its entry was written from
- `{ten:due}:claims`  sorted set: game id -> when the claim of a poller lapses
Written by `_DUE_WRITE` (stamp-gated set or remove; before a create, and in the round trip
after a save that moved a game's due earlier or ended it, never otherwise), `_DUE_CLAIM` and
`_DUE_SETTLE`; read by one ZRANGE BYSCORE.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Mapping, Sequence

import msgspec
from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection, SSLConnection, parse_url
from redis.asyncio.sentinel import (
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
    SentinelManagedSSLConnection,
)

from infra.quotas import RedisQuotas
from infra.redis_batch import Batcher
from infra.store_rules import due_moved_earlier, listed, memberships
from service.core.model import GameRecord
from service.core.ports import (
    DueGame,
    GameExists,
    GameStore,
    IdempotentResponse,
    LogNews,
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
# packs each argument in Python, at a cost per argument, so an action's save is 3 keys and
# 3 arguments (5 with an Idempotency-Key), whatever its number of events.
# The last seq is published on the log's shard channel (the log key itself: same slot) to
# wake the processes following the game (`RedisGameStore.log_news`).
_EVENTS = """
local pos = 1
local last = nil
for seq, len in string.gmatch(events, ' (%d+) (%d+)') do
  local stop = pos + tonumber(len)
  redis.call('XADD', KEYS[2], '0-' .. seq, 'd', string.sub(ARGV[3], pos, stop - 1))
  pos = stop
  last = seq
end
if last then redis.call('SPUBLISH', KEYS[2], last) end
"""

# A new game starts from a clean slate: a log or idempotency hash left by a vanished game
# of the same id (deleted or evicted state) would make XADD fail half-way or replay answers.
# 1 when created; a game of that id stored: 0, or with ARGV[4] (an idempotency entry's key;
# ARGV[5] the response to remember under it) what that game remembers under it, if anything.
_CREATE = (
    """
if redis.call('EXISTS', KEYS[1]) == 1 then
  if ARGV[4] then return redis.call('HGET', KEYS[3], ARGV[4]) or 0 end
  return 0
end
local version, ttl, events = string.match(ARGV[1], '^(%d+) (%d+)(.*)$')
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'v', version, 'rec', ARGV[2])
"""
    + _EVENTS
    + """
if ARGV[4] then
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
  redis.call('PEXPIRE', KEYS[3], ttl)
end
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

# The due index. KEYS: the entries, their stamps, the claims. ARGV[1] the game id, ARGV[2]
# the stamp written from, ARGV[3] when it is due ("": remove the entry and its claim). An
# entry holding a newer stamp is left as it is (0 returned).
_DUE_ENTRY = """
local held = redis.call('HGET', KEYS[2], ARGV[1])
if held and tonumber(held) > tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  return 1
end
"""

# ARGV[4] "LT": never move the entry later (a create: it may not overwrite a game's entry)
_DUE_WRITE = (
    _DUE_ENTRY
    + """
if ARGV[4] == 'LT' then
  redis.call('ZADD', KEYS[1], 'LT', ARGV[3], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""
)

# The claim is released whatever happens; ARGV[2] "": the game is gone, the entry goes.
_DUE_SETTLE = (
    """
redis.call('ZREM', KEYS[3], ARGV[1])
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
"""
    + _DUE_ENTRY
    + """
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""
)

# KEYS: the entries, the claims. ARGV: the game id, now, the lease's end. 1: claimed.
# The due entries not under a live claim, earliest first (pages of `limit`, at most 10):
# the replicas' pollers then spread the due games instead of all reading the same first batch.
_DUE_UNCLAIMED = """
local now, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for page = 0, 9 do
  local found = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT',
                           page * limit, limit, 'WITHSCORES')
  for i = 1, #found, 2 do
    local lease = redis.call('ZSCORE', KEYS[2], found[i])
    if not lease or tonumber(lease) <= now then
      out[#out + 1] = found[i]
      out[#out + 1] = found[i + 1]
      if #out >= 2 * limit then return out end
    end
  end
  if #found < 2 * limit then return out end
end
return out
"""

_DUE_CLAIM = """
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at or tonumber(at) > tonumber(ARGV[2]) then return 0 end
local held = redis.call('ZSCORE', KEYS[2], ARGV[1])
if held and tonumber(held) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
"""

# Reading a log: its entries as one msgpack array of `[seq, data]` (the StoredEvents, data
# as msgpack bin: any bytes), built by the script, so that msgspec decodes the whole reply
# at once; XRANGE's own reply is five objects per event for redis-py to build and walk (a
# finished game's whole log is hundreds of events). Lua's cmsgpack writes
# strings as msgpack str (UTF-8 only), hence the bin headers written here (struct).
_PACK = """
local function sized(n, byte1, byte2, byte4)  -- a type byte then the length: 1, 2, 4 bytes
  if n < 256 and byte1 then return struct.pack('>BB', byte1, n) end
  if n < 65536 then return struct.pack('>BI2', byte2, n) end
  return struct.pack('>BI4', byte4, n)
end
local function packed(entries)
  local out = {#entries < 16 and string.char(0x90 + #entries) or sized(#entries, nil, 0xdc, 0xdd)}
  for i, entry in ipairs(entries) do
    local data = entry[2][2]
    local seq = cmsgpack.pack(tonumber(string.sub(entry[1], 3)))
    out[i + 1] = '\\146' .. seq .. sized(#data, 0xc4, 0xc5, 0xc6) .. data  -- [seq, bin]
  end
  return table.concat(out)
end
"""

# KEYS: the log. ARGV: after (seq), limit.
_LOG_READ = (
    _PACK
    + """
return packed(redis.call('XRANGE', KEYS[1], '(0-' .. ARGV[1], '+', 'COUNT', ARGV[2]))
"""
)

# The relay (service.reactions.relay): the game and its log past the relay cursor, field `r` of the
# game's hash (absent: 0), in one call; the cursor moved forward only, never on a game gone.
_RELAY_READ = (
    _PACK
    + """
local rec = redis.call('HGET', KEYS[1], 'rec')
if not rec then return false end
local cursor = redis.call('HGET', KEYS[1], 'r') or '0'
return {rec, packed(redis.call('XRANGE', KEYS[2], '(0-' .. cursor, '+'))}
"""
)

_RELAYED = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local held = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
if tonumber(ARGV[1]) > held then redis.call('HSET', KEYS[1], 'r', ARGV[1]) end
return 1
"""

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
INDEX_PREFIX = "ten:index:"
DUE_TAG = "ten:due"  # the due index's hash tag: `{ten:due}`, `{ten:due}:stamp`, ...
# list_games: entries read per ZRANGE at most, and ZRANGE calls per page at most (each
# round drops the stale entries it met, so a later page does not meet them again)
_LIST_BATCH = 500
_LIST_ROUNDS = 32


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
    A plain class, not @contextmanager: it wraps every store call, and a generator-based
    one costs more each time."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is not None and _unreachable(exc):
            raise StoreUnavailable(str(exc)) from exc
        return False


def _unreachable(exc: BaseException) -> bool:
    return isinstance(exc, _UNAVAILABLE) or _closed_transport(exc)


def _closed_transport(exc: BaseException) -> bool:
    """uvloop (uvicorn's loop) refuses a write on a connection the server has closed with a
    RuntimeError ("unable to perform operation on <TCPTransport closed=True ...>; the handler
    is closed"), which redis-py lets through when it happens as a connection opens: Redis
    shutting down closes the connections it has just accepted."""
    return isinstance(exc, RuntimeError) and "the handler is closed" in str(exc)


_unavailable = _UnavailableOnConnectionErrors()


def replicated(acked: int, wait: tuple[int, int]) -> None:
    """WAIT's answer `acked` for a write that wants `wait` = (replicas, timeout ms): one the
    replicas did not confirm in time is not acknowledged: StoreUnavailable (503, as when the
    primary cannot be reached: the client retries with the same Idempotency-Key). It may
    still be on the primary, and kept if the primary lives."""
    wanted, timeout_ms = wait
    if wanted and acked < wanted:
        raise StoreUnavailable(
            f"the save reached {acked} of {wanted} replica(s) in {timeout_ms} ms"
        )


def unavailable_on_connection_errors() -> _UnavailableOnConnectionErrors:
    return _unavailable


def _header(numbers: str, events: Sequence[StoredEvent]) -> str:
    """ARGV[1] of the scripts: the numbers, then `<seq> <length>` of each event."""
    return numbers + "".join(f" {e.seq} {len(e.data)}" for e in events)


def _stream_events(entries) -> list[StoredEvent]:
    return [
        StoredEvent(int(entry_id.split(b"-", 1)[1]), fields[b"d"]) for entry_id, fields in entries
    ]


_packed_decoder = msgspec.msgpack.Decoder(list[StoredEvent])


def _unpacked(packed: bytes) -> list[StoredEvent]:
    """The events of a log read packed (`_PACK`)."""
    return _packed_decoder.decode(packed)


class _Scan:
    """Where a listing's reading is, newest first: ZRANGE from score `bound` down, after
    `offset` entries of that very score already read (equal scores come by id, descending).
    At the start, the cursor's own score: its entries of ids not below the cursor's are
    read there and passed over, so a page starts strictly after (created_at, id)."""

    def __init__(self, before: tuple[float, str] | None) -> None:
        self.before = before
        self.bound: float | str = "+inf" if before is None else before[0]
        self.offset = 0

    def after_cursor(self, entries: list[tuple[bytes, float]]) -> list[tuple[str, float]]:
        """The entries just read that come after the cursor; moves the scan past them all."""
        found = []
        for member, score in entries:
            game_id = member.decode()
            if score == self.bound:
                self.offset += 1
            else:
                self.bound, self.offset = score, 1
            if self.before is None or (score, game_id) < self.before:
                found.append((game_id, score))
        return found


def connect(
    url: str,
    *,
    cluster: bool = False,
    sentinels: Sequence[tuple[str, int]] = (),
    master: str = "mymaster",
    max_connections: int = 200,
    **kwargs,
):
    """A Redis client: on a Redis Cluster (`cluster`), on the primary that `sentinels` name
    as `master` (Redis Sentinel: the URL gives only the database and the credentials; the
    client asks the sentinels again after a failover), else on the URL's server. Standalone
    and through sentinels, on a pool that waits for a free connection (5 s) rather than
    failing. The client owns its pool: `aclose()` closes both."""
    if cluster:
        return RedisCluster.from_url(url, max_connections=max_connections, **kwargs)
    kwargs.setdefault("timeout", 5)
    kwargs.setdefault("health_check_interval", HEALTH_CHECK_SECONDS)
    ssl = url.lower().startswith("rediss://")
    if sentinels:
        options = parse_url(url)
        options.pop("host", None)
        options.pop("port", None)
        options.pop("connection_class", None)
        options["connection_class"] = _SentinelSSLConnection if ssl else _SentinelConnection
        options.update(kwargs)
        sentinel = Sentinel(
            list(sentinels),
            # a sentinel that is down is passed over after this long, not the pool's 5 s
            sentinel_kwargs={"socket_timeout": 1.0, "socket_connect_timeout": 1.0},
        )
        return sentinel.master_for(
            master,
            connection_pool_class=_SentinelBlockingPool,
            max_connections=max_connections,
            **options,
        )
    kwargs["connection_class"] = _SSLConnection if ssl else _Connection
    return Redis.from_pool(
        BlockingConnectionPool.from_url(url, max_connections=max_connections, **kwargs)
    )


# A pooled connection idle this long is PINGed before its next command (redis-py's health
# check): one that Redis closed meanwhile (a restart, a failover) is found then, not by the
# command, which would fail (a 503) with "Connection closed by server."
HEALTH_CHECK_SECONDS = 1.0


class _Rechecked:
    """A connection whose failed health check opens a new connection and PINGs once more.
    Only the PING is sent again: redis-py's retries (none here) would send a command again,
    and a save whose reply was lost might then be applied twice."""

    async def check_health(self) -> None:
        if (
            self.health_check_interval
            and asyncio.get_running_loop().time() > self.next_health_check
        ):
            try:
                await self._send_ping()
            except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as error:
                await self._ping_failed(error, 1)
                await self._send_ping()  # on a new connection (sending connects)


class _Connection(_Rechecked, Connection):
    pass


class _SSLConnection(_Rechecked, SSLConnection):
    pass


class _SentinelConnection(_Rechecked, SentinelManagedConnection):
    pass


class _SentinelSSLConnection(_Rechecked, SentinelManagedSSLConnection):
    pass


class _SentinelBlockingPool(SentinelConnectionPool, BlockingConnectionPool):
    """redis-py's Sentinel pool (connections to whichever server the sentinels name as the
    primary) that waits for a free connection, as the standalone one does."""


class RedisGameStore(GameStore):
    def __init__(
        self,
        url: str,
        *,
        cluster: bool = False,
        sentinels: Sequence[tuple[str, int]] = (),
        master: str = "mymaster",
        wait_replicas: int = 0,
        wait_timeout: float = 1.0,
        max_connections: int = 200,
        live_key: str = LIVE_KEY,
        live_recheck: float = RECHECK_SECONDS,
        index_prefix: str = INDEX_PREFIX,
        due_tag: str = DUE_TAG,
    ) -> None:
        if wait_replicas and cluster:
            raise ValueError("waiting for replicas (WAIT) is not supported on a Redis Cluster")
        self._cluster = cluster
        self._url = url
        self._sentinels = (sentinels, master)
        # a save is acknowledged once this many replicas have it (0: once the primary has it)
        self._wait = (wait_replicas, int(wait_timeout * 1000))
        self._live_key = live_key
        self._live_recheck = live_recheck
        self._index_prefix = index_prefix
        due = f"{{{due_tag}}}"
        self._due_keys = [due, f"{due}:stamp", f"{due}:claims"]
        # event streams cost no connection of their own: a process's one reader subscribes
        # to its watched games' logs on one Pub/Sub connection (one per Cluster node)
        self._redis = connect(
            url,
            cluster=cluster,
            sentinels=sentinels,
            master=master,
            max_connections=max_connections,
        )
        self._create = self._redis.register_script(_CREATE)
        self._save = self._redis.register_script(_SAVE)
        self._due_write = self._redis.register_script(_DUE_WRITE)
        self._due_claim = self._redis.register_script(_DUE_CLAIM)
        self._due_unclaimed = self._redis.register_script(_DUE_UNCLAIMED)
        self._due_settle = self._redis.register_script(_DUE_SETTLE)
        self._relay_read = self._redis.register_script(_RELAY_READ)
        self._log_read = self._redis.register_script(_LOG_READ)
        self._relayed = self._redis.register_script(_RELAYED)
        self._quotas = RedisQuotas(self._redis)
        # the hot commands (a game's load, save and create, an idempotency entry's read)
        # of one event-loop turn go in one pipeline
        self._batch = Batcher(self._pipeline, _unreachable, wait=self._wait)

    async def _script(self, script, keys: list[str], args: list, *, replicated: bool = False):
        """A registered script's EVALSHA, queued in this turn's pipeline (`Batcher`); one
        Redis lost (a restart) is loaded and run again alone. `replicated`: `(reply,
        replicas that confirmed it)`."""
        try:
            return await self._batch.call(
                "EVALSHA", script.sha, len(keys), *keys, *args, replicated=replicated
            )
        except redis_errors.NoScriptError:
            reply = await script(keys=keys, args=args)
            if not replicated:
                return reply
            await self._replicas_caught_up()
            return reply, self._wait[0]

    def _index_key(self, index: str) -> str:
        """One listing's sorted set: its name is its hash tag (one slot, any node)."""
        return f"{self._index_prefix}{{{index}}}"

    async def open(self) -> None:
        """On a Cluster, learn its nodes and slots now. redis-py 8.1 discovers them on the
        first command; many first commands at once can make it rediscover them and close the
        connections the others are opening (AttributeError: 'NoneType' object has no
        attribute 'writelines', seen with many concurrent claims on a fresh client)."""
        if self._cluster:
            with unavailable_on_connection_errors():
                await self._redis.initialize()

    async def create(
        self,
        record: GameRecord,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
    ) -> None:
        if record.due is not None:  # first: a stored game always has its entry (LT: a
            # create over a game of the same id, refused below, never delays that one's)
            with unavailable_on_connection_errors():
                await self._due_write(
                    keys=self._due_keys, args=[record.id, record.stamp, record.due, "LT"]
                )
        args = [
            _header(f"{record.stamp} {ttl * 1000}", events),
            _record_encoder.encode(record),
            b"".join(e.data for e in events),
        ]
        if idempotency is not None:
            args += (idempotency[0], _record_encoder.encode(idempotency[1]))
        with unavailable_on_connection_errors():
            created = await self._script(self._create, list(_keys(record.id)), args)
        if created != 1:  # taken: 0, or what that game remembers under the entry's key
            remembered = _decode_remembered(created) if isinstance(created, bytes) else None
            if remembered is not None and self._wait[0]:
                await self._replicas_caught_up()
            raise GameExists(record.id, remembered=remembered)
        now = time.time()
        pipe = self._pipeline()
        if not record.ended:
            pipe.zadd(self._live_key, {record.id: now})
        for index in record.indexes():
            pipe.zadd(self._index_key(index), {record.id: record.created_at})
        self._wait_in(pipe)
        with unavailable_on_connection_errors():
            self._replicated(await pipe.execute())

    def _wait_in(self, pipe) -> None:
        """WAIT, last in a pipeline: it returns once the replicas have every write before it
        (those of other connections too: replication is one stream)."""
        if self._wait[0]:
            pipe.execute_command("WAIT", *self._wait)

    def _replicated(self, results: list) -> None:
        """A save the replicas did not confirm in time is not acknowledged (`replicated`)."""
        if self._wait[0]:  # else no WAIT in the pipeline (it may be empty: a game ended)
            replicated(results[-1], self._wait)

    def _pipeline(self):
        """One round trip for commands on keys of different slots (not a transaction)."""
        return self._redis.pipeline() if self._cluster else self._redis.pipeline(transaction=False)

    async def load(self, game_id: str) -> GameRecord | None:
        with unavailable_on_connection_errors():
            blob = await self._batch.call("HGET", _keys(game_id)[0], "rec")
        return None if blob is None else _record_decoder.decode(blob)

    async def write(self, save: Save) -> None:
        record, expected_stamp, events, ttl, idempotency, previous = save
        args: list[bytes | str] = [
            _header(f"{expected_stamp} {record.stamp} {ttl * 1000}", events),
            _record_encoder.encode(record),
            b"".join(e.data for e in events),
        ]
        if idempotency is not None:
            args += (idempotency[0], _record_encoder.encode(idempotency[1]))
        ended = record.ended
        left, joined = memberships(record, previous)
        due = ended or due_moved_earlier(record, previous)
        after = due or left or joined  # else no other round trip (an action, most of the time)
        wait = bool(self._wait[0]) and not after  # else the WAIT ends the round trip after
        with unavailable_on_connection_errors():
            saved = await self._script(self._save, list(_keys(record.id)), args, replicated=wait)
        if wait:
            saved, replicas = saved
        if saved != 1:  # the stored record, or 0 when the game is gone
            current = _record_decoder.decode(saved) if isinstance(saved, bytes) else None
            raise VersionConflict(record.id, current=current)
        if wait:
            self._replicated([replicas])
        if after:
            await self._after_save(record, ended, left, joined, due=due)

    async def _after_save(
        self, record: GameRecord, ended: bool, left: set[str], joined: set[str], *, due: bool
    ) -> None:
        """The other slots a save changes, in one round trip: the game's due entry (its
        due, or removed once ended), the live set, listings."""
        pipe = self._pipeline()
        due_args = [record.id, record.stamp, "" if ended else record.due, ""]
        if due:  # EVALSHA first, sent as is: a pipeline of a registered script would ask
            # SCRIPT EXISTS first, and redis-py's cluster pipeline refuses `evalsha()` (a
            # script may touch several slots; this one touches one)
            keys = self._due_keys
            pipe.execute_command("EVALSHA", self._due_write.sha, len(keys), *keys, *due_args)
        if ended:
            pipe.zrem(self._live_key, record.id)
        for index in left:
            pipe.zrem(self._index_key(index), record.id)
        for index in joined:
            pipe.zadd(self._index_key(index), {record.id: record.created_at})
        self._wait_in(pipe)
        with unavailable_on_connection_errors():
            results = await pipe.execute(raise_on_error=False)
            if due and isinstance(results[0], redis_errors.NoScriptError):  # Redis restarted
                results[0] = await self._due_write(keys=self._due_keys, args=due_args)
            failed = [result for result in results if isinstance(result, Exception)]
            if failed:
                raise failed[0]
            self._replicated(results)

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        if limit <= 0:
            return []  # redis-py refuses COUNT 0 (raw DataError); Redis would read it as "all"
        with unavailable_on_connection_errors():
            packed = await self._log_read(keys=[_keys(game_id)[1]], args=[max(after, 0), limit])
        return _unpacked(packed)

    async def events_of(self, after: Mapping[str, int], limit: int) -> dict[str, list[StoredEvent]]:
        if not after or limit <= 0:
            return {}
        ids = list(after)
        pipe = self._pipeline()
        for game_id in ids:
            pipe.xrange(_keys(game_id)[1], min=f"(0-{max(after[game_id], 0)}", max="+", count=limit)
        with unavailable_on_connection_errors():
            found = await pipe.execute()
        return {
            g: _stream_events(entries) for g, entries in zip(ids, found, strict=True) if entries
        }

    def log_news(self) -> LogNews:
        if self._cluster:  # ClusterPubSub: a connection of its own per node, from the nodes'
            return _RedisNews(self._redis, cluster=True)
        # standalone: a client of its own, so the subscriber never starts on a pooled
        # connection that a Redis restart left dead (it would fail at once, and every
        # stream of the process with it); closed with the subscriber
        sentinels, master = self._sentinels
        if sentinels:  # whichever server the sentinels name as the primary, after a failover too
            client = connect(self._url, sentinels=sentinels, master=master, max_connections=4)
        else:
            client = Redis.from_url(self._url, socket_connect_timeout=5)
        return _RedisNews(client, cluster=False)

    async def idempotent_response(self, game_id: str, key: str) -> Remembered | None:
        with unavailable_on_connection_errors():
            blob = await self._batch.call("HGET", _keys(game_id)[2], key)
        if blob is None:
            return None
        if self._wait[0]:  # a replay: of a write that may be one the replicas never confirmed
            await self._replicas_caught_up()
        return _decode_remembered(blob)

    async def _replicas_caught_up(self) -> None:
        """WAIT for every write the primary has taken so far. WAIT waits for the connection's
        own last write, so one is made first (a counter of its own, in no game's slot)."""
        with unavailable_on_connection_errors():
            async with self._redis.client() as connection:
                await connection.incr(WAIT_MARK)
                self._replicated([await connection.execute_command("WAIT", *self._wait)])

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

    async def relay_read(self, game_id: str) -> tuple[GameRecord | None, list[StoredEvent]]:
        with unavailable_on_connection_errors():
            found = await self._script(self._relay_read, list(_keys(game_id)[:2]), [])
        if not found:
            return None, []
        blob, packed = found
        return _record_decoder.decode(blob), _unpacked(packed)

    async def relayed(self, game_id: str, seq: int) -> None:
        with unavailable_on_connection_errors():
            await self._script(self._relayed, [_keys(game_id)[0]], [seq])

    async def list_games(
        self, index: str, before: tuple[float, str] | None, limit: int
    ) -> list[GameRecord]:
        """Newest first: ZRANGE BYSCORE REV from the cursor's score (O(log n + read)); the
        entries of that very score not after the cursor's id are passed over (`_Scan`);
        the games of the entries read are fetched in one pipeline; entries whose game
        expired or left the listing are dropped (ZREM) and more are read in their place."""
        key = self._index_key(index)
        scan = _Scan(before)
        found: list[GameRecord] = []
        dropped: list[str] = []
        batch = limit if before is None else limit + 1  # the cursor's game, passed over
        with unavailable_on_connection_errors():
            for _ in range(_LIST_ROUNDS):
                want = limit - len(found)
                if want <= 0:
                    break
                batch = min(batch, _LIST_BATCH)
                entries = await self._redis.zrange(
                    key, scan.bound, "-inf", desc=True, byscore=True,
                    offset=scan.offset, num=batch, withscores=True,
                )  # fmt: skip
                kept, stale = await self._listed(index, scan.after_cursor(entries))
                found += kept[:want]
                dropped += stale
                if len(entries) < batch:
                    break  # the listing is read to its end
                batch *= 2  # entries were stale: read further at once
            if dropped:  # once read through: the offsets of the scan stay right
                await self._redis.zrem(key, *dropped)
        return found

    # -- QuotaStore: on this store's Redis (`infra.quotas`)
    async def hold(self, key: str, item: str, score: float, limit: int, ttl: int) -> float | None:
        with unavailable_on_connection_errors():
            return await self._quotas.hold(key, item, score, limit, ttl)

    async def held(self, key: str) -> list[tuple[str, float]]:
        with unavailable_on_connection_errors():
            return await self._quotas.held(key)

    async def drop(self, key: str, entries: Sequence[tuple[str, float]]) -> None:
        with unavailable_on_connection_errors():
            await self._quotas.drop(key, entries)

    async def _listed(
        self, index: str, entries: list[tuple[str, float]]
    ) -> tuple[list[GameRecord], list[str]]:
        """The games of a listing's entries still in it, and the entries to drop."""
        if not entries:
            return [], []
        pipe = self._pipeline()
        for game_id, _ in entries:
            pipe.hget(_keys(game_id)[0], "rec")
        blobs = await pipe.execute()
        kept, stale = [], []
        for (game_id, created_at), blob in zip(entries, blobs, strict=True):
            record = None if blob is None else _record_decoder.decode(blob)
            if record is not None and listed(record, index, created_at):
                kept.append(record)
            else:
                stale.append(game_id)
        return kept, stale

    async def due_games(self, now: float, limit: int) -> list[DueGame]:
        if limit <= 0:
            return []
        keys = [self._due_keys[0], self._due_keys[2]]
        with unavailable_on_connection_errors():
            found = await self._due_unclaimed(keys=keys, args=[now, limit])
        return [DueGame(found[i].decode(), float(found[i + 1])) for i in range(0, len(found), 2)]

    async def claim_due(self, game_id: str, now: float, lease: float) -> bool:
        keys = [self._due_keys[0], self._due_keys[2]]
        with unavailable_on_connection_errors():
            return await self._due_claim(keys=keys, args=[game_id, now, now + lease]) == 1

    async def settle_due(self, game_id: str, due: float | None, stamp: int | None) -> None:
        args = [game_id, "", ""] if stamp is None else [game_id, stamp, "" if due is None else due]
        with unavailable_on_connection_errors():
            await self._due_settle(keys=self._due_keys, args=args)

    async def ping(self) -> None:
        with unavailable_on_connection_errors():
            await self._redis.ping()

    async def close(self) -> None:
        await self._batch.close()
        await self._redis.aclose()


WAIT_MARK = "ten:wait-mark"  # written before a WAIT that confirms earlier writes (a replay)
_READ_SECONDS = 1.0  # one wait of a Pub/Sub read (a reader task checks for closing between two)
_LOG_CHANNEL = re.compile(rb"^\{game:(.+)\}:log$")


class _RedisNews:
    """`LogNews` on Redis: sharded Pub/Sub. The save scripts SPUBLISH the last seq on the
    log key's shard channel; this subscriber SSUBSCRIBEs to the logs of the watched games.
    Standalone, one connection (redis-py's PubSub); on a Cluster, redis-py's ClusterPubSub
    keeps one per node holding a watched game's slot, follows slot moves and subscribes again
    after a reconnection. One reader task per connection turns its messages into reports: a
    subscription confirmed (the first, and again after a reconnection) or a publish."""

    def __init__(self, client, *, cluster: bool) -> None:
        self._cluster = cluster
        self._client = client
        self._pubsub = client.pubsub()
        self._changes: dict[str, bool] = {}  # game id -> watch (True) or unwatch, to send
        self._applying: asyncio.Task | None = None
        self._readers: dict[str, asyncio.Task] = {}  # connection (node name; "" standalone)
        self._reported: set[str] = set()
        self._woken = asyncio.Event()
        self._failure: StoreUnavailable | None = None

    def watch(self, game_id: str) -> None:
        self._change(game_id, True)

    def unwatch(self, game_id: str) -> None:
        self._change(game_id, False)

    def _change(self, game_id: str, on: bool) -> None:
        self._changes[game_id] = on
        if self._applying is None or self._applying.done():
            self._applying = asyncio.create_task(self._guarded(self._apply()))

    async def _apply(self) -> None:
        """Send the (un)subscriptions asked for (sending only: the confirmations come to the
        readers), then start a reader for each connection that has none yet."""
        while self._changes:
            game_id, on = self._changes.popitem()
            channel = _keys(game_id)[1]
            if on:
                await self._pubsub.ssubscribe(channel)
            else:
                await self._pubsub.sunsubscribe(channel)
            self._start_readers()

    def _start_readers(self) -> None:
        names = list(self._pubsub.node_pubsub_mapping) if self._cluster else [""]
        for name in names:
            if name not in self._readers or self._readers[name].done():
                reader = self._guarded(self._read(name))
                self._readers[name] = asyncio.create_task(reader)

    async def _read(self, name: str) -> None:
        node = self._client.get_node(node_name=name) if self._cluster else None
        while not self._cluster or name in self._pubsub.node_pubsub_mapping:
            if self._cluster:
                message = await self._pubsub.get_sharded_message(
                    target_node=node, timeout=_READ_SECONDS
                )
            else:
                message = await self._pubsub.get_message(timeout=_READ_SECONDS)
            if message is None or message["type"] not in ("smessage", "ssubscribe"):
                continue
            found = _LOG_CHANNEL.match(message["channel"])
            if found:
                self._reported.add(found.group(1).decode())
                self._woken.set()

    async def _guarded(self, work) -> None:
        """Run a task of this subscriber; the store unreachable ends the subscriber."""
        try:
            with unavailable_on_connection_errors():
                await work
        except StoreUnavailable as exc:
            self._failure = exc
            self._woken.set()

    async def next(self, timeout: float) -> set[str]:
        if not self._reported and self._failure is None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._woken.wait()
        self._woken.clear()
        if self._failure is not None:
            raise self._failure
        found, self._reported = self._reported, set()
        return found

    async def close(self) -> None:
        tasks = [*self._readers.values(), *([self._applying] if self._applying else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):  # closing what may be broken already
            await self._pubsub.aclose()
            if not self._cluster:
                await self._client.aclose()
