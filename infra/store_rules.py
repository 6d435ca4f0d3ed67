"""What both game stores (`memory_store`, `redis_store`) decide alike about a stored game."""

from __future__ import annotations

from service.core.model import GameRecord


def listed(record: GameRecord, index: str, created_at: float) -> bool:
    """A listing's entry (created_at, id) still stands for this game, which is in it now
    (else the entry is dropped: the game left the listing, or an expired game's id was
    taken again)."""
    return record.created_at == created_at and index in record.indexes()


def memberships(save_record: GameRecord, previous: GameRecord | None) -> tuple[set, set]:
    """The listings a save leaves and joins: none without `previous` (the game as read)."""
    if previous is None:
        return set(), set()
    before, now = previous.indexes(), save_record.indexes()
    if before == now:
        return set(), set()
    return set(before - now), set(now - before)


def due_moved_earlier(record: GameRecord, previous: GameRecord | None) -> bool:
    """A save of a game not ended writes its due entry only when its due moved earlier (or
    was unknown as read): otherwise the entry, at most the previous due, still holds."""
    due = record.due
    return due is not None and (previous is None or previous.due is None or due < previous.due)
