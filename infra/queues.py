"""The leased queues of `service.jobs.worker` (`LeasedQueue`).

- `MemoryQueue`: the embedded default (one process; lost with it, like its games).
- `RedisQueue`: shared by every replica, durable as the Redis server is. The keys of one
  queue share the hash tag `{ten:q:<name>}` (one slot: every script runs on a Cluster):
  - `{ten:q:<name>}:jobs`  hash: job id -> payload
  - `{ten:q:<name>}:due`   sorted set: job id -> when it is next due (unix seconds); while
    claimed, when the claim's lease ends
  - `{ten:q:<name>}:token` hash: job id -> its latest token (bumped by every claim and put)
  - `{ten:q:<name>}:fails` hash: job id -> failures so far
  - `{ten:q:<name>}:quarantine` hash: job id -> payload, and `...:why` hash: job id ->
    msgpack [reason, failures, when] of the jobs set aside
  - `{ten:q:<name>}:done`  sorted set: job id -> until when it is remembered done (a
    `put(..., keep=True)` of it is ignored meanwhile; the webhooks: an hour)
  Every change is one Lua script (atomic).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import msgspec

from infra.redis_client import unavailable_on_connection_errors
from service.jobs.worker import Job, Quarantined, QueueFull


class _Why(msgspec.Struct, array_like=True, frozen=True):
    reason: str
    failures: int
    at: float


_why_encoder = msgspec.msgpack.Encoder()
_why_decoder = msgspec.msgpack.Decoder(_Why)


class MemoryQueue:
    """The due jobs are found in a heap of (due, job id), as Redis's sorted set finds them:
    a claim costs what it takes, not a look at every job queued (with many games waiting
    for the archive, that look held up the serving loop at every claim). An entry whose job
    was claimed, retried, done or put again since is stale: skipped when met, and the heap
    is rebuilt when they outnumber the live ones."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: dict[str, bytes] = {}
        self._due: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []
        self._token: dict[str, int] = {}
        self._fails: dict[str, int] = {}
        self._quarantine: dict[str, tuple[bytes, _Why]] = {}
        self._done: dict[str, float] = {}  # job id -> until when it is remembered done

    def _bump(self, job_id: str) -> int:
        token = self._token[job_id] = self._token.get(job_id, 0) + 1
        return token

    def _drop(self, job_id: str) -> None:
        self._jobs.pop(job_id, None)
        self._due.pop(job_id, None)
        self._token.pop(job_id, None)
        self._fails.pop(job_id, None)

    def _set_due(self, job_id: str, at: float) -> None:
        self._due[job_id] = at
        heapq.heappush(self._heap, (at, job_id))
        if len(self._heap) > 2 * len(self._due) + 64:  # mostly stale: rebuilt
            self._heap = [(due, job) for job, due in self._due.items()]
            heapq.heapify(self._heap)

    async def put(
        self, job_id: str, payload: bytes, at: float, *, keep: bool = False, bound: int = 0
    ) -> int:
        if job_id in self._quarantine:
            return 0
        if keep and (job_id in self._jobs or self._done.get(job_id, float("-inf")) > at):
            return 0
        if bound and job_id not in self._jobs and len(self._due) >= bound:
            raise QueueFull(self.name)
        self._jobs[job_id] = payload
        held = self._due.get(job_id)
        if held is None or at < held:
            self._set_due(job_id, at)
        return self._bump(job_id)

    async def claim(self, now: float, lease: float, limit: int) -> list[Job]:
        heap, due, found, taken = self._heap, self._due, [], set()
        while heap and len(found) < limit and heap[0][0] <= now:
            at, job_id = heapq.heappop(heap)
            if due.get(job_id) != at or job_id in taken:
                continue  # stale (a job done, then put again at the same time: twice)
            taken.add(job_id)
            token = self._bump(job_id)
            found.append(Job(job_id, self._jobs[job_id], token, self._fails.get(job_id, 0)))
        for job in found:  # leased: due again when the lease ends (after the loop: a lease
            self._set_due(job.id, now + lease)  # of 0 would be met again in it)
        return found

    async def hasten(self, job_id: str, at: float) -> bool:
        held = self._due.get(job_id)
        if held is None or held <= at:
            return False
        self._set_due(job_id, at)
        self._bump(job_id)
        return True

    async def done(
        self, job_id: str, token: int, *, now: float = 0.0, remember: float = 0.0
    ) -> bool:
        if self._token.get(job_id) != token:
            return False
        self._drop(job_id)
        if remember > 0:
            done = self._done
            done.pop(job_id, None)
            done[job_id] = now + remember  # in the order they were done: the oldest first
            while done and next(iter(done.values())) <= now:
                del done[next(iter(done))]
        return True

    async def retry(self, job_id: str, token: int, at: float, *, failed: bool) -> int | None:
        if self._token.get(job_id) != token:
            return None
        self._set_due(job_id, at)
        if failed:
            self._fails[job_id] = self._fails.get(job_id, 0) + 1
        return self._fails.get(job_id, 0)

    async def quarantine(self, job_id: str, token: int, reason: str, now: float) -> bool:
        if self._token.get(job_id) != token:
            return False
        why = _Why(reason, self._fails.get(job_id, 0) + 1, now)
        self._quarantine[job_id] = (self._jobs[job_id], why)
        self._drop(job_id)
        return True

    async def quarantined(self, limit: int) -> list[Quarantined]:
        return [
            Quarantined(job_id, payload, why.reason, why.failures, why.at)
            for job_id, (payload, why) in list(self._quarantine.items())[:limit]
        ]

    async def quarantined_job(self, job_id: str) -> Quarantined | None:
        held = self._quarantine.get(job_id)
        if held is None:
            return None
        payload, why = held
        return Quarantined(job_id, payload, why.reason, why.failures, why.at)

    async def requeue(self, job_id: str, now: float) -> bool:
        held = self._quarantine.pop(job_id, None)
        if held is None:
            return False
        self._jobs[job_id] = held[0]
        self._set_due(job_id, now)
        self._fails.pop(job_id, None)
        self._bump(job_id)
        return True

    async def rewrite(self, change: Callable[[bytes], bytes | None]) -> int:
        """Every payload queued or quarantined put through `change` (None: kept as it is);
        how many changed (an erasure: `service.privacy`)."""
        changed = 0
        for job_id, blob in list(self._jobs.items()):
            new = change(blob)
            if new is not None:
                self._jobs[job_id], changed = new, changed + 1
        for job_id, (blob, why) in list(self._quarantine.items()):
            new = change(blob)
            if new is not None:
                self._quarantine[job_id], changed = (new, why), changed + 1
        return changed

    async def backlog(self) -> int:
        return len(self._due)

    async def queued(self, job_id: str) -> bool:
        return job_id in self._jobs


# KEYS: jobs, due, token, quarantine, done. ARGV: id, payload, at, keep ("1"/"0"), bound
# ("0": none). ZADD LT adds a new member, or moves one earlier only. -1: refused (bound).
_PUT = """
if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then return 0 end
local queued = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if ARGV[4] == '1' then
  if queued then return 0 end
  local kept = redis.call('ZSCORE', KEYS[5], ARGV[1])
  if kept and tonumber(kept) > tonumber(ARGV[3]) then return 0 end
end
local bound = tonumber(ARGV[5])
if bound > 0 and not queued and redis.call('ZCARD', KEYS[2]) >= bound then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'LT', ARGV[3], ARGV[1])
return redis.call('HINCRBY', KEYS[3], ARGV[1], 1)
"""

# KEYS: jobs, due, token, fails. ARGV: now, the lease's end, limit. Returns (id, payload,
# token, failures) per job claimed.
_CLAIM = """
local ids = redis.call('ZRANGE', KEYS[2], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local payload = redis.call('HGET', KEYS[1], id)
  if payload then
    redis.call('ZADD', KEYS[2], ARGV[2], id)
    out[#out + 1] = id
    out[#out + 1] = payload
    out[#out + 1] = redis.call('HINCRBY', KEYS[3], id, 1)
    out[#out + 1] = tonumber(redis.call('HGET', KEYS[4], id) or '0')
  else
    redis.call('ZREM', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
  end
end
return out
"""

# KEYS: due, token. ARGV: id, at. 1: moved earlier (a new token voids the claim).
_HASTEN = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) <= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
return 1
"""

_DROP = """
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
"""

# KEYS: jobs, due, token, fails, done. ARGV: id, token, now, remembered until ("": not).
_DONE = (
    """
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[5], ARGV[4], ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[3])
end
"""
    + _DROP
    + "return 1\n"
)

# KEYS: due, token, fails. ARGV: id, token, at, failed ("1"/"0"). -1: not the latest token.
_RETRY = """
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return -1 end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
if ARGV[4] == '1' then return redis.call('HINCRBY', KEYS[3], ARGV[1], 1) end
return tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
"""

# KEYS: jobs, due, token, fails, quarantine, why. ARGV: id, token, why (msgpack).
_QUARANTINE = (
    """
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
local payload = redis.call('HGET', KEYS[1], ARGV[1])
if not payload then return 0 end
redis.call('HSET', KEYS[5], ARGV[1], payload)
redis.call('HSET', KEYS[6], ARGV[1], ARGV[3])
"""
    + _DROP
    + "return 1\n"
)

# KEYS: jobs, due, token, fails, quarantine, why. ARGV: id, now.
_REQUEUE = """
local payload = redis.call('HGET', KEYS[5], ARGV[1])
if not payload then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], payload)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], ARGV[1], 1)
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[6], ARGV[1])
return 1
"""


# KEYS: a hash; ARGV: field, the value read, the new value: set only if still the one read
_SWAP = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""


class RedisQueue:
    """`client`: a redis-py asyncio client (standalone or Cluster), owned by the caller."""

    def __init__(self, client, name: str, *, prefix: str = "ten:q:") -> None:
        self.name = name
        self._redis = client
        tag = f"{{{prefix}{name}}}"
        self.keys = {
            part: f"{tag}:{part}"
            for part in ("jobs", "due", "token", "fails", "quarantine", "why", "done")
        }
        self._put = client.register_script(_PUT)
        self._claim = client.register_script(_CLAIM)
        self._hasten = client.register_script(_HASTEN)
        self._done = client.register_script(_DONE)
        self._retry = client.register_script(_RETRY)
        self._quarantine = client.register_script(_QUARANTINE)
        self._requeue = client.register_script(_REQUEUE)
        self._swap = client.register_script(_SWAP)

    def _keys(self, *parts: str) -> list[str]:
        return [self.keys[part] for part in parts]

    async def put(
        self, job_id: str, payload: bytes, at: float, *, keep: bool = False, bound: int = 0
    ) -> int:
        keys = self._keys("jobs", "due", "token", "quarantine", "done")
        args = [job_id, payload, repr(at), "1" if keep else "0", bound]
        with unavailable_on_connection_errors():
            token = int(await self._put(keys=keys, args=args))
        if token < 0:
            raise QueueFull(self.name)
        return token

    async def claim(self, now: float, lease: float, limit: int) -> list[Job]:
        keys = self._keys("jobs", "due", "token", "fails")
        with unavailable_on_connection_errors():
            found = await self._claim(keys=keys, args=[repr(now), repr(now + lease), limit])
        return [
            Job(found[i].decode(), found[i + 1], int(found[i + 2]), int(found[i + 3]))
            for i in range(0, len(found), 4)
        ]

    async def hasten(self, job_id: str, at: float) -> bool:
        with unavailable_on_connection_errors():
            return bool(
                await self._hasten(keys=self._keys("due", "token"), args=[job_id, repr(at)])
            )

    async def done(
        self, job_id: str, token: int, *, now: float = 0.0, remember: float = 0.0
    ) -> bool:
        keys = self._keys("jobs", "due", "token", "fails", "done")
        until = repr(now + remember) if remember > 0 else ""
        with unavailable_on_connection_errors():
            return bool(await self._done(keys=keys, args=[job_id, token, repr(now), until]))

    async def retry(self, job_id: str, token: int, at: float, *, failed: bool) -> int | None:
        keys = self._keys("due", "token", "fails")
        args = [job_id, token, repr(at), "1" if failed else "0"]
        with unavailable_on_connection_errors():
            failures = int(await self._retry(keys=keys, args=args))
        return None if failures < 0 else failures

    async def quarantine(self, job_id: str, token: int, reason: str, now: float) -> bool:
        keys = self._keys("jobs", "due", "token", "fails", "quarantine", "why")
        with unavailable_on_connection_errors():
            failures = await self._redis.hget(self.keys["fails"], job_id)
            why = _why_encoder.encode(_Why(reason, int(failures or 0) + 1, now))
            return bool(await self._quarantine(keys=keys, args=[job_id, token, why]))

    async def quarantined(self, limit: int) -> list[Quarantined]:
        with unavailable_on_connection_errors():
            _, found = await self._redis.hscan(self.keys["quarantine"], 0, count=limit)
            ids = list(found)[:limit]
            whys = await self._redis.hmget(self.keys["why"], ids) if ids else []
        out = []
        for raw_id, blob in zip(ids, whys, strict=True):
            why = _why_decoder.decode(blob) if blob else _Why("", 0, 0.0)
            out.append(
                Quarantined(raw_id.decode(), found[raw_id], why.reason, why.failures, why.at)
            )
        return out

    async def quarantined_job(self, job_id: str) -> Quarantined | None:
        with unavailable_on_connection_errors():
            payload = await self._redis.hget(self.keys["quarantine"], job_id)
            if payload is None:  # the common case: one round trip
                return None
            blob = await self._redis.hget(self.keys["why"], job_id)
        why = _why_decoder.decode(blob) if blob else _Why("", 0, 0.0)
        return Quarantined(job_id, payload, why.reason, why.failures, why.at)

    async def requeue(self, job_id: str, now: float) -> bool:
        keys = self._keys("jobs", "due", "token", "fails", "quarantine", "why")
        with unavailable_on_connection_errors():
            return bool(await self._requeue(keys=keys, args=[job_id, repr(now)]))

    async def rewrite(self, change: Callable[[bytes], bytes | None]) -> int:
        """As `MemoryQueue.rewrite`: each payload changed is written back if it is still the
        one read (a job done meanwhile is not brought back)."""
        changed = 0
        for part in ("jobs", "quarantine"):
            key = self.keys[part]
            with unavailable_on_connection_errors():
                held = await self._redis.hgetall(key)
                for job_id, blob in held.items():
                    new = change(blob)
                    if new is not None:
                        changed += int(await self._swap(keys=[key], args=[job_id, blob, new]))
        return changed

    async def backlog(self) -> int:
        with unavailable_on_connection_errors():
            return int(await self._redis.zcard(self.keys["due"]))

    async def queued(self, job_id: str) -> bool:
        with unavailable_on_connection_errors():
            return bool(await self._redis.hexists(self.keys["jobs"], job_id))


# Where releases before the leased queues kept their jobs (hashes: id -> the same payload
# as the queue's): moved into the queues at start, so a rolling upgrade loses none.
LEGACY_ARCHIVE_OUTBOX = "ten:archive:outbox"  # game id -> msgpack ArchiveJob
LEGACY_WEBHOOK_DELIVERIES = "{ten:webhooks}:deliveries"  # delivery id -> msgpack delivery


async def adopt_legacy(client, key: str, queue: RedisQueue, now: float) -> int:
    """Move what an older release left in the hash `key` into `queue`; the number moved."""
    with unavailable_on_connection_errors():
        found = await client.hgetall(key)
        for job_id, blob in found.items():
            await queue.put(job_id.decode(), blob, now, keep=True)
            await client.hdel(key, job_id)
    return len(found)
