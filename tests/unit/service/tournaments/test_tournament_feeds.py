"""service.tournaments.feeds: the streams of one tournament in a process share its reads."""

from __future__ import annotations

import asyncio
import time

import msgspec

from domain.tournaments.rules import Settings
from service.core.model import TournamentRecord
from service.core.ports import StoreUnavailable
from service.tournaments.feeds import TournamentFeeds

POLL = 0.02


def record(version: int, status: str = "running") -> TournamentRecord:
    return TournamentRecord(
        id="t" * 20, name="Cup", organiser="platform", settings=Settings(), places=4,
        status=status, created_at=0.0, updated_at=0.0, version=version,  # type: ignore[arg-type]
    )  # fmt: skip


class Store:
    """The tournament as the store has it, and how often it was read."""

    def __init__(self) -> None:
        self.current = record(1)
        self.reads = 0
        self.fail: Exception | None = None
        self.hold: asyncio.Event | None = None  # a read waits for it when set

    async def load(self, tournament_id: str) -> TournamentRecord:
        self.reads += 1
        if self.hold is not None:
            await self.hold.wait()
        if self.fail is not None:
            raise self.fail
        return self.current


async def versions(feeds: TournamentFeeds, last: int) -> list[int]:
    """A stream's versions from its start until it saw `last`."""
    seen: list[int] = []
    after = 0
    async with feeds.follow("t" * 20) as feed:
        while after < last:
            got = await feed.after(after, wait=5.0)
            assert got is not None
            seen.append(got.version)
            after = got.version
    return seen


def test_many_streams_of_one_tournament_read_it_once_per_poll() -> None:
    store = Store()
    feeds = TournamentFeeds(store.load, poll=POLL)

    async def body() -> tuple[list[list[int]], float]:
        start = time.monotonic()  # the feeds' clock
        streams = [asyncio.create_task(versions(feeds, 3)) for _ in range(50)]
        await asyncio.sleep(POLL * 3)
        store.current = record(2)
        await asyncio.sleep(POLL * 3)
        store.current = record(3)
        seen = await asyncio.gather(*streams)
        assert len(feeds) == 0  # dropped with its last stream
        return seen, time.monotonic() - start

    seen, elapsed = asyncio.run(body())
    assert all(s == [1, 2, 3] for s in seen)
    # one read per poll at most, whatever the number of streams and however long the loop
    # took (50 streams polling on their own would read it 50 times a poll)
    assert store.reads <= elapsed / POLL + 1, (store.reads, elapsed)


def test_a_quiet_tournament_answers_none_after_the_wait() -> None:
    store = Store()
    feeds = TournamentFeeds(store.load, poll=POLL)

    async def body() -> tuple[object, object]:
        async with feeds.follow("t" * 20) as feed:
            first = await feed.after(0, wait=1.0)
            quiet = await feed.after(1, wait=POLL * 4)
            return first, quiet

    first, quiet = asyncio.run(body())
    assert isinstance(first, TournamentRecord)
    assert first.version == 1
    assert quiet is None


def test_a_stream_waiting_on_a_quiet_tournament_goes_on_reading_it() -> None:
    """While a stream waits, the feed reads the tournament every poll: a change made then is
    the stream's answer (waited for as facts: the reads seen, then the answer)."""
    store = Store()
    feeds = TournamentFeeds(store.load, poll=POLL)

    async def body() -> tuple[bool, TournamentRecord | None]:
        async with feeds.follow("t" * 20) as feed:
            await feed.after(0, wait=1.0)
            waiting = asyncio.create_task(feed.after(1, wait=60.0))
            async with asyncio.timeout(30):  # a failsafe: the reads come every POLL
                while store.reads < 3:
                    await asyncio.sleep(POLL)
            answered_early = waiting.done()
            store.current = record(2)
            return answered_early, await waiting

    answered_early, changed = asyncio.run(body())
    assert not answered_early
    assert changed is not None
    assert changed.version == 2


def test_an_ended_tournament_is_answered_whatever_the_version() -> None:
    store = Store()
    store.current = record(7, status="finished")
    feeds = TournamentFeeds(store.load, poll=POLL)

    async def body() -> TournamentRecord | None:
        async with feeds.follow("t" * 20) as feed:
            return await feed.after(7, wait=1.0)  # resumed at its last version

    got = asyncio.run(body())
    assert got is not None
    assert got.ended


def test_a_store_failure_reaches_every_stream() -> None:
    store = Store()
    feeds = TournamentFeeds(store.load, poll=POLL)

    async def one() -> str:
        async with feeds.follow("t" * 20) as feed:
            try:
                await feed.after(0, wait=1.0)
            except StoreUnavailable as exc:
                return str(exc)
            return "no error"

    async def body() -> list[str]:
        store.hold = hold = asyncio.Event()  # the first read waits: the streams all join
        streams = [asyncio.create_task(one()) for _ in range(5)]
        await asyncio.sleep(POLL)
        store.fail = StoreUnavailable("down")
        hold.set()
        return await asyncio.gather(*streams)

    assert asyncio.run(body()) == ["down"] * 5
    assert store.reads == 1


def test_a_reader_cancelled_mid_read_hands_the_turn_on() -> None:
    """The stream reading for all leaves (its client went away) while the store is slow:
    the others are not stranded, the next one reads."""
    store = Store()
    feeds = TournamentFeeds(store.load, poll=POLL)

    async def body() -> TournamentRecord | None:
        store.hold = asyncio.Event()
        async with feeds.follow("t" * 20) as feed:
            reader = asyncio.create_task(feed.after(0, wait=5.0))
            await asyncio.sleep(POLL)
            assert store.reads == 1  # the first read hangs
            other = asyncio.create_task(feed.after(0, wait=5.0))
            await asyncio.sleep(POLL)
            reader.cancel()
            store.hold = None  # the next read answers
            return await asyncio.wait_for(other, timeout=120.0)  # a guard, not a bound

    got = asyncio.run(body())
    assert got is not None
    assert got.version == 1
    assert store.reads == 2


def test_feeds_are_per_tournament() -> None:
    loads: list[str] = []

    async def load(tournament_id: str) -> TournamentRecord:
        loads.append(tournament_id)
        return msgspec.structs.replace(record(1), id=tournament_id)

    feeds = TournamentFeeds(load, poll=POLL)

    async def body() -> list[str]:
        async with feeds.follow("a" * 20) as a, feeds.follow("b" * 20) as b:
            assert len(feeds) == 2
            got = [await a.after(0, wait=1.0), await b.after(0, wait=1.0)]
        assert len(feeds) == 0
        return [r.id for r in got if r is not None]

    assert asyncio.run(body()) == ["a" * 20, "b" * 20]
    assert sorted(loads) == ["a" * 20, "b" * 20]
