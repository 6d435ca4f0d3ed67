"""The tournaments' store on Redis (`service.core.ports.TournamentStore`), shared by every
replica. Layout, under a prefix (`ten` by default):

- `<prefix>:tournament:{<id>}`  hash: `v` the version, `d` the record (msgpack)
- `<prefix>:tournaments`  sorted set, every score 0: `<created_at, zero-padded>|<id>` of
  each tournament, read backwards by lex (newest first; the member is the keyset cursor)

Every write of a tournament is one Lua script: create only when absent, save only when the
stored version is the one before the record's (a compare-and-set). With `wait` (replicas,
timeout ms: TEN_REDIS_WAIT_REPLICAS) the script and a WAIT go in one pipeline, on one
connection, and a write the replicas did not confirm is not acknowledged (503), as the
game store's (`infra.redis_client.replicated`)."""

from __future__ import annotations

from typing import Any

import msgspec

from infra.redis_client import replicated_script, unavailable_on_connection_errors
from service.core.model import TournamentRecord
from service.core.ports import TournamentConflict

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('HGET', KEYS[1], 'd')
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
return false
"""
_SAVE = """
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return {0} end
if tonumber(v) ~= tonumber(ARGV[1]) - 1 then
  return {0, redis.call('HGET', KEYS[1], 'd')}
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
return {1}
"""
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(TournamentRecord)


def _member(created_at: float, tournament_id: str) -> str:
    return f"{created_at:020.6f}|{tournament_id}"


class RedisTournamentStore:
    def __init__(self, client: Any, *, prefix: str = "ten", wait: tuple[int, int] = (0, 0)) -> None:
        self.client = client
        self.prefix = prefix
        self.wait = wait
        self.index = f"{prefix}:tournaments"
        self._create = client.register_script(_CREATE)
        self._save = client.register_script(_SAVE)

    def key(self, tournament_id: str) -> str:
        return f"{self.prefix}:tournament:{{{tournament_id}}}"

    async def create_tournament(self, record: TournamentRecord) -> TournamentRecord | None:
        with unavailable_on_connection_errors():
            stored = await self._write(self._create, record)
            # listed after it is stored: a create that died between is stored, unlisted
            await self.client.zadd(self.index, {_member(record.created_at, record.id): 0})
        return None if stored is None else _decoder.decode(stored)

    async def _write(self, script: Any, record: TournamentRecord) -> Any:
        """The script's answer, acknowledged by the replicas `wait` asks for."""
        keys, args = [self.key(record.id)], [record.version, _encoder.encode(record)]
        return await replicated_script(self.client, script, keys, args, self.wait)

    async def load_tournament(self, tournament_id: str) -> TournamentRecord | None:
        with unavailable_on_connection_errors():
            data = await self.client.hget(self.key(tournament_id), "d")
        return None if data is None else _decoder.decode(data)

    async def save_tournament(self, record: TournamentRecord) -> None:
        with unavailable_on_connection_errors():
            answer = await self._write(self._save, record)
        if answer[0] != 1:
            raise TournamentConflict(_decoder.decode(answer[1]) if len(answer) > 1 else None)

    async def list_tournaments(
        self, before: tuple[float, str] | None, limit: int
    ) -> list[TournamentRecord]:
        top = "+" if before is None else f"({_member(*before)}"
        with unavailable_on_connection_errors():
            members = await self.client.zrevrangebylex(self.index, top, "-", start=0, num=limit)
        found = []
        for member in members:
            record = await self.load_tournament(member.decode().rpartition("|")[2])
            if record is not None:
                found.append(record)
        return found
