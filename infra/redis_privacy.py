"""A player's data on Redis (`service.privacy.ports.LiveData`), every replica's: the games
(`infra.redis_layout`: a game's hash, log and idempotent responses rewritten in one Lua
script, compare-and-set on its stamp), then every other key of the service (listings,
quotas, tickets, tournaments, the queues' payloads, the players' records): one SCAN of the
keyspace, each value decoded (msgpack or JSON) and rewritten by `service.privacy.pseudonyms`,
each key naming the player renamed. An erasure's cost (rare, the platform's), never a
request's. The ledger: the hash `ten:erasures` (digest -> msgpack `Erasure`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from infra.redis_client import unavailable_on_connection_errors
from infra.redis_layout import game_keys, record_decoder, record_encoder, stream_events
from service.core.model import GameRecord
from service.core.ports import VersionConflict
from service.matchmaking.records import TicketRecord
from service.privacy import pseudonyms
from service.privacy.ports import Erasure
from service.privacy.pseudonyms import Subject

LEDGER = "ten:erasures"
_GAME = re.compile(rb"^\{game:([^}]*)\}$")
_ledger = msgspec.msgpack.Decoder(Erasure)
_ticket = msgspec.msgpack.Decoder(TicketRecord)

# KEYS: a game's hash, log, idempotency hash. ARGV: the stamp read, the new record, its
# stamp, n events, then n (seq, data), then the idempotency (field, value) pairs
REWRITE = """
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then
  return {0, redis.call('HGET', KEYS[1], 'rec')}
end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[3], 'rec', ARGV[2])
local n = tonumber(ARGV[4])
if n > 0 then
  redis.call('DEL', KEYS[2])
  for i = 0, n - 1 do
    redis.call('XADD', KEYS[2], '0-' .. ARGV[5 + 2 * i], 'd', ARGV[6 + 2 * i])
  end
end
for i = 5 + 2 * n, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
if ttl > 0 then
  for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end
end
return {1}
"""


class RedisLiveData:
    """`client`: a redis-py asyncio client on the store's server (the shared small one)."""

    def __init__(self, client: Any, *, player_key: Any = None) -> None:
        self.client = client
        self.player_key = player_key  # the players' records' key (RedisPlayerStore.key)
        self._rewrite = client.register_script(REWRITE)

    async def erasures(self) -> list[Erasure]:
        with unavailable_on_connection_errors():
            held = await self.client.hgetall(LEDGER)
        return sorted((_ledger.decode(v) for v in held.values()), key=lambda e: (e.at, e.digest))

    async def record_erasures(self, entries: Sequence[Erasure]) -> None:
        with unavailable_on_connection_errors():
            for entry in entries:
                await self.client.hsetnx(LEDGER, entry.digest, msgspec.msgpack.encode(entry))

    async def _games(self):
        async for key in self.client.scan_iter(match="{game:*}", count=1000):
            found = _GAME.match(key)
            if found is not None:
                blob = await self.client.hget(key, "rec")
                if blob is not None:
                    yield record_decoder.decode(blob)

    async def games_of(self, player_id: str) -> list[str]:
        with unavailable_on_connection_errors():
            return [
                record.id
                async for record in self._games()
                if pseudonyms.game_record(record, Subject(player_id=player_id, pseudonym="-"))
            ]

    async def player_ids(self) -> list[str]:
        ids: set[str] = set()
        with unavailable_on_connection_errors():
            async for record in self._games():
                ids |= pseudonyms.player_ids_in(record)
        return sorted(ids)

    async def rewrite_game(self, record: GameRecord, subject: Subject) -> bool:
        planned = pseudonyms.plan(record, subject)
        if planned is None:
            return False
        (new, seats), keys = planned, list(game_keys(record.id))
        with unavailable_on_connection_errors():
            log = stream_events(await self.client.xrange(keys[1]))
            idem = await self.client.hgetall(keys[2])
        events = list(pseudonyms.stored_events(log, seats, subject))
        args: list[Any] = [record.stamp, record_encoder.encode(new), new.stamp, len(events)]
        for event in events:
            args += [event.seq, event.data]
        for field, blob in idem.items():
            response = pseudonyms.remembered(_idem.decode(blob), subject)
            if response is not None:
                args += [field, record_encoder.encode(response)]
        with unavailable_on_connection_errors():
            answer = await self._rewrite(keys=keys, args=args)
        if answer[0] != 1:
            stored = answer[1] if len(answer) > 1 else None
            raise VersionConflict(
                "changed", current=None if stored is None else record_decoder.decode(stored)
            )
        return True

    async def erase_rest(self, subject: Subject) -> int:
        changed = 0
        with unavailable_on_connection_errors():
            if self.player_key is not None:
                changed += await self.client.delete(self.player_key(subject.player_id))
            async for key in self.client.scan_iter(count=1000):
                if _GAME.match(key) or key.startswith(b"{game:") or key == LEDGER.encode():
                    continue
                changed += await self._key(key, subject)
        return changed

    async def _key(self, key: bytes, subject: Subject) -> int:
        kind = await self.client.type(key)
        changed = 0
        if kind == b"hash":
            for field, blob in (await self.client.hgetall(key)).items():
                new = pseudonyms.payload(blob, subject)
                if new is not None:
                    changed += 1
                    await self.client.hset(key, field, new)
        elif kind == b"string":
            blob = await self.client.get(key)
            new = None if blob is None else pseudonyms.payload(blob, subject)
            if new is not None:
                changed += 1
                await self.client.set(key, new, keepttl=True)
        elif kind == b"zset":
            changed += await self._members(key, subject)
        renamed = _renamed(key.decode(), subject)
        if renamed is not None:
            changed += 1
            await self._move(key, renamed)
        return changed

    async def _members(self, key: bytes, subject: Subject) -> int:
        changed = 0
        for member, score in await self.client.zrange(key, 0, -1, withscores=True):
            new = subject.scoped(member.decode())
            if new is not None:
                changed += 1
                await self.client.zrem(key, member)
                await self.client.zadd(key, {new: score})
        return changed

    async def _move(self, key: bytes, new: str) -> None:
        """A key to another name (maybe another slot: DUMP and RESTORE, then DEL)."""
        ttl = await self.client.pttl(key)
        dumped = await self.client.dump(key)
        if dumped is None:
            return
        await self.client.restore(new, max(ttl, 0), dumped, replace=True)
        await self.client.delete(key)

    async def tickets_of(self, player_id: str) -> list[TicketRecord]:
        found = []
        with unavailable_on_connection_errors():
            async for key in self.client.scan_iter(match="*:mm:*", count=1000):
                if await self.client.type(key) != b"hash":
                    continue
                blob = await self.client.hget(key, "d")
                if blob is not None and player_id.encode() in blob:
                    try:
                        ticket = _ticket.decode(blob)
                    except msgspec.ValidationError:
                        continue
                    if player_id in ticket.players:
                        found.append(ticket)
        return found


_idem = msgspec.msgpack.Decoder(pseudonyms.IdempotentResponse)


def _renamed(key: str, subject: Subject) -> str | None:
    """A key naming the player (`...player:<id>`, `{...player:<id>}`, a ticket holder's
    `...:holder:<id>`), renamed to the pseudonym's; else None. Only after those words: an
    id that is also a word of other keys (`q`, `mm`) renames nothing else."""
    pid = re.escape(subject.player_id)
    pattern = re.compile(rf"((?:player|holder):){pid}(?=[}}:]|$)")
    if not pattern.search(key):
        return None
    return pattern.sub(lambda found: found.group(1) + subject.pseudonym, key)
