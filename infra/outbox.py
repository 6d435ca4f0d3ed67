"""Outboxes of finished games waiting for the SQL archive (service.ports.ArchiveOutbox).

- `MemoryOutbox`: the embedded default (one process).
- `RedisOutbox`: one Redis hash `ten:archive:outbox` (game id -> msgpack ArchiveJob) shared
  by every replica; any replica's archiver may take an entry (archiving is idempotent) and
  removes it only once the archive has the game.
"""

from __future__ import annotations

import msgspec

from infra.redis_store import unavailable_on_connection_errors
from service.ports import ArchiveJob

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(ArchiveJob)
OUTBOX_KEY = "ten:archive:outbox"


class MemoryOutbox:
    def __init__(self) -> None:
        self._jobs: dict[str, ArchiveJob] = {}

    async def put(self, job: ArchiveJob) -> None:
        self._jobs[job.record.id] = job

    async def pending(self, limit: int) -> list[ArchiveJob]:
        return list(self._jobs.values())[:limit]

    async def done(self, game_id: str) -> None:
        self._jobs.pop(game_id, None)


class RedisOutbox:
    def __init__(self, client) -> None:
        self._redis = client

    async def put(self, job: ArchiveJob) -> None:
        with unavailable_on_connection_errors():
            await self._redis.hset(OUTBOX_KEY, job.record.id, _encoder.encode(job))

    async def pending(self, limit: int) -> list[ArchiveJob]:
        with unavailable_on_connection_errors():
            _, found = await self._redis.hscan(OUTBOX_KEY, 0, count=limit)
        return [_decoder.decode(blob) for blob in list(found.values())[:limit]]

    async def done(self, game_id: str) -> None:
        with unavailable_on_connection_errors():
            await self._redis.hdel(OUTBOX_KEY, game_id)
