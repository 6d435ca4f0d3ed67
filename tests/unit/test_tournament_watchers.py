"""The tournaments' event streams of one process (`service.tournament_watchers`) on the
embedded tournament store, wrapped to count its reads: every stream of a tournament is
served from one read per change, however many streams follow it; resume and the end."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from domain.tournament import Settings as TournamentSettings
from infra.memory_tournaments import MemoryTournamentStore
from service.model import TournamentRecord
from service.tournament_watchers import TournamentWatchers
from service.watchers import Watchers

pytestmark = pytest.mark.unit


class CountedStore(MemoryTournamentStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def load_tournament(self, tournament_id: str) -> TournamentRecord | None:
        self.reads += 1
        return await super().load_tournament(tournament_id)


def tournament() -> TournamentRecord:
    settings = TournamentSettings(
        format="swiss", deal_mode="duplicate", table_size=2, rounds=1, seed="0" * 32
    )
    return TournamentRecord(
        id="ab" * 10, name="Cup", organiser="platform", settings=settings, places=2,
        created_at=1.0, updated_at=1.0,
    )  # fmt: skip


async def saved(store: MemoryTournamentStore, record: TournamentRecord, **changes):
    new = msgspec.structs.replace(record, version=record.version + 1, **changes)
    await store.save_tournament(new)
    return new


async def read_all(body) -> list[tuple[int, dict]]:
    """(id, tournament) of each `tournament` event of a stream, to its end."""
    found, text = [], b""
    async for chunk in body:
        text += chunk
    for block in text.split(b"\r\n\r\n"):
        lines = dict(line.split(b": ", 1) for line in block.split(b"\r\n") if b": " in line)
        if lines.get(b"event") == b"tournament":
            found.append((int(lines[b"id"]), msgspec.json.decode(lines[b"data"])))
    return found


def encode(record: TournamentRecord) -> bytes:
    return msgspec.json.encode({"version": record.version, "status": record.status})


async def followed_by(streams: int) -> tuple[int, list[list[tuple[int, dict]]]]:
    """`streams` streams of one tournament through 3 changes to its end: (store reads,
    what each stream was sent)."""
    store = CountedStore()
    record = tournament()
    await store.create_tournament(record)
    watchers = TournamentWatchers(store, encode, keepalive=600.0)
    slots = Watchers(None, max_per_client=0)  # type: ignore[arg-type]
    reader = asyncio.create_task(watchers.run_forever())
    try:
        bodies = [watchers.stream(record, -1, slots.admit("c")) for _ in range(streams)]
        tasks = [asyncio.create_task(read_all(body)) for body in bodies]
        for _ in range(10):  # every stream started, and the subscription's first read done
            await asyncio.sleep(0)
        record = await saved(store, record, registered=("ann",))
        await asyncio.sleep(0.01)
        record = await saved(store, record, registered=("ann", "bob"))
        await asyncio.sleep(0.01)
        await saved(store, record, status="stopped")
        sent = await asyncio.wait_for(asyncio.gather(*tasks), 30)
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    assert slots.open == 0  # every slot released at the end
    return store.reads, sent


@pytest.mark.parametrize("streams", [1, 200])
def test_a_change_is_read_once_per_process_and_sent_to_every_stream(streams: int):
    reads, sent = asyncio.run(followed_by(streams))
    assert len(sent) == streams
    for shown in sent:
        versions = [v for v, _ in shown]
        assert versions == sorted(set(versions))
        assert versions[0] == 0  # the tournament as the request read it first
        assert shown[-1] == (3, {"version": 3, "status": "stopped"})
    assert reads <= 4  # the subscription's first report, then one per change: not per stream


def test_a_stream_resumed_after_the_end_sends_nothing_and_ends():
    async def body() -> None:
        store = CountedStore()
        record = msgspec.structs.replace(tournament(), status="finished", version=5)
        watchers = TournamentWatchers(store, encode)
        slots = Watchers(None)  # type: ignore[arg-type]
        assert await read_all(watchers.stream(record, 5, slots.admit("c"))) == []
        assert await read_all(watchers.stream(record, 4, slots.admit("c"))) == [
            (5, {"version": 5, "status": "finished"})
        ]
        assert slots.open == 0

    asyncio.run(body())
