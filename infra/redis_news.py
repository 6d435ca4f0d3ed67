"""`LogNews` on Redis (`RedisGameStore.log_news`): the growth of the watched games' logs,
from the last seq the save scripts publish on each log's shard channel."""

from __future__ import annotations

import asyncio
import contextlib
import re

from infra.redis_client import unavailable_on_connection_errors
from infra.redis_layout import game_keys
from service.core.ports import StoreUnavailable

_READ_SECONDS = 1.0  # one wait of a Pub/Sub read (a reader task checks for closing between two)
_LOG_CHANNEL = re.compile(rb"^\{game:(.+)\}:log$")


class RedisNews:
    """`LogNews` on Redis: sharded Pub/Sub. The save scripts SPUBLISH the last seq on the
    log key's shard channel; this subscriber SSUBSCRIBEs to the logs of the watched games.
    Standalone, one connection (redis-py's PubSub); on a Cluster, redis-py's ClusterPubSub
    keeps one per node holding a watched game's slot, follows slot moves and subscribes again
    after a reconnection. One reader task per connection turns its messages into reports: a
    subscription confirmed (the first, and again after a reconnection) or a publish."""

    def __init__(self, client, *, cluster: bool) -> None:
        self._cluster = cluster
        self._client = client
        self._pubsub = client.pubsub()
        self._changes: dict[str, bool] = {}  # game id -> watch (True) or unwatch, to send
        self._applying: asyncio.Task | None = None
        self._readers: dict[str, asyncio.Task] = {}  # connection (node name; "" standalone)
        self._reported: set[str] = set()
        self._woken = asyncio.Event()
        self._failure: StoreUnavailable | None = None

    def watch(self, game_id: str) -> None:
        self._change(game_id, True)

    def unwatch(self, game_id: str) -> None:
        self._change(game_id, False)

    def _change(self, game_id: str, on: bool) -> None:
        self._changes[game_id] = on
        if self._applying is None or self._applying.done():
            self._applying = asyncio.create_task(self._guarded(self._apply()))

    async def _apply(self) -> None:
        """Send the (un)subscriptions asked for (sending only: the confirmations come to the
        readers), then start a reader for each connection that has none yet."""
        while self._changes:
            game_id, on = self._changes.popitem()
            channel = game_keys(game_id)[1]
            if on:
                await self._pubsub.ssubscribe(channel)
            else:
                await self._pubsub.sunsubscribe(channel)
            self._start_readers()

    def _start_readers(self) -> None:
        names = list(self._pubsub.node_pubsub_mapping) if self._cluster else [""]
        for name in names:
            if name not in self._readers or self._readers[name].done():
                reader = self._guarded(self._read(name))
                self._readers[name] = asyncio.create_task(reader)

    async def _read(self, name: str) -> None:
        node = self._client.get_node(node_name=name) if self._cluster else None
        while not self._cluster or name in self._pubsub.node_pubsub_mapping:
            if self._cluster:
                message = await self._pubsub.get_sharded_message(
                    target_node=node, timeout=_READ_SECONDS
                )
            else:
                message = await self._pubsub.get_message(timeout=_READ_SECONDS)
            if message is None or message["type"] not in ("smessage", "ssubscribe"):
                continue
            found = _LOG_CHANNEL.match(message["channel"])
            if found:
                self._reported.add(found.group(1).decode())
                self._woken.set()

    async def _guarded(self, work) -> None:
        """Run a task of this subscriber; the store unreachable ends the subscriber."""
        try:
            with unavailable_on_connection_errors():
                await work
        except StoreUnavailable as exc:
            self._failure = exc
            self._woken.set()

    async def next(self, timeout: float) -> set[str]:
        if not self._reported and self._failure is None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._woken.wait()
        self._woken.clear()
        if self._failure is not None:
            raise self._failure
        found, self._reported = self._reported, set()
        return found

    async def close(self) -> None:
        tasks = [*self._readers.values(), *([self._applying] if self._applying else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):  # closing what may be broken already
            await self._pubsub.aclose()
            if not self._cluster:
                await self._client.aclose()
