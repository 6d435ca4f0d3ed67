"""A player's data on Redis (`service.privacy.ports.LiveData`), every replica's: the games
(`infra.redis_layout`: a game's hash, log and idempotent responses rewritten in one Lua
script, compare-and-set on its stamp), the queues' payloads (each queue's checked swap,
`RedisQueue.rewrite`), the player's record deleted, then one SCAN of the keyspace for the
keys naming the player (listings, quotas, ticket holders: `pseudonyms.renamed_key`), each
renamed. Tickets and tournaments are saved through their stores (`PlayerData`). An
erasure's cost (rare, the platform's), never a request's. The ledger: the hash
`ten:erasures` (digest -> msgpack `Erasure`); its applied mark: the string
`ten:erasures:applied`, on the server that holds every key it vouches for (an RDB or AOF
restore, or a replica promoted, brings back the mark written with the data it holds). On a
Redis Cluster each node is restored or failed over on its own, and no one key can vouch for
the others: there the live store has no mark, and each reconciliation scans it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from infra.redis_client import unavailable_on_connection_errors
from infra.redis_layout import game_keys, record_decoder, record_encoder, stream_events
from service.core.model import GameRecord
from service.core.ports import VersionConflict
from service.matchmaking.records import TicketRecord
from service.privacy import pseudonyms
from service.privacy.ports import QUEUES, Erasure
from service.privacy.pseudonyms import Subject

LEDGER = "ten:erasures"
APPLIED = "ten:erasures:applied"
_GAME = re.compile(rb"^\{game:([^}]*)\}$")
_TICKET = re.compile(rb"^\{[^}]*:mm:[^}]*\}:t:")
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


# KEYS: the applied mark. ARGV: the mark expected ("" for none), the new one
SWAP = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""


class RedisLiveData:
    """`client`: a redis-py asyncio client on the store's server (the shared small one);
    `queue`: a leased queue by name (`infra.queues.RedisQueue`); `cluster`: the server is a
    Redis Cluster (no applied mark)."""

    def __init__(
        self, client: Any, queue: Callable[[str], Any], *, player_key: Any = None,
        cluster: bool = False,
    ) -> None:  # fmt: skip
        self.client, self.queue, self.cluster = client, queue, cluster
        self.player_key = player_key  # the players' records' key (RedisPlayerStore.key)
        self._rewrite = client.register_script(REWRITE)
        self._swap = client.register_script(SWAP)

    async def erasures(self) -> list[Erasure]:
        with unavailable_on_connection_errors():
            held = await self.client.hgetall(LEDGER)
        return sorted((_ledger.decode(v) for v in held.values()), key=lambda e: (e.at, e.digest))

    async def record_erasures(self, entries: Sequence[Erasure]) -> None:
        with unavailable_on_connection_errors():
            for entry in entries:
                await self.client.hsetnx(LEDGER, entry.digest, msgspec.msgpack.encode(entry))

    async def applied(self) -> str | None:
        if self.cluster:
            return None
        with unavailable_on_connection_errors():
            held = await self.client.get(APPLIED)
        return None if held is None else held.decode()

    async def swap_applied(self, expected: str | None, mark: str) -> bool:
        if self.cluster:
            return False
        with unavailable_on_connection_errors():
            return await self._swap(keys=[APPLIED], args=[expected or "", mark]) == 1

    async def _games(self):
        async for key in self.client.scan_iter(match="{game:*}", count=1000):
            found = _GAME.match(key)
            if found is not None:
                blob = await self.client.hget(key, "rec")
                if blob is not None:
                    yield record_decoder.decode(blob)

    async def games_of(self, player_id: str) -> list[str]:
        with unavailable_on_connection_errors():
            return [r.id async for r in self._games() if pseudonyms.holds(r, player_id)]

    async def player_ids(self) -> list[str]:
        ids: set[str] = set()
        with unavailable_on_connection_errors():
            async for record in self._games():
                ids |= pseudonyms.player_ids_in(record)
            for ticket in await self._tickets(None):
                ids.update(ticket.players)
            if self.player_key is not None:
                head, _, tail = self.player_key("\0").partition("\0")
                async for key in self.client.scan_iter(match=f"{head}*{tail}", count=1000):
                    name = key.decode()
                    if name.startswith(head) and name.endswith(tail):
                        ids.add(name[len(head) : len(name) - len(tail)])
        for name in QUEUES:
            await self.queue(name).rewrite(lambda b: ids.update(pseudonyms.payload_ids(b)))
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
        for name in QUEUES:
            changed += await self.queue(name).rewrite(lambda b: pseudonyms.payload(b, subject))
        with unavailable_on_connection_errors():
            if self.player_key is not None:
                changed += await self.client.delete(self.player_key(subject.player_id))
            async for key in self.client.scan_iter(count=1000):
                renamed = pseudonyms.renamed_key(key.decode(errors="replace"), subject)
                if renamed is not None:
                    changed += 1
                    await self._move(key, renamed)
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
        with unavailable_on_connection_errors():
            return await self._tickets(player_id)

    async def _tickets(self, player_id: str | None) -> list[TicketRecord]:
        """The tickets stored (with `player_id` in them: else all)."""
        found = []
        async for key in self.client.scan_iter(match="*:mm:*", count=1000):
            if not _TICKET.match(key):
                continue
            blob = await self.client.hget(key, "d")
            if blob is None or (player_id is not None and player_id.encode() not in blob):
                continue
            try:
                ticket = _ticket.decode(blob)
            except msgspec.ValidationError:
                continue
            if player_id is None or player_id in ticket.players:
                found.append(ticket)
        return found


_idem = msgspec.msgpack.Decoder(pseudonyms.IdempotentResponse)
