"""The event streams of one process (`GET /v1/games/{id}/events/stream`), served by one reader.

A stream costs memory, not a store connection. One reader per process (`Watchers.run_forever`)
subscribes to the logs of the games its streams follow (`EventLog.log_news`: on Redis,
sharded Pub/Sub, one connection, one per Cluster node) and, at every wake-up, reads what is
new in those logs in one round trip (`EventLog.events_of`). Each event is encoded once as
an SSE block into its game's ring of the last `TEN_SSE_BUFFER` blocks; a stream is a cursor
(the seq it sent last) and a wake-up flag, and sends every block after its cursor in one
write. The log stays the source of truth: a wake-up only says "read"; a subscription, a
reconnection or a game quiet for a keep-alive period is read again, so a lost wake-up delays
an event, never loses it.

- **Start**: a stream reads its backlog from the store itself (pages of 1000, as before),
  then joins its game's ring; a stream whose cursor is older than the ring reads on from
  the store until it reaches the ring.
- **Caps**: `TEN_SSE_MAX_STREAMS` per process, `TEN_SSE_MAX_PER_CLIENT` per client address;
  past one, `admit` refuses before the response starts (503 / 429 with Retry-After).
- **Slow streams**: a stream that fell out of its game's ring (it was sent nothing while
  `TEN_SSE_BUFFER` events happened) is dropped: it ends with a `reconnect` event, and the
  client resumes with `Last-Event-ID`.
- **Store failure**: the reader's subscription or read failing ends every stream of the
  process with a `reconnect` event (reason `store_unavailable`), logged once for the episode,
  not per stream; the reader subscribes again, with backoff, and new streams start once the
  store answers (until then they are refused with 503 before they start).
- **Presence**: a stream of a seat's player (its seat token, or its player's JWT) says,
  for as long as it is open, that the player watches the game (`Presence`, shared by every
  replica: the turn notices of correspondence games skip a player who watches): said when
  it starts, again while it sends (keep-alives included), taken back when it ends; a
  replica killed with it open leaves a word that lapses on its own.
- **End**: after `game_finished`; a game that ended otherwise (aborted, abandoned,
  cancelled) or expired is found by the quiet-game check and its streams end, as before.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import NamedTuple, Protocol

import msgspec

from service.core.cancellation import stop_if_cancelled
from service.core.ports import EventLog, Games, LogNews, StoredEvent, StoreUnavailable
from service.correspondence.records import Presence

log = logging.getLogger("ten.streams")

PAGE = 1000  # events per read of a log
RETRY_MS = 2000  # the `retry:` of every stream: how long EventSource waits to reconnect
REFUSAL_RETRY_AFTER = 5  # seconds, on a refused stream (a full process or client)
# lines end in CRLF, as Litestar's ServerSentEvent ends them (the bytes did not change)
OPENING = b": ten event stream\r\nretry: 2000\r\n\r\n"
KEEPALIVE = b": keep-alive\r\n\r\n"
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 5.0)  # seconds before the reader subscribes again
CHECKS_AT_ONCE = 8  # quiet games looked at concurrently (as many store connections)
# store reads of streams starting (the game, its backlog) at once: a burst of thousands of
# streams does not open a connection of the store's pool for each
STARTING_READS = 8


class FollowedGames(Games, EventLog, Protocol):
    """What the reader and the streams starting read: the games' event logs and their news,
    and the games themselves (`load`: whether a game went quiet because it ended)."""


class StreamsRefused(Exception):
    """The process (`per_client` False) or the client holds as many streams as allowed."""

    def __init__(self, per_client: bool) -> None:
        super().__init__("per client" if per_client else "per process")
        self.per_client = per_client


class _Kind(msgspec.Struct):
    type: str


_kind = msgspec.json.Decoder(_Kind)


class Block(NamedTuple):
    """One event as an SSE block, encoded once for every stream of the process."""

    seq: int
    finished: bool  # game_finished: the stream ends after it
    data: bytes


def block(event: StoredEvent) -> Block:
    kind = _kind.decode(event.data).type
    data = b"id: %d\r\nevent: %s\r\ndata: %s\r\n\r\n" % (event.seq, kind.encode(), event.data)
    return Block(event.seq, kind == "game_finished", data)


def reconnect(reason: str, low_ms: int, high_ms: int) -> bytes:
    """The last block of a stream the server ends early: an event without `id` (the
    client's Last-Event-ID stays) saying why, and a `retry:` spread over [low, high] ms so
    that the streams of a process do not all come back in the same instant."""
    delay = random.randint(low_ms, high_ms)
    data = msgspec.json.encode({"type": "reconnect", "reason": reason, "retry_ms": delay})
    return b"event: reconnect\r\ndata: %s\r\nretry: %d\r\n\r\n" % (data, delay)


class _Game:
    """A followed game: the blocks after seq `base` up to `last` (a ring), its streams."""

    __slots__ = ("base", "blocks", "id", "last", "quiet_since", "streams")

    def __init__(self, game_id: str, last: int, size: int, now: float) -> None:
        self.id = game_id
        self.base = last
        self.last = last
        self.blocks: deque[Block] = deque(maxlen=size)
        self.streams: set[_Stream] = set()
        self.quiet_since = now

    def add(self, events: Iterable[StoredEvent]) -> bool:
        added = False
        for event in events:
            if event.seq > self.last:
                self.blocks.append(block(event))
                self.last = event.seq
                added = True
        if added:
            self.base = self.blocks[0].seq - 1
        return added

    def after(self, seq: int) -> list[Block] | None:
        """The blocks after `seq`, or None when the ring no longer reaches back to it."""
        if seq < self.base:
            return None
        found = []
        for b in reversed(self.blocks):
            if b.seq <= seq:
                break
            found.append(b)
        found.reverse()
        return found


class _Stream:
    """One open stream: its cursor, its wake-up flag, and why it must end (None: it goes on;
    b"": end quietly; else the last block to send)."""

    __slots__ = ("after", "ending", "game", "live", "woken")

    def __init__(self, after: int) -> None:
        self.after = after
        self.game: _Game | None = None
        self.live = False  # it has been served from the ring: falling out of it drops it
        self.woken = asyncio.Event()
        self.ending: bytes | None = None

    def end(self, last: bytes) -> None:
        if self.ending is None:
            self.ending = last
        self.woken.set()


class _Watching:
    """A seat's stream's word that its player watches the game (see the module docstring):
    said again once a third of its lifetime has passed; a presence store that fails is
    logged, and the stream goes on (the player may get a notice they did not need)."""

    __slots__ = ("game_id", "id", "presence", "said", "seat", "ttl")

    def __init__(self, presence: Presence, game_id: str, seat: int, ttl: float) -> None:
        self.presence, self.game_id, self.seat, self.ttl = presence, game_id, seat, ttl
        self.id = secrets.token_hex(8)
        self.said = 0.0

    async def say(self, force: bool = False) -> None:
        now = time.time()
        if not force and now - self.said < self.ttl / 3:
            return
        try:
            await self.presence.enter(self.game_id, self.seat, self.id, now + self.ttl)
            self.said = now
        except Exception as exc:
            log.warning("presence: game %s seat %d not said (%s)", self.game_id, self.seat, exc)

    async def unsay(self) -> None:
        try:
            await self.presence.leave(self.game_id, self.seat, self.id)
        except Exception as exc:  # its word lapses instead (a cancellation goes on up)
            log.info("presence: game %s seat %d left to lapse (%r)", self.game_id, self.seat, exc)


class Slot:
    """A stream admitted (`Watchers.admit`): released when its stream ends, or when it is
    dropped unused (a response never started)."""

    __slots__ = ("_client", "_watchers")

    def __init__(self, watchers: Watchers, client: str) -> None:
        self._watchers: Watchers | None = watchers
        self._client = client

    def release(self) -> None:
        if self._watchers is not None:
            self._watchers._release(self._client)
            self._watchers = None

    def __del__(self) -> None:
        self.release()


class Watchers:
    """Every event stream of the process, and the one reader that serves them."""

    def __init__(
        self,
        store: FollowedGames,
        *,
        max_streams: int = 10_000,
        max_per_client: int = 100,
        buffer: int = 256,
        keepalive: float = 15.0,
        presence: Presence | None = None,
        presence_ttl: float = 45.0,
    ) -> None:
        self.store = store
        self.presence = presence
        # a word outlives the keep-alive period thrice: a quiet stream says it again in time
        self.presence_ttl = max(presence_ttl, 3 * keepalive)
        self.max_streams = max_streams
        self.max_per_client = max_per_client
        self.buffer = buffer
        self.keepalive = keepalive
        self.open = 0
        self._per_client: dict[str, int] = {}
        self._games: dict[str, _Game] = {}
        self._news: LogNews | None = None
        self._failing = False  # a store failure was logged; reset once the reader reads again
        self._failures = 1  # reader failures in a row (1: the delay before a first subscriber)
        self.starting = asyncio.Semaphore(STARTING_READS)  # `async with` around a start's reads

    # -- admission

    def admit(self, client: str) -> Slot:
        """A slot for one more stream of `client`, or StreamsRefused (before the response)."""
        if self.open >= self.max_streams:
            raise StreamsRefused(per_client=False)
        held = self._per_client.get(client, 0)
        if self.max_per_client and held >= self.max_per_client:
            raise StreamsRefused(per_client=True)
        self.open += 1
        self._per_client[client] = held + 1
        return Slot(self, client)

    def _release(self, client: str) -> None:
        self.open -= 1
        held = self._per_client.get(client, 1) - 1
        if held:
            self._per_client[client] = held
        else:
            self._per_client.pop(client, None)

    # -- one stream

    async def stream(
        self, game_id: str, after: int, slot: Slot, seat: int | None = None
    ) -> AsyncIterator[bytes]:
        """The SSE body of one stream: the opening comment, the events after `after`, a
        keep-alive comment after each quiet keep-alive period; it ends after
        `game_finished`, when the game is gone or has ended, or with a `reconnect` event.
        `seat`: the stream is that seat's player's (their presence is said while it is open)."""
        stream = _Stream(after)
        watching = None
        if seat is not None and self.presence is not None:
            watching = _Watching(self.presence, game_id, seat, self.presence_ttl)
        try:
            if watching is not None:
                await watching.say(force=True)  # before the client sees the stream open
            yield OPENING
            while stream.ending is None:
                chunk = await self._next(game_id, stream)
                if watching is not None:
                    await watching.say()
                if chunk:
                    yield chunk
            if stream.ending:
                yield stream.ending
        except StoreUnavailable as exc:
            self._store_failed(exc, streams=1)
            yield reconnect("store_unavailable", RETRY_MS, 3 * RETRY_MS)
        finally:
            self._leave(stream)
            slot.release()
            if watching is not None:
                await watching.unsay()

    async def _next(self, game_id: str, stream: _Stream) -> bytes | None:
        """What the stream sends next (None: nothing yet; `stream.ending` set: it ends)."""
        game = stream.game
        blocks = None if game is None else game.after(stream.after)
        if blocks is None:
            if stream.live:  # it fell out of the ring: too slow
                stream.end(reconnect("too_slow", 0, RETRY_MS))
                return None
            return await self._catch_up(game_id, stream)
        stream.live = True
        if blocks:
            return self._send(stream, blocks)
        try:
            async with asyncio.timeout(self.keepalive):
                await stream.woken.wait()
        except TimeoutError:
            return KEEPALIVE
        stream.woken.clear()
        return None

    def _send(self, stream: _Stream, blocks: list[Block]) -> bytes:
        for i, b in enumerate(blocks):
            if b.finished:
                blocks = blocks[: i + 1]
                stream.end(b"")
                break
        stream.after = blocks[-1].seq
        return b"".join(b.data for b in blocks)

    async def _catch_up(self, game_id: str, stream: _Stream) -> bytes | None:
        """Read the stream's next page from the store; once it has read everything, it
        joins its game's ring (or ends: the game is gone, or ended with nothing more)."""
        async with self.starting:
            events = await self.store.events(game_id, stream.after, PAGE)
        if events:
            return self._send(stream, [block(event) for event in events])
        if stream.game is not None:  # behind the ring, yet nothing more in the log: expired
            stream.end(b"")
            return None
        async with self.starting:
            record = await self.store.load(game_id)
        if record is None:
            stream.end(b"")  # expired
        elif record.ended:
            # the final save may have landed between the two reads: its events are there now
            if record.state is None or record.state.last_seq <= stream.after:
                stream.end(b"")  # a reconnecting client gets an ended stream, not keep-alives
        else:
            self._join(game_id, stream, 0 if record.state is None else record.state.last_seq)
        return None

    def _join(self, game_id: str, stream: _Stream, end: int) -> None:
        """The stream joins its game's ring; a new ring starts where the stream's cursor
        is, or at the log's `end` if that is earlier: a client's cursor past the log (its
        stream is sent what comes after it) never moves where the ring every stream of the
        game shares starts."""
        game = self._games.get(game_id)
        if game is None:
            loop = asyncio.get_running_loop()
            game = _Game(game_id, min(stream.after, end), self.buffer, loop.time())
            self._games[game_id] = game
            if self._news is not None:
                self._news.watch(game_id)
        game.streams.add(stream)
        stream.game = game

    def _leave(self, stream: _Stream) -> None:
        game = stream.game
        if game is None:
            return
        stream.game = None
        game.streams.discard(stream)
        if not game.streams and self._games.get(game.id) is game:
            del self._games[game.id]
            if self._news is not None:
                self._news.unwatch(game.id)

    def _store_failed(self, exc: Exception, streams: int) -> None:
        """Logged once per failure, not once per stream."""
        if not self._failing:
            self._failing = True
            log.warning(
                "event streams: the game store is unavailable (%s); %d stream(s) ended with a "
                "`reconnect` event (clients resume with Last-Event-ID)",
                exc,
                streams,
            )

    # -- the reader

    async def run_forever(self) -> None:
        """The process's one reader: subscribed to the followed games' logs, it reads them
        at every wake-up; when the store fails, every stream ends and it starts again."""
        while True:
            stop_if_cancelled()  # a cancellation a library dropped (service.core.cancellation)
            news = self.store.log_news()
            self._news = news
            for game_id in self._games:
                news.watch(game_id)
            try:
                await self._read_news(news)
            except StoreUnavailable as exc:
                ended = self._end_all(reconnect("store_unavailable", RETRY_MS, 3 * RETRY_MS))
                self._store_failed(exc, ended)
                self._failures += 1
            except Exception:  # a bug: the streams end, the reader starts again
                ended = self._end_all(reconnect("internal_error", RETRY_MS, 3 * RETRY_MS))
                log.exception("event streams: the reader failed; %d stream(s) ended", ended)
                self._failures += 1
            finally:
                self._news = None
                await news.close()
            await asyncio.sleep(RECONNECT_DELAYS[min(self._failures, len(RECONNECT_DELAYS)) - 1])

    def _end_all(self, last: bytes) -> int:
        ended = 0
        for game in list(self._games.values()):
            for stream in list(game.streams):
                stream.end(last)
                ended += 1
        return ended

    async def _read_news(self, news: LogNews) -> None:
        loop = asyncio.get_running_loop()
        tick = min(self.keepalive, 1.0)
        while True:
            stop_if_cancelled()
            reported = await news.next(tick)
            now = loop.time()
            quiet = [g for g in self._games.values() if now - g.quiet_since >= self.keepalive]
            wanted = {g: self._games[g].last for g in reported if g in self._games}
            wanted.update((g.id, g.last) for g in quiet)
            grown = await self._read(wanted)
            for game in quiet:
                game.quiet_since = now
            for game_id in grown:
                self._games[game_id].quiet_since = now
            await self._check_quiet([g for g in quiet if g.id not in grown])
            if wanted:  # the store answered: a next failure is news again
                self._failing = False
                self._failures = 0

    async def _read(self, wanted: dict[str, int]) -> set[str]:
        """Read what is new in these logs (pages of PAGE), wake their streams; the games
        that had news."""
        grown: set[str] = set()
        while wanted:
            found = await self.store.events_of(wanted, PAGE)
            wanted = {}
            for game_id, events in found.items():
                game = self._games.get(game_id)
                if game is None or not game.add(events):
                    continue
                grown.add(game_id)
                for stream in game.streams:
                    stream.woken.set()
                if len(events) == PAGE:
                    wanted[game_id] = game.last
        return grown

    async def _check_quiet(self, games: list[_Game]) -> None:
        """Quiet games that ended without an event (aborted, abandoned, cancelled) or
        expired: their streams end, as a stream ended when it found its game so."""
        for start in range(0, len(games), CHECKS_AT_ONCE):
            batch = games[start : start + CHECKS_AT_ONCE]
            records = await asyncio.gather(*(self.store.load(g.id) for g in batch))
            for game, record in zip(batch, records, strict=True):
                if record is None or record.ended:
                    for stream in list(game.streams):
                        stream.end(b"")
