"""The production game store on Redis (standalone, replicated or Cluster): `RedisGameStore`.

A create writes the game, its first events and its idempotent response, a save checks the
version and writes state, events and idempotent response, each in one Lua call (one round
trip, shared with the other loads, saves and creates of the same event-loop turn:
`infra.redis_batch`); every key expires together after the configured time. A save that
loses the race gets the stored record back from the same call, so the caller can retry on
it without another round trip. The other slots a change touches (the due index, the live
set, the listings) follow in one more round trip, only when they change.

Where it keeps what: `infra.redis_layout`; its scripts: `infra.redis_scripts`; its
listings: `infra.redis_listings`; the news of its logs: `infra.redis_news`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from infra.quotas import RedisQuotas
from infra.redis_batch import Batcher
from infra.redis_client import (
    connect,
    replicated,
    unavailable_on_connection_errors,
    unreachable,
)
from infra.redis_layout import (
    DUE_TAG,
    INDEX_PREFIX,
    LIVE_KEY,
    WAIT_MARK,
    decode_remembered,
    game_keys,
    record_decoder,
    record_encoder,
    stream_events,
)
from infra.redis_listings import RECHECK_SECONDS, RedisListings
from infra.redis_news import RedisNews
from infra.redis_scripts import (
    CREATE,
    DUE_CLAIM,
    DUE_SETTLE,
    DUE_UNCLAIMED,
    DUE_WRITE,
    LOG_READ,
    RELAY_READ,
    RELAYED,
    SAVE,
    header,
    unpacked,
)
from infra.store_rules import due_moved_earlier, memberships
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


class RedisGameStore(RedisListings, GameStore):
    """Every port of the game store on one Redis client (`connect`): its games, their logs
    and the relay's cursor in them, the due index, the quotas, the listings
    (`RedisListings`); `wait_replicas`: a write is acknowledged once that many replicas
    have it (WAIT; not on a Cluster)."""

    def __init__(
        self,
        url: str,
        *,
        cluster: bool = False,
        sentinels: Sequence[tuple[str, int]] = (),
        master: str = "mymaster",
        wait_replicas: int = 0,
        wait_timeout: float = 1.0,
        max_connections: int = 200,
        live_key: str = LIVE_KEY,
        live_recheck: float = RECHECK_SECONDS,
        index_prefix: str = INDEX_PREFIX,
        due_tag: str = DUE_TAG,
    ) -> None:
        if wait_replicas and cluster:
            raise ValueError("waiting for replicas (WAIT) is not supported on a Redis Cluster")
        self._cluster = cluster
        self._url = url
        self._sentinels = (sentinels, master)
        # a save is acknowledged once this many replicas have it (0: once the primary has it)
        self._wait = (wait_replicas, int(wait_timeout * 1000))
        self._live_key = live_key
        self._live_recheck = live_recheck
        self._index_prefix = index_prefix
        due = f"{{{due_tag}}}"
        self._due_keys = [due, f"{due}:stamp", f"{due}:claims"]
        # event streams cost no connection of their own: a process's one reader subscribes
        # to its watched games' logs on one Pub/Sub connection (one per Cluster node)
        self._redis = connect(
            url,
            cluster=cluster,
            sentinels=sentinels,
            master=master,
            max_connections=max_connections,
        )
        self._create = self._redis.register_script(CREATE)
        self._save = self._redis.register_script(SAVE)
        self._due_write = self._redis.register_script(DUE_WRITE)
        self._due_claim = self._redis.register_script(DUE_CLAIM)
        self._due_unclaimed = self._redis.register_script(DUE_UNCLAIMED)
        self._due_settle = self._redis.register_script(DUE_SETTLE)
        self._relay_read = self._redis.register_script(RELAY_READ)
        self._log_read = self._redis.register_script(LOG_READ)
        self._relayed = self._redis.register_script(RELAYED)
        self._quotas = RedisQuotas(self._redis)
        # the hot commands (a game's load, save and create, an idempotency entry's read)
        # of one event-loop turn go in one pipeline
        pool = None if cluster else self._redis.connection_pool
        self._batch = Batcher(self._pipeline, unreachable, pool=pool, wait=self._wait)

    async def _script(self, script, keys: list[str], args: list, *, replicated: bool = False):
        """A registered script's EVALSHA, queued in this turn's pipeline (`Batcher`); one
        Redis lost (a restart) is loaded and run again alone. `replicated`: `(reply,
        replicas that confirmed it)`."""
        try:
            return await self._batch.call(
                "EVALSHA", script.sha, len(keys), *keys, *args, replicated=replicated
            )
        except redis_errors.NoScriptError:
            reply = await script(keys=keys, args=args)
            if not replicated:
                return reply
            await self._replicas_caught_up()
            return reply, self._wait[0]

    async def open(self) -> None:
        """On a Cluster, learn its nodes and slots now. redis-py 8.1 discovers them on the
        first command; many first commands at once can make it rediscover them and close the
        connections the others are opening (AttributeError: 'NoneType' object has no
        attribute 'writelines', seen with many concurrent claims on a fresh client)."""
        if self._cluster:
            with unavailable_on_connection_errors():
                await self._redis.initialize()

    async def create(
        self,
        record: GameRecord,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
    ) -> None:
        if record.due is not None:  # first: a stored game always has its entry (LT: a
            # create over a game of the same id, refused below, never delays that one's)
            with unavailable_on_connection_errors():
                await self._due_write(
                    keys=self._due_keys, args=[record.id, record.stamp, record.due, "LT"]
                )
        args = [
            header(f"{record.stamp} {ttl * 1000}", events),
            record_encoder.encode(record),
            b"".join(e.data for e in events),
        ]
        if idempotency is not None:
            args += (idempotency[0], record_encoder.encode(idempotency[1]))
        with unavailable_on_connection_errors():
            created = await self._script(self._create, list(game_keys(record.id)), args)
        if created != 1:  # taken: 0, or what that game remembers under the entry's key
            remembered = decode_remembered(created) if isinstance(created, bytes) else None
            if remembered is not None and self._wait[0]:
                await self._replicas_caught_up()
            raise GameExists(record.id, remembered=remembered)
        now = time.time()
        pipe = self._pipeline()
        if not record.ended:
            pipe.zadd(self._live_key, {record.id: now})
        for index in record.indexes():
            pipe.zadd(self._index_key(index), {record.id: record.created_at})
        self._wait_in(pipe)
        with unavailable_on_connection_errors():
            self._replicated(await pipe.execute())

    def _wait_in(self, pipe) -> None:
        """WAIT, last in a pipeline: it returns once the replicas have every write before it
        (those of other connections too: replication is one stream)."""
        if self._wait[0]:
            pipe.execute_command("WAIT", *self._wait)

    def _replicated(self, results: list) -> None:
        """A save the replicas did not confirm in time is not acknowledged (`replicated`)."""
        if self._wait[0]:  # else no WAIT in the pipeline (it may be empty: a game ended)
            replicated(results[-1], self._wait)

    def _pipeline(self):
        """One round trip for commands on keys of different slots (not a transaction)."""
        return self._redis.pipeline() if self._cluster else self._redis.pipeline(transaction=False)

    async def load(self, game_id: str) -> GameRecord | None:
        with unavailable_on_connection_errors():
            blob = await self._batch.call("HGET", game_keys(game_id)[0], "rec")
        return None if blob is None else record_decoder.decode(blob)

    async def write(self, save: Save) -> None:
        record, expected_stamp, events, ttl, idempotency, previous = save
        args: list[bytes | str] = [
            header(f"{expected_stamp} {record.stamp} {ttl * 1000}", events),
            record_encoder.encode(record),
            b"".join(e.data for e in events),
        ]
        if idempotency is not None:
            args += (idempotency[0], record_encoder.encode(idempotency[1]))
        ended = record.ended
        left, joined = memberships(record, previous)
        due = ended or due_moved_earlier(record, previous)
        after = due or left or joined  # else no other round trip (an action, most of the time)
        wait = bool(self._wait[0]) and not after  # else the WAIT ends the round trip after
        with unavailable_on_connection_errors():
            saved = await self._script(
                self._save, list(game_keys(record.id)), args, replicated=wait
            )
        if wait:
            saved, replicas = saved
        if saved != 1:  # the stored record, or 0 when the game is gone
            current = record_decoder.decode(saved) if isinstance(saved, bytes) else None
            raise VersionConflict(record.id, current=current)
        if wait:
            self._replicated([replicas])
        if after:
            await self._after_save(record, ended, left, joined, due=due)

    async def _after_save(
        self, record: GameRecord, ended: bool, left: set[str], joined: set[str], *, due: bool
    ) -> None:
        """The other slots a save changes, in one round trip: the game's due entry (its
        due, or removed once ended), the live set, listings."""
        pipe = self._pipeline()
        due_args = [record.id, record.stamp, "" if ended else record.due, ""]
        if due:  # EVALSHA first, sent as is: a pipeline of a registered script would ask
            # SCRIPT EXISTS first, and redis-py's cluster pipeline refuses `evalsha()` (a
            # script may touch several slots; this one touches one)
            keys = self._due_keys
            pipe.execute_command("EVALSHA", self._due_write.sha, len(keys), *keys, *due_args)
        if ended:
            pipe.zrem(self._live_key, record.id)
        for index in left:
            pipe.zrem(self._index_key(index), record.id)
        for index in joined:
            pipe.zadd(self._index_key(index), {record.id: record.created_at})
        self._wait_in(pipe)
        with unavailable_on_connection_errors():
            results = await pipe.execute(raise_on_error=False)
            if due and isinstance(results[0], redis_errors.NoScriptError):  # Redis restarted
                results[0] = await self._due_write(keys=self._due_keys, args=due_args)
            failed = [result for result in results if isinstance(result, Exception)]
            if failed:
                raise failed[0]
            self._replicated(results)

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        if limit <= 0:
            return []  # redis-py refuses COUNT 0 (raw DataError); Redis would read it as "all"
        with unavailable_on_connection_errors():
            packed = await self._log_read(keys=[game_keys(game_id)[1]], args=[max(after, 0), limit])
        return unpacked(packed)

    async def events_of(self, after: Mapping[str, int], limit: int) -> dict[str, list[StoredEvent]]:
        if not after or limit <= 0:
            return {}
        ids = list(after)
        pipe = self._pipeline()
        for game_id in ids:
            pipe.xrange(
                game_keys(game_id)[1], min=f"(0-{max(after[game_id], 0)}", max="+", count=limit
            )
        with unavailable_on_connection_errors():
            found = await pipe.execute()
        return {g: stream_events(entries) for g, entries in zip(ids, found, strict=True) if entries}

    def log_news(self) -> LogNews:
        if self._cluster:  # ClusterPubSub: a connection of its own per node, from the nodes'
            return RedisNews(self._redis, cluster=True)
        # standalone: a client of its own, so the subscriber never starts on a pooled
        # connection that a Redis restart left dead (it would fail at once, and every
        # stream of the process with it); closed with the subscriber
        sentinels, master = self._sentinels
        if sentinels:  # whichever server the sentinels name as the primary, after a failover too
            client = connect(self._url, sentinels=sentinels, master=master, max_connections=4)
        else:
            client = Redis.from_url(self._url, socket_connect_timeout=5)
        return RedisNews(client, cluster=False)

    async def idempotent_response(self, game_id: str, key: str) -> IdempotentResponse | None:
        with unavailable_on_connection_errors():
            blob = await self._batch.call("HGET", game_keys(game_id)[2], key)
        if blob is None:
            return None
        if self._wait[0]:  # a replay: of a write that may be one the replicas never confirmed
            await self._replicas_caught_up()
        return decode_remembered(blob)

    async def _replicas_caught_up(self) -> None:
        """WAIT for every write the primary has taken so far. WAIT waits for the connection's
        own last write, so one is made first (a counter of its own, in no game's slot)."""
        with unavailable_on_connection_errors():
            async with self._redis.client() as connection:
                await connection.incr(WAIT_MARK)
                self._replicated([await connection.execute_command("WAIT", *self._wait)])

    async def relay_read(self, game_id: str) -> tuple[GameRecord | None, list[StoredEvent]]:
        with unavailable_on_connection_errors():
            found = await self._script(self._relay_read, list(game_keys(game_id)[:2]), [])
        if not found:
            return None, []
        blob, packed = found
        return record_decoder.decode(blob), unpacked(packed)

    async def relayed(self, game_id: str, seq: int) -> None:
        with unavailable_on_connection_errors():
            await self._script(self._relayed, [game_keys(game_id)[0]], [seq])

    # -- QuotaStore: on this store's Redis (`infra.quotas`)
    async def hold(self, key: str, item: str, score: float, limit: int, ttl: int) -> float | None:
        with unavailable_on_connection_errors():
            return await self._quotas.hold(key, item, score, limit, ttl)

    async def held(self, key: str) -> list[tuple[str, float]]:
        with unavailable_on_connection_errors():
            return await self._quotas.held(key)

    async def drop(self, key: str, entries: Sequence[tuple[str, float]]) -> None:
        with unavailable_on_connection_errors():
            await self._quotas.drop(key, entries)

    async def due_games(self, now: float, limit: int) -> list[DueGame]:
        if limit <= 0:
            return []
        keys = [self._due_keys[0], self._due_keys[2]]
        with unavailable_on_connection_errors():
            found = await self._due_unclaimed(keys=keys, args=[now, limit])
        return [DueGame(found[i].decode(), float(found[i + 1])) for i in range(0, len(found), 2)]

    async def claim_due(self, game_id: str, now: float, lease: float) -> bool:
        keys = [self._due_keys[0], self._due_keys[2]]
        with unavailable_on_connection_errors():
            return await self._due_claim(keys=keys, args=[game_id, now, now + lease]) == 1

    async def settle_due(self, game_id: str, due: float | None, stamp: int | None) -> None:
        args = [game_id, "", ""] if stamp is None else [game_id, stamp, "" if due is None else due]
        with unavailable_on_connection_errors():
            await self._due_settle(keys=self._due_keys, args=args)

    async def ping(self) -> None:
        with unavailable_on_connection_errors():
            await self._redis.ping()

    async def close(self) -> None:
        await self._batch.close()
        await self._redis.aclose()
