"""The embedded game store: one process, no server. Used when no Redis URL is configured.

It keeps the same contract as the Redis store (tests/integration/test_store_contract.py
runs against both): compare-and-set saves, an append-only event log per game, idempotent
responses (kept with their game: written by its create or save, gone with it), expiry,
listings (each a list of `(created_at, id)` kept sorted: a page is a bisect and a walk
back) and the due index (`_DueIndex`). A lock makes each
operation atomic even if called from several threads, and the subscribers to the logs' growth
(`log_news`) are told on their own event loop, whichever loop or thread saves.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from infra.quotas import MemoryQuotas
from infra.store_rules import due_moved_earlier, listed, memberships
from service.core.model import GameRecord
from service.core.ports import (
    DueGame,
    GameExists,
    GameStore,
    IdempotentResponse,
    LogNews,
    Save,
    StoredEvent,
    VersionConflict,
)


class _Entry:
    __slots__ = ("events", "expires_at", "idempotency", "record", "relayed")

    def __init__(self, record: GameRecord, events: list[StoredEvent], expires_at: float) -> None:
        self.record = record
        self.events = events
        self.idempotency: dict[str, IdempotentResponse] = {}
        self.expires_at = expires_at
        self.relayed = 0  # the relay cursor (service.reactions.relay): events up to it were relayed


class _DueIndex:
    """The due index (`GameStore.due_games`) in dicts: game id -> (when due, stamp), the
    entries sorted by (when, id) for `due` (a bisect and a walk), and claims (id -> lease
    end). The caller holds the store's lock."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[float, int]] = {}
        self.order: list[tuple[float, str]] = []
        self.claims: dict[str, float] = {}

    def write(self, game_id: str, at: float | None, stamp: int, *, lower: bool = False) -> None:
        """Set the entry to `at` (None: remove it) unless it holds a newer stamp than
        `stamp`; `lower`: never move it later."""
        held = self.entries.get(game_id)
        if held is not None and held[1] > stamp:
            return
        if at is None:
            self.remove(game_id)
            return
        if held is not None:
            del self.order[bisect.bisect_left(self.order, (held[0], game_id))]
            if lower:
                at = min(at, held[0])
        self.entries[game_id] = (at, stamp)
        bisect.insort(self.order, (at, game_id))

    def remove(self, game_id: str) -> None:
        """The entry and its claim go, whatever they hold."""
        held = self.entries.pop(game_id, None)
        if held is not None:
            del self.order[bisect.bisect_left(self.order, (held[0], game_id))]
        self.claims.pop(game_id, None)

    def due(self, now: float, limit: int) -> list[DueGame]:
        """The due entries not under a live claim, earliest first."""
        found = []
        for at, game_id in self.order:
            if at > now or len(found) >= limit:
                break
            lease = self.claims.get(game_id)
            if lease is None or lease <= now:
                found.append(DueGame(game_id, at))
        return found

    def claim(self, game_id: str, now: float, lease: float) -> bool:
        held = self.entries.get(game_id)
        if held is None or held[0] > now or self.claims.get(game_id, now) > now:
            return False
        self.claims[game_id] = now + lease
        return True


class MemoryGameStore(GameStore):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._games: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._news: dict[str, set[_MemoryNews]] = {}  # game id -> its subscribers (log_news)
        self._creates = 0
        self._listings: dict[str, list[tuple[float, str]]] = {}  # index -> (created_at, id)
        self._due = _DueIndex()
        self._quotas = MemoryQuotas()

    def _live(self, game_id: str) -> _Entry | None:
        entry = self._games.get(game_id)
        if entry is not None and entry.expires_at <= self._clock():
            self._expire(game_id)
            return None
        return entry

    def _expire(self, game_id: str) -> None:
        record = self._games.pop(game_id).record
        self._unlist(record, record.indexes())

    def _sweep(self) -> None:
        now = self._clock()
        for game_id in [g for g, e in self._games.items() if e.expires_at <= now]:
            self._expire(game_id)

    async def create(
        self,
        record: GameRecord,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
    ) -> None:
        with self._lock:
            self._creates += 1
            if self._creates % 1000 == 0:
                self._sweep()
            taken = self._live(record.id)
            if taken is not None:
                found = None if idempotency is None else taken.idempotency.get(idempotency[0])
                raise GameExists(record.id, remembered=found)
            if record.due is not None:  # as on Redis: never moves an entry later
                self._due.write(record.id, record.due, record.stamp, lower=True)
            entry = self._games[record.id] = _Entry(record, list(events), self._clock() + ttl)
            if idempotency is not None:
                entry.idempotency[idempotency[0]] = idempotency[1]
            self._list(record, record.indexes())

    async def load(self, game_id: str) -> GameRecord | None:
        with self._lock:
            entry = self._live(game_id)
            return None if entry is None else entry.record

    async def write(self, save: Save) -> None:
        record, expected_stamp, events, ttl, idempotency, previous = save
        with self._lock:
            entry = self._live(record.id)
            if entry is None or entry.record.stamp != expected_stamp:
                raise VersionConflict(record.id, current=None if entry is None else entry.record)
            entry.record = record
            entry.events.extend(events)
            entry.expires_at = self._clock() + ttl
            if idempotency is not None:
                entry.idempotency[idempotency[0]] = idempotency[1]
            left, joined = memberships(record, previous)  # as read by the caller, as on Redis
            self._unlist(record, left)
            self._list(record, joined)
            if record.ended:
                self._due.write(record.id, None, record.stamp)
            elif due_moved_earlier(record, previous):
                self._due.write(record.id, record.due, record.stamp)
            subscribers = list(self._news.get(record.id, ())) if events else ()
        for news in subscribers:
            news.report(record.id)

    def _events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        entry = self._live(game_id)
        if entry is None or limit <= 0:
            return []
        start = bisect.bisect_right(entry.events, after, key=lambda event: event.seq)
        return entry.events[start : start + limit]

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        with self._lock:
            return self._events(game_id, after, limit)

    async def events_of(self, after: Mapping[str, int], limit: int) -> dict[str, list[StoredEvent]]:
        with self._lock:
            found = {game_id: self._events(game_id, seq, limit) for game_id, seq in after.items()}
        return {game_id: events for game_id, events in found.items() if events}

    def log_news(self) -> LogNews:
        return _MemoryNews(self)

    def _subscribe(self, news: _MemoryNews, game_id: str, on: bool) -> None:
        with self._lock:
            subscribers = self._news.setdefault(game_id, set())
            if on:
                subscribers.add(news)
            else:
                subscribers.discard(news)
            if not subscribers:
                del self._news[game_id]

    async def idempotent_response(self, game_id: str, key: str) -> IdempotentResponse | None:
        with self._lock:
            entry = self._live(game_id)
            return None if entry is None else entry.idempotency.get(key)

    async def live_games(self) -> int:
        with self._lock:
            self._sweep()
            return sum(not e.record.ended for e in self._games.values())

    async def relay_read(self, game_id: str) -> tuple[GameRecord | None, list[StoredEvent]]:
        with self._lock:
            entry = self._live(game_id)
            if entry is None:
                return None, []
            return entry.record, self._events(game_id, entry.relayed, len(entry.events))

    async def relayed(self, game_id: str, seq: int) -> None:
        with self._lock:
            entry = self._live(game_id)
            if entry is not None:
                entry.relayed = max(entry.relayed, seq)

    def _list(self, record: GameRecord, indexes: Iterable[str]) -> None:
        entry = (record.created_at, record.id)
        for index in indexes:
            listing = self._listings.setdefault(index, [])
            at = bisect.bisect_left(listing, entry)
            if listing[at : at + 1] != [entry]:
                listing.insert(at, entry)

    # -- QuotaStore: the quotas of this process (`infra.quotas`)
    async def hold(self, key: str, item: str, score: float, limit: int, ttl: int) -> float | None:
        return await self._quotas.hold(key, item, score, limit, ttl)

    async def held(self, key: str) -> list[tuple[str, float]]:
        return await self._quotas.held(key)

    async def drop(self, key: str, entries: Sequence[tuple[str, float]]) -> None:
        await self._quotas.drop(key, entries)

    def _unlist(self, record: GameRecord, indexes: Iterable[str]) -> None:
        for index in indexes:
            self._unlist_entry(index, (record.created_at, record.id))

    def _unlist_entry(self, index: str, entry: tuple[float, str]) -> None:
        listing = self._listings.get(index, [])
        at = bisect.bisect_left(listing, entry)
        if at < len(listing) and listing[at] == entry:
            del listing[at]
            if not listing:  # a player's listing goes with their last game
                del self._listings[index]

    async def list_games(
        self, index: str, before: tuple[float, str] | None, limit: int
    ) -> list[GameRecord]:
        found: list[GameRecord] = []
        with self._lock:
            listing = self._listings.get(index, [])
            at = len(listing) if before is None else bisect.bisect_left(listing, before)
            while at > 0 and len(found) < limit:
                at -= 1
                created_at, game_id = listing[at]
                entry = self._live(game_id)
                if entry is not None and listed(entry.record, index, created_at):
                    found.append(entry.record)
                elif listing[at : at + 1] == [(created_at, game_id)]:  # not dropped by _expire
                    del listing[at]  # the game left this listing unseen (a save without previous)
        return found

    async def due_games(self, now: float, limit: int) -> list[DueGame]:
        with self._lock:
            return self._due.due(now, limit)

    async def claim_due(self, game_id: str, now: float, lease: float) -> bool:
        with self._lock:
            return self._due.claim(game_id, now, lease)

    async def settle_due(self, game_id: str, due: float | None, stamp: int | None) -> None:
        with self._lock:
            self._due.claims.pop(game_id, None)
            if stamp is None:  # the game is gone
                self._due.remove(game_id)
            else:
                self._due.write(game_id, due, stamp)

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        return None


class _MemoryNews:
    """`LogNews` of the embedded store: a save with events reports its game to the
    subscribers watching it, on the subscriber's own event loop (a save may run on another
    loop or thread)."""

    def __init__(self, store: MemoryGameStore) -> None:
        self._store = store
        self._loop = asyncio.get_running_loop()
        self._reported: set[str] = set()
        self._woken = asyncio.Event()
        self._watched: set[str] = set()

    def watch(self, game_id: str) -> None:
        self._watched.add(game_id)
        self._store._subscribe(self, game_id, True)
        self._add(game_id)  # subscribed at once: the first report

    def unwatch(self, game_id: str) -> None:
        self._watched.discard(game_id)
        self._store._subscribe(self, game_id, False)

    def report(self, game_id: str) -> None:
        """From any thread."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._add(game_id)
        else:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
                self._loop.call_soon_threadsafe(self._add, game_id)

    def _add(self, game_id: str) -> None:
        self._reported.add(game_id)
        self._woken.set()

    async def next(self, timeout: float) -> set[str]:
        if not self._reported:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._woken.wait()
        self._woken.clear()
        found, self._reported = self._reported, set()
        return found

    async def close(self) -> None:
        for game_id in list(self._watched):
            self.unwatch(game_id)
