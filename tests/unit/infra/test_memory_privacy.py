"""A game's rewrite for an erasure on the embedded store is a compare-and-set on its stamp:
a rewrite decided on a record a save has changed since is refused (the erasure's write loop
then tries again on the game as stored), and a save in flight from the record as it was
before the rewrite loses its race (the rewrite moved the stamp), so no save brings the id
back."""

from __future__ import annotations

import asyncio

import pytest
from msgspec.structs import replace

from infra.memory_privacy import MemoryLiveData
from infra.memory_store import MemoryGameStore
from service.core.ports import VersionConflict
from service.privacy.pseudonyms import Subject
from tests.support.player_data import SUBJECT, game

ME = Subject(player_id=SUBJECT, pseudonym="erased-00ff")


def test_a_rewrite_and_a_save_on_the_same_record_cannot_both_win() -> None:
    async def main() -> None:
        store = MemoryGameStore()
        live = MemoryLiveData(store, None, None, None, lambda name: None)
        record, events = game(7, finished=False)
        await store.create(record, events, 3600)
        changed = record.successor(updated_at=record.updated_at + 1)
        await store.save(changed, record.stamp, [], 3600, previous=record)
        with pytest.raises(VersionConflict) as refused:
            await live.rewrite_game(record, ME)  # decided on the record before the save
        assert refused.value.current == changed
        assert await live.rewrite_game(changed, ME)
        assert await live.games_of(SUBJECT) == []
        late = replace(changed, updated_at=changed.updated_at + 1)
        with pytest.raises(VersionConflict):  # a save decided before the rewrite
            await store.save(late, changed.stamp, [], 3600, previous=changed)
        stored = await store.load(record.id)
        assert stored is not None
        assert stored.player_ids[0] == "erased-00ff"

    asyncio.run(main())
