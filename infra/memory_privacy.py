"""A player's data in the embedded stores (`service.privacy.ports.LiveData`): the games of
`infra.memory_store`, its listings and quotas, the tickets, the tournaments, the players'
records and the queues of this process; the ledger and the applied mark kept beside them
(lost with the process, as they are: the archive's copy of the ledger brings it back at the
next start, and the empty stores are scanned once, without a mark)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from infra.memory_store import MemoryGameStore
from service.core.model import GameRecord
from service.core.ports import VersionConflict
from service.privacy import pseudonyms
from service.privacy.ports import QUEUES, Erasure
from service.privacy.pseudonyms import Subject


class MemoryLiveData:
    def __init__(self, store: MemoryGameStore, tickets: Any, tournaments: Any, players: Any,
                 queue: Callable[[str], Any]) -> None:  # fmt: skip
        self.store, self.tickets, self.tournaments = store, tickets, tournaments
        self.players, self.queue = players, queue
        self._ledger: dict[str, Erasure] = {}
        self._applied: str | None = None

    async def erasures(self) -> list[Erasure]:
        return sorted(self._ledger.values(), key=lambda e: (e.at, e.digest))

    async def record_erasures(self, entries: Sequence[Erasure]) -> None:
        for entry in entries:
            self._ledger.setdefault(entry.digest, entry)

    async def applied(self) -> str | None:
        return self._applied

    async def swap_applied(self, expected: str | None, mark: str) -> bool:
        if self._applied != expected:
            return False
        self._applied = mark
        return True

    async def games_of(self, player_id: str) -> list[str]:
        with self.store._lock:
            return [
                g for g, e in self.store._games.items() if pseudonyms.holds(e.record, player_id)
            ]

    async def player_ids(self) -> list[str]:
        with self.store._lock:
            records = [e.record for e in self.store._games.values()]
        ids = set(self.players._records).union(*map(pseudonyms.player_ids_in, records))
        for ticket in self.tickets._records.values():
            ids.update(ticket.players)
        for name in QUEUES:
            await self.queue(name).rewrite(lambda b: ids.update(pseudonyms.payload_ids(b)))
        return sorted(ids)

    async def rewrite_game(self, record: GameRecord, subject: Subject) -> bool:
        planned = pseudonyms.plan(record, subject)
        if planned is None:
            return False
        (new, seats), store = planned, self.store
        with store._lock:
            entry = store._games.get(record.id)
            if entry is None or entry.record.stamp != record.stamp:
                raise VersionConflict("changed", current=None if entry is None else entry.record)
            store._unlist(record, record.indexes())
            entry.record = new
            entry.events = pseudonyms.stored_events(entry.events, seats, subject)
            for key, response in list(entry.idempotency.items()):
                changed = pseudonyms.remembered(response, subject)
                if changed is not None:
                    entry.idempotency[key] = changed
            store._list(new, new.indexes())
        return True

    async def erase_rest(self, subject: Subject) -> int:
        changed = self._quotas(subject)
        holders = self.tickets._holders
        for (mode, player), _ticket in list(holders.items()):
            if player == subject.player_id:
                holders[mode, subject.pseudonym] = holders.pop((mode, player))
                changed += 1
        if self.players._records.pop(subject.player_id, None) is not None:
            changed += 1
        for name in QUEUES:
            changed += await self.queue(name).rewrite(lambda b: pseudonyms.payload(b, subject))
        return changed

    def _quotas(self, subject: Subject) -> int:
        held, changed = self.store._quotas._held, 0
        for key in list(held):
            new = pseudonyms.renamed_key(key, subject)
            if new is not None:
                held[new] = held.pop(key)
                changed += 1
        return changed

    async def tickets_of(self, player_id: str) -> list[Any]:
        return [t for t in self.tickets._records.values() if player_id in t.players]
