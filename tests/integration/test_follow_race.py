"""The event stream (`infra.watchers.Watchers.stream`) against a save landing between
its two reads: it read the log (nothing new), then the game, which the final save had
finished meanwhile. It must deliver the final events, not end the stream before them."""

from __future__ import annotations

import asyncio

import msgspec

from infra.memory_store import MemoryGameStore
from infra.watchers import Watchers
from service.core.settings import Settings
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby


class LogReadBeforeTheFinalSave(MemoryGameStore):
    """The first log read sees the log as it was before the game's last save."""

    def __init__(self) -> None:
        super().__init__()
        self.stale_reads = 1

    async def events(self, game_id, after, limit):
        found = await super().events(game_id, after, limit)
        if self.stale_reads and found and found[-1].seq > after:
            self.stale_reads -= 1
            return []  # as read just before the final save appended them
        return found


def test_the_stream_delivers_the_final_events_saved_between_its_reads() -> None:
    async def body() -> list[str]:
        store = LogReadBeforeTheFinalSave()
        service = GameService(store, Settings())
        created = await Lobby(service).deal(
            [("b1", "random"), ("b2", "random")]
        )  # played to the end
        last_seq = created.record.state.last_seq
        assert created.record.state.phase == "finished"
        watchers = Watchers(store, keepalive=0.1)
        kinds = []
        body = b""
        stream = watchers.stream(created.record.id, last_seq - 3, watchers.admit("test"))
        async for chunk in stream:
            body += chunk
        for line in body.decode().splitlines():
            if line.startswith("data:"):
                kinds.append(msgspec.json.decode(line.removeprefix("data:").strip())["type"])
        assert store.stale_reads == 0  # the stale read did happen
        return kinds

    kinds = asyncio.run(body())
    assert len(kinds) == 3
    assert kinds[-1] == "game_finished"
