"""The event streams of tournaments (`GET /v1/tournaments/{id}/events/stream`) of one
process, pushed as the games' are (service/watchers.py): one subscriber per process
(`TournamentStore.tournament_news`: on Redis, sharded Pub/Sub on the channel each save
publishes to; embedded, the store's own saves) says which followed tournaments were saved;
the process's one reader reads each of them once and encodes it once (`encode`: the
tournament as getTournament shows it), and every stream of that tournament is woken and sends
that block. N streams of a tournament cost one read per change, not one per stream.

- **Start**: a stream starts from the tournament as its request read it (the 404 check),
  then joins its tournament; the first stream of a tournament watches it, and the
  subscriber reports it once its subscription holds, so a change between the two is read.
- **Resume**: `Last-Event-ID` is the last version seen: the stream sends the tournament when
  its version passed it (the latest state, not every one in between: as before).
- **Lost hints**: a followed tournament not reported for a keep-alive period is read again
  (once per process), so a lost wake-up delays a change, never loses it.
- **End**: once the tournament ended (finished, stopped) or is gone; a store failure ends
  every stream with a `reconnect` event and the reader subscribes again, with backoff.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from service.cancellation import stop_if_cancelled
from service.model import TournamentRecord
from service.ports import LogNews, StoreUnavailable, TournamentStore
from service.watchers import (
    CHECKS_AT_ONCE,
    KEEPALIVE,
    OPENING,
    RECONNECT_DELAYS,
    RETRY_MS,
    Slot,
    reconnect,
)

log = logging.getLogger("ten.streams")


class _Followed:
    """A followed tournament: its latest version read, encoded once; its streams."""

    __slots__ = ("block", "ended", "id", "quiet_since", "streams", "version")

    def __init__(self, tournament_id: str, now: float) -> None:
        self.id = tournament_id
        self.version = -1
        self.block = b""
        self.ended = False
        self.streams: set[_Stream] = set()
        self.quiet_since = now


class _Stream:
    __slots__ = ("after", "ending", "woken")

    def __init__(self, after: int) -> None:
        self.after = after
        self.woken = asyncio.Event()
        self.ending: bytes | None = None  # None: it goes on; b"": end quietly; else last block

    def end(self, last: bytes) -> None:
        if self.ending is None:
            self.ending = last
        self.woken.set()


class TournamentWatchers:
    """Every tournament stream of the process, and the one reader that serves them."""

    def __init__(
        self,
        store: TournamentStore,
        encode: Callable[[TournamentRecord], bytes],
        *,
        keepalive: float = 15.0,
    ) -> None:
        self.store = store
        self.encode = encode
        self.keepalive = keepalive
        self._followed: dict[str, _Followed] = {}
        self._news: LogNews | None = None
        self._failures = 1

    async def stream(
        self, record: TournamentRecord, after: int, slot: Slot
    ) -> AsyncIterator[bytes]:
        """The SSE body of one stream: the opening comment, the tournament each time its
        version passes `after`, keep-alive comments; it ends once the tournament ended."""
        stream = _Stream(after)
        followed = self._join(record, stream)
        try:
            yield OPENING
            while True:
                stream.woken.clear()
                if stream.ending is not None:
                    if stream.ending:
                        yield stream.ending
                    return
                if followed.version > stream.after:
                    stream.after = followed.version
                    yield followed.block
                    continue
                if followed.ended:
                    return
                try:
                    async with asyncio.timeout(self.keepalive):
                        await stream.woken.wait()
                except TimeoutError:
                    yield KEEPALIVE
        finally:
            self._leave(followed, stream)
            slot.release()

    def _join(self, record: TournamentRecord, stream: _Stream) -> _Followed:
        followed = self._followed.get(record.id)
        if followed is None:
            followed = _Followed(record.id, asyncio.get_running_loop().time())
            self._followed[record.id] = followed
            if self._news is not None:
                self._news.watch(record.id)
        followed.streams.add(stream)
        self._advance(followed, record)
        return followed

    def _leave(self, followed: _Followed, stream: _Stream) -> None:
        followed.streams.discard(stream)
        if not followed.streams and self._followed.get(followed.id) is followed:
            del self._followed[followed.id]
            if self._news is not None:
                self._news.unwatch(followed.id)

    def _advance(self, followed: _Followed, record: TournamentRecord) -> None:
        """A newer version read: encoded once, every stream of the tournament woken."""
        if record.version <= followed.version:
            return
        followed.version, followed.ended = record.version, record.ended
        data = self.encode(record)
        followed.block = b"id: %d\r\nevent: tournament\r\ndata: %s\r\n\r\n" % (record.version, data)
        for stream in followed.streams:
            stream.woken.set()

    def _end_all(self, last: bytes) -> int:
        ended = 0
        for followed in list(self._followed.values()):
            for stream in list(followed.streams):
                stream.end(last)
                ended += 1
        return ended

    # -- the reader

    async def run_forever(self) -> None:
        """The process's one reader: subscribed to the followed tournaments' saves, it
        reads each reported one once; when the store fails, every stream ends and it
        subscribes again."""
        while True:
            stop_if_cancelled()  # a cancellation a library dropped (service.cancellation)
            news = self.store.tournament_news()
            self._news = news
            for tournament_id in self._followed:
                news.watch(tournament_id)
            try:
                await self._read_news(news)
            except StoreUnavailable as exc:
                ended = self._end_all(reconnect("store_unavailable", RETRY_MS, 3 * RETRY_MS))
                log.warning(
                    "tournament streams: the store is unavailable (%s); %d ended", exc, ended
                )
                self._failures += 1
            except Exception:  # a bug: the streams end, the reader starts again
                ended = self._end_all(reconnect("internal_error", RETRY_MS, 3 * RETRY_MS))
                log.exception("tournament streams: the reader failed; %d stream(s) ended", ended)
                self._failures += 1
            finally:
                self._news = None
                await news.close()
            await asyncio.sleep(RECONNECT_DELAYS[min(self._failures, len(RECONNECT_DELAYS)) - 1])

    async def _read_news(self, news: LogNews) -> None:
        loop = asyncio.get_running_loop()
        tick = min(self.keepalive, 1.0)
        while True:
            stop_if_cancelled()
            reported = await news.next(tick)
            now = loop.time()
            quiet = {t for t, f in self._followed.items() if now - f.quiet_since >= self.keepalive}
            wanted = [t for t in reported | quiet if t in self._followed]
            for start in range(0, len(wanted), CHECKS_AT_ONCE):
                await self._read(wanted[start : start + CHECKS_AT_ONCE], now)
            if wanted:
                self._failures = 0

    async def _read(self, batch: list[str], now: float) -> None:
        records = await asyncio.gather(*(self.store.load_tournament(t) for t in batch))
        for tournament_id, record in zip(batch, records, strict=True):
            followed = self._followed.get(tournament_id)
            if followed is None:
                continue
            followed.quiet_since = now
            if record is None:  # gone
                for stream in list(followed.streams):
                    stream.end(b"")
            else:
                self._advance(followed, record)
