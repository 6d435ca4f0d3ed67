"""A player's data spread over every store (tests/integration/test_player_data.py,
bench/bench_player_data.py): finished games of the subject against another player, played
by the engine (the subject's seat under their own name), archived and rated as the service
would; the searches that count where an id or a name is still kept (Redis: every key and
value; the archive: every text column of every table); and what watches a reconciliation of
the erasure ledger (`Counting` ports, `first_run`)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

import msgspec
from sqlalchemy import String, Text, select
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.game.engine import new_game
from infra.archive.models import metadata
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.games.use_cases import encode_events
from tests.support.games import step

SUBJECT = "subject-7f3a9c"
SUBJECT_NAME = "Quentin Zabriskie"
OTHER = "other-2b8d41"
OTHER_NAME = "Olga Other"
NOW = 1_760_000_000.0


def game(
    i: int, *, finished: bool = True, subject: str = SUBJECT, name: str = SUBJECT_NAME
) -> tuple[GameRecord, list[StoredEvent]]:
    """The subject (seat 0), another verified player (seat 1) and a bot; played to its end by
    bots' choices when `finished` (two verified humans: ranked and rated)."""
    players = [(name, None), (OTHER_NAME, None), ("Bot", "basic")]
    state, events = new_game(players, f"pd/{i}")
    record = GameRecord(
        id=f"{i:020x}", state=state, token_hashes=("a", "b", None),
        created_at=NOW + i, updated_at=NOW + i,
        player_ids=(subject, OTHER, None), verified=(True, True, False),
    )  # fmt: skip
    kept = list(events)
    while finished and record.state is not None and record.state.phase != "finished":
        record, more = step(record)
        kept += more
    return record, encode_events(kept)


def redis_hits(client, needles: Iterable[str]) -> list[str]:
    """Every key of a Redis database whose name or value (any type) holds one of `needles`."""
    wanted = [n.encode() for n in needles]
    found = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key)
        values: list[bytes] = [key]
        if kind == b"string":
            values.append(client.get(key) or b"")
        elif kind == b"hash":
            values += [b for pair in client.hgetall(key).items() for b in pair]
        elif kind == b"zset":
            values += client.zrange(key, 0, -1)
        elif kind == b"set":
            values += list(client.smembers(key))
        elif kind == b"list":
            values += client.lrange(key, 0, -1)
        elif kind == b"stream":
            values += [msgspec.msgpack.encode(e) for e in client.xrange(key)]
        if any(n in v for v in values for n in wanted):
            found.append(key.decode())
    return found


async def archive_hits(
    engine: AsyncEngine, needles: Iterable[str], schema: str | None = None
) -> list[str]:
    """Every (table, column) of the archive whose text holds one of `needles`: each text
    and JSON column of each table, as text."""
    found = []
    async with engine.connect() as conn:
        for table in metadata.sorted_tables:
            target = table if schema is None else table.to_metadata(
                type(metadata)(), schema=schema)  # fmt: skip
            for column in target.columns:
                as_text = (
                    column.cast(Text) if not isinstance(column.type, String | Text) else column
                )
                for needle in needles:
                    hit = await conn.execute(
                        select(column).where(as_text.contains(needle)).limit(1)
                    )
                    if hit.first() is not None:
                        found.append(f"{table.name}.{column.name}")
    return found


def memory_hits(live, needles: Iterable[str]) -> list[str]:
    """Every part of the embedded stores (`infra.memory_privacy.MemoryLiveData`'s) that holds
    one of `needles`: the games (records, logs, idempotent answers), listings, quotas,
    tickets and their holders, tournaments, players' records, every queue's jobs."""
    store = live.store
    parts: dict[str, object] = {
        "games": [(g, e.record, e.events, e.idempotency) for g, e in store._games.items()],
        "listings": store._listings,
        "quotas": store._quotas._held,
        "tickets": (live.tickets._records, list(live.tickets._holders)),
        "tournaments": live.tournaments._records,
        "players": live.players._records,
    }
    for name in ("archive", "webhooks", "relay"):
        parts[f"queue {name}"] = (live.queue(name)._jobs, live.queue(name)._quarantine)
    wanted = [n.encode() for n in needles]
    encoder = msgspec.msgpack.Encoder(enc_hook=repr)
    found = []
    for name, part in parts.items():
        blob = encoder.encode(part)
        if any(n in blob for n in wanted):
            found.append(name)
    return found


class Counting:
    """A port whose calls of the methods `names` are counted (`calls`), every other
    attribute the port's own: a reconciliation's scans, seen from outside it."""

    def __init__(self, port: Any, *names: str) -> None:
        self.port, self.names, self.calls = port, names, Counter()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.port, name)
        if name not in self.names:
            return value

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return await value(*args, **kwargs)

        return counted


def first_run(data: Any) -> threading.Event:
    """An event set once the app's reconciliation (`PlayerData.reconcile`, due at once at
    start, then a period later) has run once: a test that counts scans waits for it."""
    ran = threading.Event()
    reconcile = data.reconcile

    async def counted() -> int:
        try:
            return await reconcile()
        finally:
            ran.set()

    data.reconcile = counted
    return ran
