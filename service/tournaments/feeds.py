"""The tournaments the event streams of one process follow, each read once per poll however
many streams follow it (`GET /v1/tournaments/{id}/events/stream`).

A tournament changes a few times a round, so its streams poll the store; without sharing, a
process with N streams of one tournament read it N times a second. Here the streams of one
tournament share a `Feed`: when the tournament is due to be read, the first stream to ask
reads it for all (no task runs beside the streams: nothing to stop at shutdown, nothing left
behind), and every other stream waits for that read. A reader whose stream is cancelled
mid-read (its client left) hands the turn on: the next stream to ask reads.

No adapter here: `load` is the use case's `Tournaments.get` (a matchmaking ticket's streams
share feeds the same way: `load` is then `Matchmaking.load`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Generic, Protocol, TypeVar

POLL = 1.0  # seconds between two reads of a followed tournament


class Followed(Protocol):
    """What a feed follows: a record whose version grows with each save, and that ends."""

    @property
    def version(self) -> int: ...

    @property
    def ended(self) -> bool: ...


R = TypeVar("R", bound=Followed)
Load = Callable[[str], Awaitable[R]]


class Feed(Generic[R]):
    """One tournament as this process's streams last read it: the record, or the error of
    the last read (`latest` raises it), and when it is due to be read again."""

    def __init__(self, tournament_id: str, load: Load[R], poll: float, clock: Callable[[], float]):
        self.tournament_id = tournament_id
        self._load = load
        self._poll = poll
        self._clock = clock
        self._record: R | None = None
        self._error: BaseException | None = None
        self._due = 0.0  # read at once when first followed
        self._reading = False
        self._read = asyncio.Event()  # set (and replaced) after every read
        self.followers = 0

    async def after(self, version: int, wait: float) -> R | None:
        """The tournament once its version is past `version` (or it ended), None when
        `wait` seconds passed first; raises what the store raised."""
        give_up = self._clock() + wait
        while True:
            record = self._latest()
            if record is not None and (record.version > version or record.ended):
                return record
            now = self._clock()
            if not self._reading and now >= self._due:
                await self._read_once()
                continue
            if now >= give_up:
                return None
            read = self._read
            until = give_up if self._reading else min(give_up, self._due)
            with suppress(TimeoutError):
                await asyncio.wait_for(read.wait(), timeout=max(until - now, 0.0))

    def _latest(self) -> R | None:
        if self._error is not None:
            raise self._error
        return self._record

    async def _read_once(self) -> None:
        self._reading = True
        try:
            self._record, self._error = await self._load(self.tournament_id), None
        except Exception as exc:  # every follower sees it (`_latest`)
            self._error = exc
        finally:  # cancelled mid-read too: the next stream to ask reads
            self._reading = False
            self._due = self._clock() + self._poll
            read, self._read = self._read, asyncio.Event()
            read.set()


class TournamentFeeds(Generic[R]):
    """The feeds of one process, by tournament id; a feed is dropped with its last stream."""

    def __init__(
        self, load: Load[R], *, poll: float = POLL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._load = load
        self._poll = poll
        self._clock = clock
        self._feeds: dict[str, Feed[R]] = {}

    def __len__(self) -> int:
        return len(self._feeds)

    @asynccontextmanager
    async def follow(self, tournament_id: str) -> AsyncIterator[Feed[R]]:
        feed = self._feeds.get(tournament_id)
        if feed is None:
            feed = self._feeds[tournament_id] = Feed(
                tournament_id, self._load, self._poll, self._clock
            )
        feed.followers += 1
        try:
            yield feed
        finally:
            feed.followers -= 1
            if feed.followers == 0 and self._feeds.get(tournament_id) is feed:
                del self._feeds[tournament_id]
