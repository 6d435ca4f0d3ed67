"""`infra.redis_batch.Batcher` on a real Redis: the commands of one event-loop turn go in one
pipeline, each caller gets its own reply or error, a pipeline that cannot be sent fails each
caller with StoreUnavailable, what comes while the pipelines allowed are under way goes in
one pipeline after, WAIT ends a pipeline that holds a replicated command."""

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

pytestmark = pytest.mark.integration


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


def test_one_turns_commands_go_in_one_pipeline_each_with_its_reply(redis_url: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        pipelines = Counted(client)
        batch = Batcher(pipelines, unreachable)
        await client.set(f"{prefix}:a", "1")
        replies = await asyncio.gather(
            batch.call("GET", f"{prefix}:a"),
            batch.call("INCR", f"{prefix}:n"),
            batch.call("INCR", f"{prefix}:n"),
            batch.call("GET", f"{prefix}:missing"),
        )
        assert replies == [b"1", 1, 2, None]
        assert len(pipelines.sent) == 1
        assert [c[0] for c in pipelines.sent[0]] == ["GET", "INCR", "INCR", "GET"]
        # a later turn: a pipeline of its own
        assert await batch.call("GET", f"{prefix}:n") == b"2"
        assert len(pipelines.sent) == 2
        await batch.close()

    run(redis_url, body)


def test_an_error_reply_is_its_callers_alone(redis_url: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch = Batcher(Counted(client), unreachable)
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


def test_a_pipeline_that_cannot_be_sent_fails_each_caller_unavailable() -> None:
    async def body() -> None:
        client = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
        batch = Batcher(lambda: client.pipeline(transaction=False), unreachable)
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


def test_commands_queued_while_the_pipelines_are_under_way_go_in_one_after(redis_url: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        pipelines = Counted(client)
        batch = Batcher(pipelines, unreachable, most_in_flight=1)
        # the first pipeline is under way 0.2 s (BLPOP on an empty list): every command of
        # the turns meanwhile waits for it
        first = batch.call("BLPOP", f"{prefix}:empty", 0.2)
        await asyncio.sleep(0)
        later = []
        for _ in range(5):
            later.append(batch.call("INCR", f"{prefix}:n"))
            await asyncio.sleep(0)
        assert await first is None
        assert sorted(await asyncio.gather(*later)) == [1, 2, 3, 4, 5]
        assert [len(p) for p in pipelines.sent] == [1, 5]
        await batch.close()

    run(redis_url, body)


def test_a_replicated_command_ends_its_pipeline_with_wait(redis_url: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        pipelines = Counted(client)
        batch = Batcher(pipelines, unreachable, wait=(1, 50))
        plain, replicated = await asyncio.gather(
            batch.call("INCR", f"{prefix}:n"),
            batch.call("INCR", f"{prefix}:n", replicated=True),
        )
        # this Redis has no replica: WAIT answers 0 after its 50 ms
        assert (plain, replicated) == (1, (2, 0))
        assert pipelines.sent[0][-1] == ("WAIT", 1, 50)
        alone = await batch.call("INCR", f"{prefix}:n")
        assert alone == 3
        assert pipelines.sent[1][-1][0] == "INCR"  # no WAIT: none asked
        await batch.close()

    run(redis_url, body)


def test_a_cancelled_caller_leaves_the_others_their_replies(redis_url: str) -> None:
    async def body(client: Redis, prefix: str) -> None:
        batch = Batcher(Counted(client), unreachable)
        gone = asyncio.ensure_future(batch.call("INCR", f"{prefix}:n"))
        kept = batch.call("INCR", f"{prefix}:n")
        gone.cancel()
        assert await kept == 2  # the cancelled caller's command was sent all the same
        with pytest.raises(asyncio.CancelledError):
            await gone
        await batch.close()

    run(redis_url, body)
