"""The bulk pairings' store on Redis (`service.bulk.store.BulkStore`), shared by every
replica. One hash per bulk, under a prefix (`ten` by default), its id in braces so that it
lives in one slot of a Redis Cluster:

- `<prefix>:bulk:{<id>}`  hash: `v` the version, `d` the record (msgpack), `i:<entry>` the
  tokens a keyed create handed out (msgpack), kept with the bulk and expiring with it

Every write is one Lua script on that one key: a create only when absent (with its tokens),
a save only when the stored version is the one before the record's (a compare-and-set). With
`wait` (replicas, timeout ms: TEN_REDIS_WAIT_REPLICAS) the script and a WAIT go in one
pipeline, and a write the replicas did not confirm is not acknowledged (503), as the
tournaments' store does (`infra.redis_tournaments`)."""

from __future__ import annotations

from typing import Any

import msgspec

from infra.redis_client import replicated_script, unavailable_on_connection_errors
from service.bulk.records import BulkConflict, BulkRecord, BulkTokens

# one script for both writes: version 0 creates (only when absent; its tokens with it), any
# other replaces the bulk only when the stored version is the one before (a compare-and-set)
_WRITE = """
local stored = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '0' then
  if stored then return {0, redis.call('HGET', KEYS[1], 'd')} end
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], ARGV[4], ARGV[5]) end
elseif not stored then
  return {0}
elseif tonumber(stored) ~= tonumber(ARGV[1]) - 1 then
  return {0, redis.call('HGET', KEYS[1], 'd')}
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {1}
"""
_encoder = msgspec.msgpack.Encoder()
_record = msgspec.msgpack.Decoder(BulkRecord)
_tokens = msgspec.msgpack.Decoder(BulkTokens)


class RedisBulkStore:
    def __init__(self, client: Any, *, prefix: str = "ten", wait: tuple[int, int] = (0, 0)) -> None:
        self.client = client
        self.prefix = prefix
        self.wait = wait
        self._script = client.register_script(_WRITE)

    def key(self, bulk_id: str) -> str:
        return f"{self.prefix}:bulk:{{{bulk_id}}}"

    async def create_bulk(
        self, record: BulkRecord, ttl: int, remembered: tuple[str, BulkTokens] | None = None
    ) -> BulkRecord | None:
        entry, tokens = ("", b"") if remembered is None else remembered
        args = [
            record.version, _encoder.encode(record), max(1, ttl),
            f"i:{entry}" if entry else "", b"" if not entry else _encoder.encode(tokens),
        ]  # fmt: skip
        with unavailable_on_connection_errors():
            answer = await self._write(record.id, args)
        return None if answer[0] == 1 else _record.decode(answer[1])

    async def _write(self, bulk_id: str, args: list) -> Any:
        return await replicated_script(
            self.client, self._script, [self.key(bulk_id)], args, self.wait
        )

    async def load_bulk(self, bulk_id: str) -> BulkRecord | None:
        with unavailable_on_connection_errors():
            data = await self.client.hget(self.key(bulk_id), "d")
        return None if data is None else _record.decode(data)

    async def save_bulk(self, record: BulkRecord, ttl: int) -> None:
        args = [record.version, _encoder.encode(record), max(1, ttl)]
        with unavailable_on_connection_errors():
            answer = await self._write(record.id, args)
        if answer[0] != 1:
            raise BulkConflict(_record.decode(answer[1]) if len(answer) > 1 else None)

    async def remembered_bulk(self, bulk_id: str, entry: str) -> BulkTokens | None:
        with unavailable_on_connection_errors():
            data = await self.client.hget(self.key(bulk_id), f"i:{entry}")
        return None if data is None else _tokens.decode(data)
