"""The server-sent event stream `GET /v1/games/{id}/events/stream`, on Redis and embedded.

A reader connected with no credentials gets, in order, `id: <seq>`, `event: <type>` and
`data: <the event JSON>` for the actions another client posts; it resumes exactly after
`Last-Event-ID` (or `?after=`); comment lines keep an idle connection alive; the stream
ends after `game_finished`. Every check reads with a timeout: a stream that stalls fails.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import httpx
import pytest

from tests.support.streams import AsyncTable, Block, Stream, http_client, open_stream

# the module's tests on one worker: its module fixture `keepalive_server` (a process per store)
# and `idle_blocks` (an idle stream) is made once (--dist loadgroup would spread them over the
# workers, and each would make it)
pytestmark = pytest.mark.xdist_group("e2e-keepalive-servers")

KEEPALIVE = 0.5  # seconds, for the keep-alive tests
DECK = ["R1", "$2", "W1", "B3", "R2", "$1", "G5", "O4", "B#", "R6", "G1", "$3"]


def run(coroutine_function, base: str) -> None:
    async def main() -> None:
        async with http_client(base) as http:
            await coroutine_function(http)

    asyncio.run(main())


async def play_to_end(table: AsyncTable, rng: random.Random) -> None:
    for _ in range(500):
        if table.finished:
            return
        await table.step(rng)
    raise AssertionError("the game did not end")


# ------------------------------------------------------------------ tests


def test_a_reader_follows_the_actions_of_another_client(server: str) -> None:
    async def body(http: httpx.AsyncClient) -> None:
        table = await AsyncTable.create(http, 2, DECK)
        rng = random.Random("e2e/sse-live")
        async with (
            http_client(server) as reader,
            open_stream(reader, table.id) as stream,
        ):
            opening = await stream.block()
            assert opening is not None
            assert not opening.is_event
            streamed = await stream.events(2)
            assert [e["type"] for e in streamed] == ["game_started", "turn_started"]
            while not table.finished:
                produced = await table.step(rng)
                arrived = await stream.events(len(produced))
                assert arrived == produced
                streamed.extend(arrived)
            assert streamed[-1]["type"] == "game_finished"
            # the stream ends after game_finished
            assert await stream.block() is None
            assert stream.ended
        assert streamed == await table.log()

    run(body, server)


def test_resume_after_last_event_id_or_after(server: str) -> None:
    async def body(http: httpx.AsyncClient) -> None:
        table = await AsyncTable.create(http, 1, DECK)
        rng = random.Random("e2e/sse-resume")
        for _ in range(3):
            await table.step(rng)
        log = await table.log()
        last = log[-1]["seq"]
        assert last >= 5
        starts = {
            "header_0": ({"Last-Event-ID": "0"}, {}, 0),
            "header_2": ({"Last-Event-ID": "2"}, {}, 2),
            "header_last_but_one": ({"Last-Event-ID": str(last - 1)}, {}, last - 1),
            "header_last": ({"Last-Event-ID": str(last)}, {}, last),
            "after_3": ({}, {"after": 3}, 3),
            "after_last": ({}, {"after": last}, last),
            "header_wins_over_after": ({"Last-Event-ID": "4"}, {"after": 1}, 4),
        }
        async with http_client(server) as reader:
            streams: dict[str, Stream] = {}
            contexts = []
            try:
                for name, (headers, params, _) in starts.items():
                    context = open_stream(reader, table.id, headers, **params)
                    streams[name] = await context.__aenter__()
                    contexts.append(context)
                # the backlog: exactly the events after the start, no gap, no duplicate
                for name, (_, _, start) in starts.items():
                    backlog = await streams[name].events(last - start)
                    assert backlog == log[start:], name
                # then the live events, to every reader
                while not table.finished:
                    produced = await table.step(rng)
                    for name, stream in streams.items():
                        assert await stream.events(len(produced)) == produced, name
                for name, stream in streams.items():
                    assert await stream.event() is None, name
            finally:
                for context in reversed(contexts):
                    await context.__aexit__(None, None, None)

        # a finished game: every start replays exactly its tail, then the stream ends
        full = await table.log()
        async with http_client(server) as reader:
            for start in (0, 1, len(full) // 2, len(full) - 1):
                async with open_stream(reader, table.id, {"Last-Event-ID": str(start)}) as stream:
                    assert await stream.rest() == full[start:]
                async with open_stream(reader, table.id, after=start) as stream:
                    assert await stream.rest() == full[start:]

    run(body, server)


def test_the_stream_needs_no_token(client: httpx.Client, server: str) -> None:
    created = client.post("/v1/games", json={"players": [{"name": "Ann"}], "deck": DECK})
    game_id = created.json()["id"]

    async def body(http: httpx.AsyncClient) -> None:
        async with open_stream(http, game_id) as stream:
            assert [e["seq"] for e in await stream.events(2)] == [1, 2]

    run(body, server)
    missing = client.get("/v1/games/0123456789abcdef0123/events/stream")
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("application/problem+json")


# ------------------------------------------------------------------ keep-alive


@pytest.fixture(scope="module", params=["redis", "embedded"])
def keepalive_server(request: pytest.FixtureRequest, start_server) -> Iterator[str]:
    """A process that sends a keep-alive comment after half an idle second."""
    env = {"TEN_SSE_KEEPALIVE": str(KEEPALIVE)}
    if request.param == "redis":
        env["TEN_REDIS_URL"] = request.getfixturevalue("redis_url")
    with start_server(**env) as base:
        yield base


def _idle_blocks(keepalive_server: str, seconds: float) -> list[Block]:
    """The blocks an idle stream sends in `seconds` (after the first two events)."""
    found: list[Block] = []

    async def body(http: httpx.AsyncClient) -> None:
        table = await AsyncTable.create(http, 1, DECK)
        async with open_stream(http, table.id) as stream:
            found.append(await stream.block())
            assert len(await stream.events(2)) == 2
            loop = asyncio.get_running_loop()
            deadline = loop.time() + seconds
            while loop.time() < deadline:
                block = await stream.block(timeout=4 * KEEPALIVE)
                assert block is not None
                found.append(block)
            # after idling, the stream still delivers the next action's events
            produced = await table.step(random.Random(0))
            assert await stream.events(len(produced)) == produced

    run(body, keepalive_server)
    return found


@pytest.fixture(scope="module")
def idle_blocks(keepalive_server: str) -> list[Block]:
    return _idle_blocks(keepalive_server, 4.5 * KEEPALIVE)


def test_idle_stream_gets_keepalive_comments(idle_blocks: list[Block]) -> None:
    idle = idle_blocks[1:]
    assert len(idle) >= 2, [b.fields for b in idle]
    for block in idle:
        assert not block.is_event
        assert block.comments, block.fields


def test_keepalive_blocks_are_comments_only(idle_blocks: list[Block]) -> None:
    for block in [*idle_blocks[1:], idle_blocks[0]]:  # the keep-alives, then the opening
        assert block.get("data") is None, (block.comments, block.fields)


def test_resuming_a_finished_game_stream_ends(keepalive_server: str) -> None:
    async def body(http: httpx.AsyncClient) -> None:
        table = await AsyncTable.create(http, 1, ["R1", "R2"])
        await play_to_end(table, random.Random(1))
        last = (await table.log())[-1]
        assert last["type"] == "game_finished"
        response = await http.send(
            http.build_request(
                "GET",
                f"/v1/games/{table.id}/events/stream",
                headers={"Last-Event-ID": str(last["seq"])},
            ),
            stream=True,
        )
        try:
            if response.status_code == 204:
                return
            stream = Stream(response)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 4 * KEEPALIVE
            while loop.time() < deadline:
                try:
                    block = await stream.block(timeout=deadline - loop.time())
                except TimeoutError:
                    break
                if block is None:
                    return
                assert not block.is_event
            raise AssertionError("the stream of a finished game is still open")
        finally:
            await response.aclose()

    run(body, keepalive_server)
