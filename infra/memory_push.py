"""The players' correspondence records in memory (`service.correspondence.records.PlayerStore`:
their push subscriptions and vacations): the embedded default, one process."""

from __future__ import annotations

from service.correspondence.records import PlayerConflict, PlayerRecord


class MemoryPlayerStore:
    def __init__(self) -> None:
        self._records: dict[str, PlayerRecord] = {}

    async def load_player(self, player_id: str) -> PlayerRecord | None:
        return self._records.get(player_id)

    async def save_player(self, record: PlayerRecord) -> None:
        stored = self._records.get(record.player_id)
        held = 0 if stored is None else stored.version
        if held != record.version - 1:
            raise PlayerConflict(current=stored)
        self._records[record.player_id] = record
