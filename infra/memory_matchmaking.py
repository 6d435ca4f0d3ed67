"""The matchmaking tickets in memory (`service.matchmaking.records.TicketStore`): the
embedded default, one process, lost with it like its games."""

from __future__ import annotations

from collections.abc import Sequence

from service.matchmaking.records import KeyClaim, TicketConflict, TicketHeld, TicketRecord


class MemoryTicketStore:
    def __init__(self) -> None:
        self._records: dict[str, TicketRecord] = {}
        self._pools: dict[str, dict[str, float]] = {}  # pool -> ticket id -> created_at
        self._holders: dict[tuple[str, str], str] = {}  # (mode, player) -> ticket id
        self._claims: dict[str, KeyClaim] = {}  # a keyed create's entry -> its ticket

    async def create_ticket(self, record: TicketRecord, now: float) -> TicketRecord | None:
        stored = self._records.get(record.id)
        if stored is not None:
            return stored
        for player in record.players:
            held = self._records.get(self._holders.get((record.mode, player), ""))
            if held is not None and not held.final and held.expires_at > now:
                raise TicketHeld(held.id)
        self._records[record.id] = record
        self._pools.setdefault(record.pool, {})[record.id] = record.created_at
        for player in record.players:
            self._holders[record.mode, player] = record.id
        return None

    async def load_ticket(self, ticket_id: str) -> TicketRecord | None:
        return self._records.get(ticket_id)

    async def claim_key(self, entry: str, claim: KeyClaim, keep: float) -> KeyClaim:
        return self._claims.setdefault(entry, claim)  # kept as long as the tickets are

    async def save_tickets(self, records: Sequence[TicketRecord]) -> None:
        for record in records:
            stored = self._records.get(record.id)
            if stored is None or stored.version != record.version - 1:
                raise TicketConflict(stored)
        for record in records:
            self._records[record.id] = record
            if record.final:
                self._pools.get(record.pool, {}).pop(record.id, None)
                for player in record.players:
                    if self._holders.get((record.mode, player)) == record.id:
                        del self._holders[record.mode, player]

    async def pool(self, pool: str, limit: int) -> list[TicketRecord]:
        members = sorted(self._pools.get(pool, {}).items(), key=lambda item: (item[1], item[0]))
        return [self._records[ticket_id] for ticket_id, _ in members[:limit]]
