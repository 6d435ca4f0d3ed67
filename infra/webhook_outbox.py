"""Outboxes of webhook deliveries (service.webhooks.WebhookOutbox): one delivery per
(message, endpoint), kept until it succeeds or is given up.

- `MemoryWebhookOutbox`: the embedded default (one process; lost with it, like its games).
- `RedisWebhookOutbox`: shared by every replica, durable as the Redis server is. Its keys
  share the hash tag `{ten:webhooks}` (one slot: the scripts work on a Redis Cluster):
  - `{ten:webhooks}:deliveries` hash: delivery id -> msgpack [message id, type, url, body,
    queued at]
  - `{ten:webhooks}:due` sorted set: delivery id -> when it is next due (unix seconds);
    while claimed, when the claim's lease ends (so a delivery whose replica died is due
    again then)
  - `{ten:webhooks}:attempts` hash: delivery id -> claims so far (the latest claim's token)
  - `{ten:webhooks}:sent` sorted set: delivery id -> when it left (done or given up), kept
    an hour, so the same fact queued again meanwhile is not sent again
  Every change is one Lua script (atomic): queueing is idempotent, and a claim is a
  compare-and-set on the due time, so two replicas never hold one delivery at once.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import msgspec

from infra.redis_store import unavailable_on_connection_errors
from service.webhooks import Claimed, Delivery, Message, delivery_id

SENT_WINDOW = 3600.0  # seconds a delivery that left is remembered (not queued again)
KEY_TAG = "{ten:webhooks}"


class _Stored(msgspec.Struct, frozen=True, array_like=True):
    message_id: str
    type: str
    url: str
    body: bytes
    queued_at: float


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(_Stored)


def _delivery(key: str, stored: _Stored, attempt: int) -> Delivery:
    return Delivery(
        key, stored.message_id, stored.type, stored.url, stored.body, stored.queued_at, attempt
    )


class MemoryWebhookOutbox:
    def __init__(self, sent_window: float = SENT_WINDOW) -> None:
        self.sent_window = sent_window
        self._deliveries: dict[str, _Stored] = {}
        self._due: dict[str, float] = {}
        self._attempts: dict[str, int] = {}
        self._sent: dict[str, float] = {}

    async def put(self, messages: Sequence[Message], urls: Sequence[str], now: float) -> int:
        added = 0
        for message in messages:
            for url in urls:
                key = delivery_id(message.id, url)
                if key in self._sent or key in self._deliveries:
                    continue
                self._deliveries[key] = _Stored(message.id, message.type, url, message.body, now)
                self._due[key] = now
                added += 1
        return added

    async def claim(self, now: float, lease: float, limit: int) -> Claimed:
        due = [(at, key) for key, at in self._due.items() if at <= now]
        found = []
        for _, key in heapq.nsmallest(limit, due):
            self._due[key] = now + lease
            attempt = self._attempts[key] = self._attempts.get(key, 0) + 1
            found.append(_delivery(key, self._deliveries[key], attempt))
        return Claimed(found, len(self._due))

    async def retry(self, delivery_id: str, attempt: int, at: float) -> bool:
        if self._attempts.get(delivery_id) != attempt:
            return False
        self._due[delivery_id] = at
        return True

    async def done(self, delivery_id: str, now: float) -> None:
        self._deliveries.pop(delivery_id, None)
        self._due.pop(delivery_id, None)
        self._attempts.pop(delivery_id, None)
        sent = self._sent
        sent.pop(delivery_id, None)
        sent[delivery_id] = now  # the dict in the order they left: the oldest first
        cutoff = now - self.sent_window
        while (oldest := next(iter(sent))) and sent[oldest] < cutoff:
            del sent[oldest]

    async def backlog(self) -> int:
        return len(self._due)


# KEYS: deliveries, due, sent. ARGV: now, then (delivery id, stored delivery) pairs.
_PUT = """
local added = 0
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  if not redis.call('ZSCORE', KEYS[3], id) and redis.call('HSETNX', KEYS[1], id, ARGV[i + 1]) == 1 then
    redis.call('ZADD', KEYS[2], ARGV[1], id)
    added = added + 1
  end
end
return added
"""

# KEYS: deliveries, due, attempts. ARGV: now, the lease's end, limit (times as Python
# wrote them: Lua would print a number with 14 digits only).
# Returns the backlog, then (id, attempt, stored delivery) per delivery claimed.
_CLAIM = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local found = {0}
for _, id in ipairs(ids) do
  local stored = redis.call('HGET', KEYS[1], id)
  if stored then
    redis.call('ZADD', KEYS[2], ARGV[2], id)
    table.insert(found, id)
    table.insert(found, redis.call('HINCRBY', KEYS[3], id, 1))
    table.insert(found, stored)
  else
    redis.call('ZREM', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
  end
end
found[1] = redis.call('ZCARD', KEYS[2])
return found
"""

# KEYS: due, attempts. ARGV: id, attempt, at. 1 when rescheduled.
_RETRY = """
if redis.call('HGET', KEYS[2], ARGV[1]) == ARGV[2] then
  redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
  return 1
end
return 0
"""

# KEYS: deliveries, due, attempts, sent. ARGV: id, now, the oldest `sent` entry kept.
_DONE = """
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[3])
return 1
"""


class RedisWebhookOutbox:
    """`client`: a redis-py asyncio client (standalone or Cluster), owned by the caller."""

    def __init__(self, client, *, tag: str = KEY_TAG, sent_window: float = SENT_WINDOW) -> None:
        self._redis = client
        self.sent_window = sent_window
        self.keys = {name: f"{tag}:{name}" for name in ("deliveries", "due", "attempts", "sent")}
        self._put = client.register_script(_PUT)
        self._claim = client.register_script(_CLAIM)
        self._retry = client.register_script(_RETRY)
        self._done = client.register_script(_DONE)

    def _keys(self, *names: str) -> list[str]:
        return [self.keys[name] for name in names]

    async def put(self, messages: Sequence[Message], urls: Sequence[str], now: float) -> int:
        args: list[object] = [repr(now)]
        for message in messages:
            for url in urls:
                stored = _Stored(message.id, message.type, url, message.body, now)
                args += [delivery_id(message.id, url), _encoder.encode(stored)]
        with unavailable_on_connection_errors():
            return int(await self._put(keys=self._keys("deliveries", "due", "sent"), args=args))

    async def claim(self, now: float, lease: float, limit: int) -> Claimed:
        keys = self._keys("deliveries", "due", "attempts")
        with unavailable_on_connection_errors():
            found = await self._claim(keys=keys, args=[repr(now), repr(now + lease), limit])
        deliveries = [
            _delivery(found[i].decode(), _decoder.decode(found[i + 2]), int(found[i + 1]))
            for i in range(1, len(found), 3)
        ]
        return Claimed(deliveries, int(found[0]))

    async def retry(self, delivery_id: str, attempt: int, at: float) -> bool:
        with unavailable_on_connection_errors():
            return bool(
                await self._retry(
                    keys=self._keys("due", "attempts"), args=[delivery_id, attempt, repr(at)]
                )
            )

    async def done(self, delivery_id: str, now: float) -> None:
        keys = self._keys("deliveries", "due", "attempts", "sent")
        with unavailable_on_connection_errors():
            await self._done(keys=keys, args=[delivery_id, repr(now), repr(now - self.sent_window)])

    async def backlog(self) -> int:
        with unavailable_on_connection_errors():
            return int(await self._redis.zcard(self.keys["due"]))
