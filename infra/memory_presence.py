"""Who is watching which game, in memory (`service.correspondence.records.Presence`): the
embedded default, one process."""

from __future__ import annotations


class MemoryPresence:
    def __init__(self) -> None:
        # (game, seat) -> stream id -> until when its word holds
        self._words: dict[tuple[str, int], dict[str, float]] = {}

    async def enter(self, game_id: str, seat: int, stream_id: str, until: float) -> None:
        self._words.setdefault((game_id, seat), {})[stream_id] = until

    async def leave(self, game_id: str, seat: int, stream_id: str) -> None:
        words = self._words.get((game_id, seat))
        if words is not None:
            words.pop(stream_id, None)
            if not words:
                del self._words[(game_id, seat)]

    async def watching(self, game_id: str, seat: int, now: float) -> bool:
        words = self._words.get((game_id, seat))
        if not words:
            return False
        for stream_id in [s for s, until in words.items() if until <= now]:
            del words[stream_id]  # lapsed: said by a stream that never said it again
        return bool(words)
