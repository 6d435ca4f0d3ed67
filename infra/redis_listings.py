"""The listings of games on Redis (the `Listings` port of `RedisGameStore`): a listing's
pages newest first from its sorted set, and the count of the games in play."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from infra.redis_client import unavailable_on_connection_errors
from infra.redis_layout import game_keys, record_decoder
from infra.store_rules import listed
from service.core.model import GameRecord

# The games in play, for the `ten_live_games` metric: a sorted set of game ids scored by
# when each was last seen stored. Written only when a game starts and when it finishes (not
# on every action: it is another hash slot, so it cannot join the save script on a Cluster);
# games that expired idle are found by `live_games`, which re-checks the entries it has not
# seen for RECHECK_SECONDS, at most RECHECK_BATCH of them per call.
RECHECK_SECONDS = 60
RECHECK_BATCH = 500
# list_games: entries read per ZRANGE at most, and ZRANGE calls per page at most (each
# round drops the stale entries it met, so a later page does not meet them again)
_LIST_BATCH = 500
_LIST_ROUNDS = 32


class _Scan:
    """Where a listing's reading is, newest first: ZRANGE from score `bound` down, after
    `offset` entries of that very score already read (equal scores come by id, descending).
    At the start, the cursor's own score: its entries of ids not below the cursor's are
    read there and passed over, so a page starts strictly after (created_at, id)."""

    def __init__(self, before: tuple[float, str] | None) -> None:
        self.before = before
        self.bound: float | str = "+inf" if before is None else before[0]
        self.offset = 0

    def after_cursor(self, entries: list[tuple[bytes, float]]) -> list[tuple[str, float]]:
        """The entries just read that come after the cursor; moves the scan past them all."""
        found = []
        for member, score in entries:
            game_id = member.decode()
            if score == self.bound:
                self.offset += 1
            else:
                self.bound, self.offset = score, 1
            if self.before is None or (score, game_id) < self.before:
                found.append((game_id, score))
        return found


class RedisListings:
    """`Listings` for `RedisGameStore`, which gives it its client (`_redis`), its pipelines
    (`_pipeline`) and its keys (`_index_prefix`, `_live_key`, `_live_recheck`). The store
    writes the listings and the live set as it creates and saves games."""

    _redis: Any
    _pipeline: Callable[[], Any]
    _index_prefix: str
    _live_key: str
    _live_recheck: float

    def _index_key(self, index: str) -> str:
        """One listing's sorted set: its name is its hash tag (one slot, any node)."""
        return f"{self._index_prefix}{{{index}}}"

    async def live_games(self) -> int:
        now = time.time()
        with unavailable_on_connection_errors():
            unseen = await self._redis.zrangebyscore(
                self._live_key, "-inf", now - self._live_recheck, start=0, num=RECHECK_BATCH
            )
            if unseen:
                ids = [member.decode() for member in unseen]
                pipe = self._pipeline()
                for game_id in ids:
                    pipe.exists(game_keys(game_id)[0])
                exists = await pipe.execute()
                gone = [g for g, found in zip(ids, exists, strict=True) if not found]
                kept = {g: now for g, found in zip(ids, exists, strict=True) if found}
                if gone:
                    await self._redis.zrem(self._live_key, *gone)
                if kept:
                    await self._redis.zadd(self._live_key, kept, xx=True)
            return await self._redis.zcard(self._live_key)

    async def list_games(
        self, index: str, before: tuple[float, str] | None, limit: int
    ) -> list[GameRecord]:
        """Newest first: ZRANGE BYSCORE REV from the cursor's score (O(log n + read)); the
        entries of that very score not after the cursor's id are passed over (`_Scan`);
        the games of the entries read are fetched in one pipeline; entries whose game
        expired or left the listing are dropped (ZREM) and more are read in their place."""
        key = self._index_key(index)
        scan = _Scan(before)
        found: list[GameRecord] = []
        dropped: list[str] = []
        batch = limit if before is None else limit + 1  # the cursor's game, passed over
        with unavailable_on_connection_errors():
            for _ in range(_LIST_ROUNDS):
                want = limit - len(found)
                if want <= 0:
                    break
                batch = min(batch, _LIST_BATCH)
                entries = await self._redis.zrange(
                    key, scan.bound, "-inf", desc=True, byscore=True,
                    offset=scan.offset, num=batch, withscores=True,
                )  # fmt: skip
                kept, stale = await self._listed(index, scan.after_cursor(entries))
                found += kept[:want]
                dropped += stale
                if len(entries) < batch:
                    break  # the listing is read to its end
                batch *= 2  # entries were stale: read further at once
            if dropped:  # once read through: the offsets of the scan stay right
                await self._redis.zrem(key, *dropped)
        return found

    async def _listed(
        self, index: str, entries: list[tuple[str, float]]
    ) -> tuple[list[GameRecord], list[str]]:
        """The games of a listing's entries still in it, and the entries to drop."""
        if not entries:
            return [], []
        pipe = self._pipeline()
        for game_id, _ in entries:
            pipe.hget(game_keys(game_id)[0], "rec")
        blobs = await pipe.execute()
        kept, stale = [], []
        for (game_id, created_at), blob in zip(entries, blobs, strict=True):
            record = None if blob is None else record_decoder.decode(blob)
            if record is not None and listed(record, index, created_at):
                kept.append(record)
            else:
                stale.append(game_id)
        return kept, stale
