"""The bulk pairings' store in memory (`service.bulk.store.BulkStore`): the embedded default,
one process, lost with it like its games (nothing expires: the process goes first)."""

from __future__ import annotations

from service.bulk.records import BulkConflict, BulkRecord, BulkTokens


class MemoryBulkStore:
    def __init__(self) -> None:
        self._records: dict[str, BulkRecord] = {}
        self._remembered: dict[tuple[str, str], BulkTokens] = {}

    async def create_bulk(
        self, record: BulkRecord, ttl: int, remembered: tuple[str, BulkTokens] | None = None
    ) -> BulkRecord | None:
        stored = self._records.get(record.id)
        if stored is not None:
            return stored
        self._records[record.id] = record
        if remembered is not None:
            entry, tokens = remembered
            self._remembered[record.id, entry] = tokens
        return None

    async def load_bulk(self, bulk_id: str) -> BulkRecord | None:
        return self._records.get(bulk_id)

    async def save_bulk(self, record: BulkRecord, ttl: int) -> None:
        stored = self._records.get(record.id)
        if stored is None or stored.version != record.version - 1:
            raise BulkConflict(stored)
        self._records[record.id] = record

    async def remembered_bulk(self, bulk_id: str, entry: str) -> BulkTokens | None:
        return self._remembered.get((bulk_id, entry))
