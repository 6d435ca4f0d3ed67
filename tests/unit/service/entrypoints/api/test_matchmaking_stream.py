"""A ticket's event stream (`matchmaking_routes.changes`) over a feed that reads the ticket's
saves one by one: an event each time the ticket as this caller is shown it changes, never
two alike in a row, and the end after a final status."""

from __future__ import annotations

import asyncio
import itertools
import json

import msgspec

from infra.memory_matchmaking import MemoryTicketStore
from infra.queues import MemoryQueue
from service.core.callers import PLATFORM
from service.entrypoints.api.matchmaking_routes import changes
from service.matchmaking.records import LIFETIME, Match, TicketRecord
from service.matchmaking.use_cases import Matchmaking
from service.tournaments.feeds import TournamentFeeds

T0 = 1_800_000_000.0


class Released:
    def __init__(self) -> None:
        self.released = False

    def release(self) -> None:
        self.released = True


def saves() -> list[TicketRecord]:
    """A ticket's saves: waiting, claimed for a table (shown waiting), released by a step
    that could not make it, claimed again, matched."""
    waiting = TicketRecord(
        id="l" + "0" * 19, mode="live", rated=True, sizes=(2,), player_id="ann", name="Ann",
        rating=25.0, created_at=T0, expires_at=T0 + LIFETIME, updated_at=T0,
    )  # fmt: skip
    match = Match(id="m1", tickets=(waiting.id, "l" + "1" * 19), size=2)
    steps = [
        {"status": "matching", "match": match},
        {"status": "waiting", "match": None},
        {"status": "matching", "match": match},
        {"status": "matched", "game_id": "g" * 20, "seat": 0, "seat_token": "g.seat.0"},
    ]
    records = [waiting]
    for version, change in enumerate(steps, start=1):
        at = T0 + version
        records.append(
            msgspec.structs.replace(records[-1], version=version, updated_at=at, **change)
        )
    return records


def test_a_ticket_stream_sends_each_change_as_shown_once_and_ends_after_the_match() -> None:
    async def body() -> list[dict]:
        records = saves()
        reads = iter(records)
        clock = [T0]

        async def load(ticket_id: str) -> TicketRecord:
            record = next(reads, records[-1])
            clock[0] = record.updated_at  # each read a second after the one before
            return record

        async def nobody(*args: object, **kwargs: object) -> object:
            raise AssertionError("no table is made here")

        async def unrated(players: object) -> dict:
            return {}

        use = Matchmaking(
            MemoryTicketStore(), MemoryQueue("matchmaking"), nobody, ratings=unrated,
            clock=lambda: clock[0],
        )  # fmt: skip
        feeds = TournamentFeeds(load, poll=0.0)
        slot = Released()
        stream = changes(use, feeds, PLATFORM, records[0].id, slot, 30.0)  # type: ignore[arg-type]
        chunks = [chunk async for chunk in stream]
        assert slot.released
        text = b"".join(chunks).decode()
        return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]

    events = asyncio.run(body())
    assert [e["status"] for e in events] == ["waiting", "matched"]
    assert events[-1]["seat_token"] == "g.seat.0"
    # alike: the same but for the seconds waited and the window they widen
    shown = [{k: v for k, v in e.items() if k not in ("waited", "window")} for e in events]
    assert all(a != b for a, b in itertools.pairwise(shown))
