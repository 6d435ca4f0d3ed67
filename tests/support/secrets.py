"""What must never leave the server (the draw pile order, the shuffle seed), and how the tests
look for it: every field name of an answer, the record as Redis stores it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import redis

from service.core.model import GameRecord

SECRET_FIELDS = {"draw_pile", "seed"}
ENDED = {"finished", "aborted", "abandoned"}


def reveals_seed(body: Any) -> bool:
    """Whether an answer is an ended game's view (or a join's answer holding one): its
    `fairness` shows the seed (provably fair deals), which no live game's answer does."""
    if not isinstance(body, dict):
        return False
    games = [body, body.get("game")]
    return any(isinstance(g, dict) and g.get("status") in ENDED for g in games)


def stored_record(redis_client: redis.Redis, game_id: str) -> GameRecord:
    blob = redis_client.hget(f"{{game:{game_id}}}", "rec")
    assert blob is not None, "the game's record is not where the Redis layout says"
    return msgspec.msgpack.decode(blob, type=GameRecord)


def field_names(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from field_names(item)
    elif isinstance(value, list):
        for item in value:
            yield from field_names(item)
