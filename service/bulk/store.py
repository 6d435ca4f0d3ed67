"""The bulk pairings' store (infra/memory_bulk.py, infra/redis_bulk.py): each bulk written
whole with a compare-and-set on its version; a keyed create's tokens kept beside it."""

from __future__ import annotations

from typing import Protocol

from service.bulk.records import BulkRecord, BulkTokens


class BulkStore(Protocol):
    async def create_bulk(
        self, record: BulkRecord, ttl: int, remembered: tuple[str, BulkTokens] | None = None
    ) -> BulkRecord | None:
        """Store a new bulk (version 0) and, atomically with it, the tokens its create
        handed out under its Idempotency-Key's entry; both expire after `ttl` seconds. None
        when stored, else the bulk stored under that id already (nothing is overwritten)."""

    async def load_bulk(self, bulk_id: str) -> BulkRecord | None: ...

    async def save_bulk(self, record: BulkRecord, ttl: int) -> None:
        """Replace the bulk if it is still at `record.version - 1` (its expiry now `ttl`
        seconds away, its tokens' too); else raise BulkConflict with the one stored."""

    async def remembered_bulk(self, bulk_id: str, entry: str) -> BulkTokens | None:
        """The tokens kept under that entry of the bulk, None if none."""
