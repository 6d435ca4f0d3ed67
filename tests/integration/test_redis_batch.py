"""`infra.redis_batch.Batcher` on a real Redis: the commands of one event-loop turn go in one
pipeline, each caller gets its own reply or error, a pipeline that cannot be sent fails each
caller with StoreUnavailable, what comes while the pipelines allowed are under way goes in
one pipeline after, WAIT ends a pipeline that holds a replicated command. Each both ways the
batcher sends: on connections of its own made by the client's pool (standalone, Sentinel),
and as redis-py pipelines (a Cluster); a connection of its own that Redis closed fails its
pipeline's callers and connects again for the next, and closing the batcher closes them."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

import pytest
from redis import exceptions as redis_errors
from redis.asyncio import Redis

from infra.redis_batch import Batcher
from infra.redis_client import unreachable
from service.core.ports import StoreUnavailable
from tests.servers import RedisServer

SENDING = ["connections", "pipelines"]


class Counted:
    """Pipelines of a real client, each one's commands noted when it is sent."""

    def __init__(self, client: Redis) -> None:
        self.client = client
        self.sent: list[list[tuple]] = []

    def __call__(self):
        pipe = self.client.pipeline(transaction=False)
        execute = pipe.execute

        async def noted(raise_on_error: bool = True):
            self.sent.append([tuple(c[0]) for c in pipe.command_stack])
            return await execute(raise_on_error=raise_on_error)

        pipe.execute = noted
        return pipe


class CountedPool:
    """The client's pool, for a batcher that sends on connections of its own: what each of
    them sends at once is noted."""

    def __init__(self, client: Redis, sent: list[list[tuple]]) -> None:
        self.pool = client.connection_pool
        self.sent = sent

    def make_connection(self):
        conn = self.pool.make_connection()
        pack = conn.pack_commands

        def noted(commands):
            commands = [tuple(c) for c in commands]
            self.sent.append(commands)
            return pack(commands)

        conn.pack_commands = noted
        return conn


def batcher(client: Redis, sending: str, **options) -> tuple[Batcher, list[list[tuple]]]:
    """A batcher sending one way, and what it sent (one list of commands a round trip)."""
    pipelines = Counted(client)
    pool = CountedPool(client, pipelines.sent) if sending == "connections" else None
    return Batcher(pipelines, unreachable, pool=pool, **options), pipelines.sent


def run(url: str, body: Callable[[Redis, str], Awaitable[None]]) -> None:
    async def main() -> None:
        client = Redis.from_url(url)
        prefix = f"batch-test:{secrets.token_hex(6)}"
        try:
            await body(client, prefix)
        finally:
            keys = await client.keys(f"{prefix}*")
            if keys:
                await client.delete(*keys)
            await client.aclose()

    asyncio.run(main())


@pytest.mark.parametrize("sending", SENDING)
def test_one_turns_commands_go_in_one_pipeline_each_with_its_reply(
    redis_url: str, sending: str
) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch, sent = batcher(client, sending)
        await client.set(f"{prefix}:a", "1")
        replies = await asyncio.gather(
            batch.call("GET", f"{prefix}:a"),
            batch.call("INCR", f"{prefix}:n"),
            batch.call("INCR", f"{prefix}:n"),
            batch.call("GET", f"{prefix}:missing"),
        )
        assert replies == [b"1", 1, 2, None]
        assert len(sent) == 1
        assert [c[0] for c in sent[0]] == ["GET", "INCR", "INCR", "GET"]
        # a later turn: a pipeline of its own
        assert await batch.call("GET", f"{prefix}:n") == b"2"
        assert len(sent) == 2
        await batch.close()

    run(redis_url, body)


@pytest.mark.parametrize("sending", SENDING)
def test_an_error_reply_is_its_callers_alone(redis_url: str, sending: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch, _ = batcher(client, sending)
        await client.set(f"{prefix}:text", "not a number")
        results = await asyncio.gather(
            batch.call("INCR", f"{prefix}:text"),
            batch.call("EVALSHA", "0" * 40, 0),
            batch.call("INCR", f"{prefix}:n"),
            return_exceptions=True,
        )
        assert isinstance(results[0], redis_errors.ResponseError)
        assert isinstance(results[1], redis_errors.NoScriptError)
        assert results[2] == 1
        await batch.close()

    run(redis_url, body)


@pytest.mark.parametrize("sending", SENDING)
def test_a_pipeline_that_cannot_be_sent_fails_each_caller_unavailable(sending: str) -> None:
    async def body() -> None:
        client = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
        batch, _ = batcher(client, sending)
        try:
            results = await asyncio.gather(
                batch.call("GET", "a"), batch.call("GET", "b"), return_exceptions=True
            )
        finally:
            await batch.close()
            await client.aclose()
        assert all(isinstance(r, StoreUnavailable) for r in results), results
        assert results[0] is not results[1]  # one exception each: no shared traceback
        assert isinstance(results[0].__cause__, redis_errors.ConnectionError)

    asyncio.run(body())


@pytest.mark.parametrize("sending", SENDING)
def test_commands_queued_while_the_pipelines_are_under_way_go_in_one_after(
    redis_url: str, sending: str
) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch, sent = batcher(client, sending, most_in_flight=1)
        # the first pipeline is under way until the list it waits on is pushed to (BLPOP):
        # every command of the turns meanwhile waits for it
        first = batch.call("BLPOP", f"{prefix}:l", 0)
        await asyncio.sleep(0)
        later = []
        for _ in range(5):
            later.append(batch.call("INCR", f"{prefix}:n"))
            await asyncio.sleep(0)
        await client.rpush(f"{prefix}:l", "x")
        assert list(await first) == [f"{prefix}:l".encode(), b"x"]  # a pipeline: a tuple
        assert sorted(await asyncio.gather(*later)) == [1, 2, 3, 4, 5]
        assert [len(p) for p in sent] == [1, 5]
        await batch.close()

    run(redis_url, body)


@pytest.mark.parametrize("sending", SENDING)
def test_a_replicated_command_ends_its_pipeline_with_wait(redis_url: str, sending: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch, sent = batcher(client, sending, wait=(1, 50))
        plain, replicated = await asyncio.gather(
            batch.call("INCR", f"{prefix}:n"),
            batch.call("INCR", f"{prefix}:n", replicated=True),
        )
        # this Redis has no replica: WAIT answers 0 after its 50 ms
        assert (plain, replicated) == (1, (2, 0))
        assert sent[0][-1] == ("WAIT", 1, 50)
        alone = await batch.call("INCR", f"{prefix}:n")
        assert alone == 3
        assert sent[1][-1][0] == "INCR"  # no WAIT: none asked
        await batch.close()

    run(redis_url, body)


@pytest.mark.parametrize("sending", SENDING)
def test_a_cancelled_caller_leaves_the_others_their_replies(redis_url: str, sending: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch, _ = batcher(client, sending)
        gone = asyncio.ensure_future(batch.call("INCR", f"{prefix}:n"))
        kept = batch.call("INCR", f"{prefix}:n")
        gone.cancel()
        assert await kept == 2  # the cancelled caller's command was sent all the same
        with pytest.raises(asyncio.CancelledError):
            await gone
        await batch.close()

    run(redis_url, body)


def test_a_connection_redis_closed_fails_its_callers_then_connects_again(redis_url: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch, sent = batcher(client, "connections", most_in_flight=1)
        name = prefix.replace(":", "-")
        assert await batch.call("CLIENT", "SETNAME", name) == b"OK"
        ids = [c["id"] for c in await client.client_list() if c.get("name") == name]
        assert len(ids) == 1  # the batcher's one connection
        await client.client_kill_filter(_id=ids[0])
        results = await asyncio.gather(
            batch.call("INCR", f"{prefix}:n"),
            batch.call("INCR", f"{prefix}:n"),
            return_exceptions=True,
        )
        assert all(isinstance(r, StoreUnavailable) for r in results), results
        # the next pipeline connects again (the same connection object, a new socket)
        assert await batch.call("INCR", f"{prefix}:n") == 1
        assert len(sent) == 3
        await batch.close()

    run(redis_url, body)


def test_closing_the_batcher_closes_its_connections(redis_url: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch, sent = batcher(client, "connections", most_in_flight=2)
        name = prefix.replace(":", "-")
        # a first pipeline blocked on an empty list until it is pushed to, then a second
        # one meanwhile: two connections of the batcher's own, both named
        first = [batch.call("CLIENT", "SETNAME", name), batch.call("BLPOP", f"{prefix}:l", 0)]
        while len(sent) < 1:  # the first is sent
            await asyncio.sleep(0)
        second = batch.call("CLIENT", "SETNAME", name)
        assert await second == b"OK"

        async def named() -> int:
            return sum(c.get("name") == name for c in await client.client_list())

        assert await named() == 2
        await client.rpush(f"{prefix}:l", "x")
        assert await asyncio.gather(*first) == [b"OK", [f"{prefix}:l".encode(), b"x"]]
        await batch.close()
        async with asyncio.timeout(60):  # a guard only: the server reads the close at once
            while await named():  # it drops a closed client once it reads the close
                await asyncio.sleep(0.01)

    run(redis_url, body)


@pytest.mark.parametrize("sending", SENDING)
def test_a_frozen_redis_fails_each_pipeline_unavailable_and_the_next_connects_again(
    sending: str,
) -> None:
    """Redis stopped (SIGSTOP: it accepts connections and answers nothing): every pipeline
    fails StoreUnavailable after the client's timeout, the first on its read, the next ones
    on connecting again, never hanging; once Redis runs again the next one is answered."""

    async def body(server: RedisServer) -> None:
        client = Redis.from_url(server.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        batch, _ = batcher(client, sending)
        try:
            assert await batch.call("SET", "a", "1") in (True, b"OK")
            with server.frozen():
                for _ in range(3):
                    async with asyncio.timeout(60):  # a guard: it fails well before
                        with pytest.raises(StoreUnavailable):
                            await batch.call("GET", "a")
            assert await batch.call("GET", "a") == b"1"
        finally:
            await batch.close()
            await client.aclose()

    server = RedisServer()
    try:
        asyncio.run(body(server))
    finally:
        server.close()
