"""The players' correspondence records on Redis (`service.correspondence.records.PlayerStore`:
their push subscriptions and vacations), shared by every replica. One hash per player,
`<prefix>:player:{<player id>}`: `v` the version, `d` the record (msgpack); every save is
one Lua script, a compare-and-set on the version (none stored: version 1 creates it)."""

from __future__ import annotations

from typing import Any

import msgspec

from infra.redis_client import unavailable_on_connection_errors
from service.correspondence.records import PlayerConflict, PlayerRecord

_SAVE = """
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) - 1 then
  return {0, redis.call('HGET', KEYS[1], 'd')}
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
return {1}
"""
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(PlayerRecord)


class RedisPlayerStore:
    def __init__(self, client: Any, *, prefix: str = "ten") -> None:
        self.client = client
        self.prefix = prefix
        self._save = client.register_script(_SAVE)

    def key(self, player_id: str) -> str:
        return f"{self.prefix}:player:{{{player_id}}}"

    async def load_player(self, player_id: str) -> PlayerRecord | None:
        with unavailable_on_connection_errors():
            data = await self.client.hget(self.key(player_id), "d")
        return None if data is None else _decoder.decode(data)

    async def save_player(self, record: PlayerRecord) -> None:
        keys, args = [self.key(record.player_id)], [record.version, _encoder.encode(record)]
        with unavailable_on_connection_errors():
            answer = await self._save(keys=keys, args=args)
        if answer[0] != 1:
            stored = answer[1] if len(answer) > 1 else None
            raise PlayerConflict(current=None if stored is None else _decoder.decode(stored))
