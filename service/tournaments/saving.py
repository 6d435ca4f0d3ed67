"""Every save of a tournament, the organiser's and the director's alike: the change judged
on the tournament as stored, saved with its version compared (`service.core.unit_of_work`),
judged again when another writer won; an Idempotency-Key's entry kept with the change."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec

from service.core import idempotency
from service.core.callers import PLATFORM, Caller
from service.core.errors import ServiceError
from service.core.model import TournamentRecord
from service.core.ports import TournamentStore
from service.core.unit_of_work import Retry, write
from service.tournaments.checks import is_id
from service.tournaments.records import REMEMBERED

Change = Callable[[TournamentRecord], TournamentRecord | None]


class TournamentWrites:
    """The tournaments' store as their use cases and director change it."""

    def __init__(self, store: TournamentStore, retry: Retry) -> None:
        self.store = store
        self.retry = retry

    async def load(self, tournament_id: str) -> TournamentRecord:
        """The tournament as stored; `tournament_not_found` for an id that names none."""
        record = await self.store.load_tournament(tournament_id) if is_id(tournament_id) else None
        if record is None:
            raise ServiceError("tournament_not_found")
        return record

    async def update(
        self,
        tournament_id: str,
        change: Change,
        key: str | None,
        caller: Caller,
        fields: tuple,
        *,
        pairs: bool = False,
    ) -> tuple[TournamentRecord, bool]:
        """Apply `change` and save with the version compared, judged again on the stored
        tournament when another writer won; (the tournament, replayed). `change` None:
        nothing to save. With an Idempotency-Key (`key`), the entry is saved with the change
        and a copy is answered with the tournament as it is (`replayed`). `pairs`: the change
        may pair a round (`next_round`), so it is decided off the event loop."""
        fingerprint = idempotency.fingerprint("tournament", *fields)
        entry = None if key is None else idempotency.entry_key("tournament", caller.scope, key)

        async def attempt(record: TournamentRecord) -> tuple[TournamentRecord, bool]:
            if entry is not None:
                prior = dict(record.remembered).get(entry)
                if prior is not None:
                    if prior != fingerprint:
                        raise ServiceError("idempotency_key_reused")
                    return record, True
            new = await asyncio.to_thread(change, record) if pairs else change(record)
            if new is None:
                return record, False
            if entry is not None:
                kept = (*record.remembered, (entry, fingerprint))[-REMEMBERED:]
                new = msgspec.structs.replace(new, remembered=kept)
            await self.store.save_tournament(new)
            return new, False

        record = await self.load(tournament_id)
        return await write(
            record, attempt, self.retry, gone="tournament_not_found",
            reread=lambda: self.load(tournament_id),
        )  # fmt: skip

    async def save(
        self, tournament_id: str, change: Change, *, pairs: bool = False
    ) -> TournamentRecord | None:
        """The director's saves: `update` without a key; None for a tournament gone."""
        try:
            record, _ = await self.update(tournament_id, change, None, PLATFORM, (), pairs=pairs)
        except ServiceError as error:
            if error.code == "tournament_not_found":
                return None
            raise
        return record
