"""The Redis client of every Redis adapter (the game store, the queues, the tournaments, the
rate limit), and what its failures mean to them.

`connect` makes the client: on a Redis Cluster, on the primary Redis Sentinel names, or on
one server, its pooled connections checked before a command after a pause.
`unavailable_on_connection_errors` turns Redis unreachable into StoreUnavailable (503), and
`replicated` a write the replicas did not confirm in time (WAIT).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection, SSLConnection, parse_url
from redis.asyncio.sentinel import (
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
    SentinelManagedSSLConnection,
)

from service.core.ports import StoreUnavailable


def connect(
    url: str,
    *,
    cluster: bool = False,
    sentinels: Sequence[tuple[str, int]] = (),
    master: str = "mymaster",
    max_connections: int = 200,
    **kwargs,
):
    """A Redis client: on a Redis Cluster (`cluster`), on the primary that `sentinels` name
    as `master` (Redis Sentinel: the URL gives only the database and the credentials; the
    client asks the sentinels again after a failover), else on the URL's server. Standalone
    and through sentinels, on a pool that waits for a free connection (5 s) rather than
    failing. The client owns its pool: `aclose()` closes both."""
    if cluster:
        return RedisCluster.from_url(url, max_connections=max_connections, **kwargs)
    kwargs.setdefault("timeout", 5)
    kwargs.setdefault("health_check_interval", HEALTH_CHECK_SECONDS)
    ssl = url.lower().startswith("rediss://")
    if sentinels:
        options = parse_url(url)
        options.pop("host", None)
        options.pop("port", None)
        options.pop("connection_class", None)
        options["connection_class"] = _SentinelSSLConnection if ssl else _SentinelConnection
        options.update(kwargs)
        sentinel = Sentinel(
            list(sentinels),
            # a sentinel that is down is passed over after this long, not the pool's 5 s
            sentinel_kwargs={"socket_timeout": 1.0, "socket_connect_timeout": 1.0},
        )
        return sentinel.master_for(
            master,
            connection_pool_class=_SentinelBlockingPool,
            max_connections=max_connections,
            **options,
        )
    kwargs["connection_class"] = _SSLConnection if ssl else _Connection
    return Redis.from_pool(
        BlockingConnectionPool.from_url(url, max_connections=max_connections, **kwargs)
    )


# A pooled connection idle this long is PINGed before its next command (redis-py's health
# check): one that Redis closed meanwhile (a restart, a failover) is found then, not by the
# command, which would fail (a 503) with "Connection closed by server."
HEALTH_CHECK_SECONDS = 1.0


class _Rechecked:
    """A connection whose failed health check opens a new connection and PINGs once more.
    Only the PING is sent again: redis-py's retries (none here) would send a command again,
    and a save whose reply was lost might then be applied twice. The new connection's
    handshake asks for no health check of its own: each one would fail the same way against
    a stalled Redis and connect again, one socket timeout after another, for as long as the
    stall lasts; so a check costs at most the PING's timeout and the handshake's."""

    _rechecking = False

    async def check_health(self) -> None:
        if self._rechecking or not (
            self.health_check_interval
            and asyncio.get_running_loop().time() > self.next_health_check
        ):
            return
        self._rechecking = True
        try:
            try:
                await self._send_ping()
            except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as error:
                await self._ping_failed(error, 1)
                await self.connect()  # a new connection (a Sentinel's: to the primary now)
                await self._send_ping()
        finally:
            self._rechecking = False


class _Connection(_Rechecked, Connection):
    pass


class _SSLConnection(_Rechecked, SSLConnection):
    pass


class _SentinelConnection(_Rechecked, SentinelManagedConnection):
    pass


class _SentinelSSLConnection(_Rechecked, SentinelManagedSSLConnection):
    pass


class _SentinelBlockingPool(SentinelConnectionPool, BlockingConnectionPool):
    """redis-py's Sentinel pool (connections to whichever server the sentinels name as the
    primary) that waits for a free connection, as the standalone one does."""


# RedisClusterException: no node of the cluster could be reached (at start, or once the
# slots must be refreshed) -- not a ConnectionError in redis-py
_UNAVAILABLE = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    OSError,
    redis_errors.ClusterDownError,
    redis_errors.RedisClusterException,
)


class _UnavailableOnConnectionErrors:
    """`with unavailable_on_connection_errors():` Redis unreachable -> StoreUnavailable.
    A plain class, not @contextmanager: it wraps every store call, and a generator-based
    one costs more each time."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is not None and unreachable(exc):
            raise StoreUnavailable(str(exc)) from exc
        return False


def unreachable(exc: BaseException) -> bool:
    """Whether `exc` says that Redis cannot be reached (now): not an answer of Redis."""
    return isinstance(exc, _UNAVAILABLE) or _closed_transport(exc)


def _closed_transport(exc: BaseException) -> bool:
    """uvloop (uvicorn's loop) refuses a write on a connection the server has closed with a
    RuntimeError ("unable to perform operation on <TCPTransport closed=True ...>; the handler
    is closed"), which redis-py lets through when it happens as a connection opens: Redis
    shutting down closes the connections it has just accepted."""
    return isinstance(exc, RuntimeError) and "the handler is closed" in str(exc)


_unavailable = _UnavailableOnConnectionErrors()


def replicated(acked: int, wait: tuple[int, int]) -> None:
    """WAIT's answer `acked` for a write that wants `wait` = (replicas, timeout ms): one the
    replicas did not confirm in time is not acknowledged: StoreUnavailable (503, as when the
    primary cannot be reached: the client retries with the same Idempotency-Key). It may
    still be on the primary, and kept if the primary lives."""
    wanted, timeout_ms = wait
    if wanted and acked < wanted:
        raise StoreUnavailable(
            f"the save reached {acked} of {wanted} replica(s) in {timeout_ms} ms"
        )


async def replicated_script(
    client: Any, script: Any, keys: list, args: list, wait: tuple[int, int]
) -> Any:
    """A registered script's answer, acknowledged by the replicas `wait` asks for (none: the
    script alone; else the script and a WAIT in one pipeline, on one connection: `replicated`)."""
    if not wait[0]:
        return await script(keys=keys, args=args)
    pipe = client.pipeline(transaction=False)
    await script(keys=keys, args=args, client=pipe)
    pipe.execute_command("WAIT", *wait)
    answer, acked = await pipe.execute()
    replicated(acked, wait)
    return answer


def unavailable_on_connection_errors() -> _UnavailableOnConnectionErrors:
    """The guard around a call to Redis: Redis unreachable raises StoreUnavailable."""
    return _unavailable
