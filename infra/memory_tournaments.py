"""The tournaments' store in memory (`service.core.ports.TournamentStore`): the embedded default,
one process, lost with it like its games."""

from __future__ import annotations

from service.core.model import TournamentRecord
from service.core.ports import TournamentConflict


class MemoryTournamentStore:
    def __init__(self) -> None:
        self._records: dict[str, TournamentRecord] = {}

    async def create_tournament(self, record: TournamentRecord) -> TournamentRecord | None:
        stored = self._records.get(record.id)
        if stored is not None:
            return stored
        self._records[record.id] = record
        return None

    async def load_tournament(self, tournament_id: str) -> TournamentRecord | None:
        return self._records.get(tournament_id)

    async def save_tournament(self, record: TournamentRecord) -> None:
        stored = self._records.get(record.id)
        if stored is None or stored.version != record.version - 1:
            raise TournamentConflict(stored)
        self._records[record.id] = record

    async def list_tournaments(
        self, before: tuple[float, str] | None, limit: int
    ) -> list[TournamentRecord]:
        ordered = sorted(self._records.values(), key=lambda r: (r.created_at, r.id), reverse=True)
        if before is not None:
            ordered = [r for r in ordered if (r.created_at, r.id) < before]
        return ordered[:limit]
