"""The matchmaking tickets on Redis (`service.matchmaking.records.TicketStore`), shared by
every replica. Every key of one mode shares a hash tag, `{<prefix>:mm:<mode>}` (the mode is
the ticket id's first letter), so a mode's keys live in one slot of a Redis Cluster and a
step's claim of several tickets is one script:

- `{<prefix>:mm:<mode>}:t:<id>`  hash: `v` the version, `d` the record (msgpack)
- `{<prefix>:mm:<mode>}:pool:<rated|casual>`  sorted set: the pool's tickets not final, by
  created_at
- `{<prefix>:mm:<mode>}:holder:<player id>`  string `<ticket id>|<expires_at>`: the
  player's ticket of the mode (a ticket final deletes it; one past its expiry no longer
  counts; Redis drops it a while after)
- `{<prefix>:mm:key:<entry>}`  string: a keyed create's claim (msgpack `KeyClaim`), set once,
  in a slot of its own (it names a ticket of either mode); Redis drops it after `keep`

Every write is one Lua script: create only when absent and no player holds a live ticket
of the mode; save several tickets only when each is at the version before its record's
(all or none). With `wait` (replicas, timeout ms) the script and a WAIT go in one pipeline,
as the tournaments' (`infra.redis_tournaments`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from infra.redis_client import replicated, unavailable_on_connection_errors
from service.matchmaking.records import (
    LIFETIME,
    TICKET_ID,
    KeyClaim,
    TicketConflict,
    TicketHeld,
    TicketRecord,
    mode_of,
)

# KEYS: the ticket, its pool, its players' holder keys; ARGV: version, data, created_at,
# ticket id, now, expires_at, seconds the holder keys live
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {1, redis.call('HGET', KEYS[1], 'd')}
end
for i = 3, #KEYS do
  local held = redis.call('GET', KEYS[i])
  if held then
    local bar = string.find(held, '|', 1, true)
    if tonumber(string.sub(held, bar + 1)) > tonumber(ARGV[5]) then
      return {2, string.sub(held, 1, bar - 1)}
    end
  end
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
for i = 3, #KEYS do
  redis.call('SET', KEYS[i], ARGV[4] .. '|' .. ARGV[6], 'EX', ARGV[7])
end
return {0}
"""
# ARGV: the number of tickets n, then per ticket: its key count k (1 + 1 + players), version,
# data, final (1/0), ticket id; KEYS: per ticket its hash, its pool, its players' holders
_SAVE = """
local n = tonumber(ARGV[1])
local a, k = 2, 1
local plan = {}
for t = 1, n do
  local count = tonumber(ARGV[a])
  local key = KEYS[k]
  local v = redis.call('HGET', key, 'v')
  if not v then return {0} end
  if tonumber(v) ~= tonumber(ARGV[a + 1]) - 1 then
    return {0, redis.call('HGET', key, 'd')}
  end
  plan[t] = {k, count, a}
  a = a + 5
  k = k + count
end
for t = 1, n do
  local k, count, a = plan[t][1], plan[t][2], plan[t][3]
  redis.call('HSET', KEYS[k], 'v', ARGV[a + 1], 'd', ARGV[a + 2])
  if ARGV[a + 3] == '1' then
    redis.call('ZREM', KEYS[k + 1], ARGV[a + 4])
    for i = k + 2, k + count - 1 do
      local held = redis.call('GET', KEYS[i])
      if held and string.sub(held, 1, #ARGV[a + 4] + 1) == ARGV[a + 4] .. '|' then
        redis.call('DEL', KEYS[i])
      end
    end
  end
end
return {1}
"""
# KEYS: the claim; ARGV: the claim, seconds it is kept
_CLAIM = """
local first = redis.call('GET', KEYS[1])
if first then return first end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
"""
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(TicketRecord)
_claims = msgspec.msgpack.Decoder(KeyClaim)


class RedisTicketStore:
    def __init__(self, client: Any, *, prefix: str = "ten", wait: tuple[int, int] = (0, 0)) -> None:
        self.client = client
        self.prefix = prefix
        self.wait = wait
        self._create = client.register_script(_CREATE)
        self._save = client.register_script(_SAVE)
        self._claim = client.register_script(_CLAIM)

    def _tag(self, mode: str) -> str:
        return f"{{{self.prefix}:mm:{mode}}}"

    def key(self, ticket_id: str) -> str:
        return f"{self._tag(mode_of(ticket_id))}:t:{ticket_id}"

    def pool_key(self, pool: str) -> str:
        mode, _, kind = pool.partition(":")
        return f"{self._tag(mode)}:pool:{kind}"

    def _holders(self, record: TicketRecord) -> list[str]:
        return [f"{self._tag(record.mode)}:holder:{p}" for p in record.players]

    async def _run(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """The script's answer, acknowledged by the replicas `wait` asks for."""
        with unavailable_on_connection_errors():
            if not self.wait[0]:
                return await script(keys=keys, args=args)
            pipe = self.client.pipeline(transaction=False)
            await script(keys=keys, args=args, client=pipe)
            pipe.execute_command("WAIT", *self.wait)
            answer, acked = await pipe.execute()
        replicated(acked, self.wait)
        return answer

    async def create_ticket(self, record: TicketRecord, now: float) -> TicketRecord | None:
        keys = [self.key(record.id), self.pool_key(record.pool), *self._holders(record)]
        args = [
            record.version, _encoder.encode(record), record.created_at, record.id, now,
            record.expires_at, int(2 * LIFETIME),
        ]  # fmt: skip
        answer = await self._run(self._create, keys, args)
        if answer[0] == 1:
            return _decoder.decode(answer[1])
        if answer[0] == 2:
            held = answer[1].decode() if isinstance(answer[1], bytes) else str(answer[1])
            raise TicketHeld(held)
        return None

    async def load_ticket(self, ticket_id: str) -> TicketRecord | None:
        if not TICKET_ID.fullmatch(ticket_id):
            return None
        with unavailable_on_connection_errors():
            data = await self.client.hget(self.key(ticket_id), "d")
        return None if data is None else _decoder.decode(data)

    async def claim_key(self, entry: str, claim: KeyClaim, keep: float) -> KeyClaim:
        key = f"{{{self.prefix}:mm:key:{entry}}}"
        first = await self._run(self._claim, [key], [_encoder.encode(claim), max(1, int(keep))])
        return _claims.decode(first)

    async def save_tickets(self, records: Sequence[TicketRecord]) -> None:
        if not records:
            return
        keys: list[str] = []
        args: list[Any] = [len(records)]
        for record in records:
            mine = [self.key(record.id), self.pool_key(record.pool), *self._holders(record)]
            keys.extend(mine)
            args.extend(
                [len(mine), record.version, _encoder.encode(record), int(record.final), record.id]
            )
        answer = await self._run(self._save, keys, args)
        if answer[0] != 1:
            raise TicketConflict(_decoder.decode(answer[1]) if len(answer) > 1 else None)

    async def pool(self, pool: str, limit: int) -> list[TicketRecord]:
        with unavailable_on_connection_errors():
            members = await self.client.zrange(self.pool_key(pool), 0, limit - 1)
            if not members:
                return []
            pipe = self.client.pipeline(transaction=False)
            for member in members:
                pipe.hget(self.key(member.decode()), "d")
            found = await pipe.execute()
        return [_decoder.decode(data) for data in found if data is not None]
