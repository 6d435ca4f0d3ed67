"""Who is watching which game, on Redis (`service.correspondence.records.Presence`), shared
by every replica. One key per game and seat, `<prefix>:presence:{<game id>}:<seat>`: a
sorted set of the open streams' ids, each scored with until when its word holds (a stream
says it again while it is open). The key itself expires a word's lifetime after the last
one said, so a replica killed with its streams open leaves nothing behind for long. Each
command touches one key (a Cluster's slot is the game's)."""

from __future__ import annotations

import math
from typing import Any

from infra.redis_client import unavailable_on_connection_errors

# a word said and the key's lifetime renewed, in one step (one key: any Cluster node's)
_ENTER = """
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


class RedisPresence:
    def __init__(self, client: Any, *, prefix: str = "ten", ttl: float = 45.0) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl = ttl
        self._enter = client.register_script(_ENTER)

    def key(self, game_id: str, seat: int) -> str:
        return f"{self.prefix}:presence:{{{game_id}}}:{seat}"

    async def enter(self, game_id: str, seat: int, stream_id: str, until: float) -> None:
        args = [repr(until), stream_id, max(1, math.ceil(self.ttl))]
        with unavailable_on_connection_errors():
            await self._enter(keys=[self.key(game_id, seat)], args=args)

    async def leave(self, game_id: str, seat: int, stream_id: str) -> None:
        with unavailable_on_connection_errors():
            await self.client.zrem(self.key(game_id, seat), stream_id)

    async def watching(self, game_id: str, seat: int, now: float) -> bool:
        with unavailable_on_connection_errors():
            return await self.client.zcount(self.key(game_id, seat), f"({now!r}", "+inf") > 0
