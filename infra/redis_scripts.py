"""The Lua scripts of the Redis game store (`infra.redis_store`), each one call on one
slot, and the formats of their arguments and replies.

A create (`CREATE`) and a save (`SAVE`: a compare-and-set on the stamp) write the game,
its events and its idempotent response at once; `LOG_READ` and `RELAY_READ` answer a log
packed (`unpacked`); the due index is written by `DUE_WRITE`, `DUE_CLAIM` and
`DUE_SETTLE` and read by `DUE_UNCLAIMED` (keys: `infra.redis_layout`).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.core.ports import StoredEvent

# Script arguments: ARGV[1] is a header of numbers, `"<version> <ttl ms> <seq> <length> ..."`
# (save: `"<expected version> <new version> <ttl ms> <seq> <length> ..."`), one `<seq>
# <length>` per event; ARGV[2] the record; ARGV[3] the events' data, concatenated. redis-py
# packs each argument in Python, at a cost per argument, so an action's save is 3 keys and
# 3 arguments (5 with an Idempotency-Key), whatever its number of events.
# The last seq is published on the log's shard channel (the log key itself: same slot) to
# wake the processes following the game (`RedisGameStore.log_news`, `infra.redis_news`).
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
CREATE = (
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
SAVE = (
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
DUE_WRITE = (
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
DUE_SETTLE = (
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
DUE_UNCLAIMED = """
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

DUE_CLAIM = """
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
LOG_READ = (
    _PACK
    + """
return packed(redis.call('XRANGE', KEYS[1], '(0-' .. ARGV[1], '+', 'COUNT', ARGV[2]))
"""
)

# The relay (service.reactions.relay): the game and its log past the relay cursor, field `r` of the
# game's hash (absent: 0), in one call; the cursor moved forward only, never on a game gone.
RELAY_READ = (
    _PACK
    + """
local rec = redis.call('HGET', KEYS[1], 'rec')
if not rec then return false end
local cursor = redis.call('HGET', KEYS[1], 'r') or '0'
return {rec, packed(redis.call('XRANGE', KEYS[2], '(0-' .. cursor, '+'))}
"""
)

RELAYED = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local held = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
if tonumber(ARGV[1]) > held then redis.call('HSET', KEYS[1], 'r', ARGV[1]) end
return 1
"""


def header(numbers: str, events: Sequence[StoredEvent]) -> str:
    """ARGV[1] of the scripts: the numbers, then `<seq> <length>` of each event."""
    return numbers + "".join(f" {e.seq} {len(e.data)}" for e in events)


_packed_decoder = msgspec.msgpack.Decoder(list[StoredEvent])


def unpacked(packed: bytes) -> list[StoredEvent]:
    """The events of a log read packed (`_PACK`)."""
    return _packed_decoder.decode(packed)
