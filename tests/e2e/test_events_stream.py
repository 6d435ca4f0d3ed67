"""The server-sent event stream `GET /v1/games/{id}/events/stream`, on Redis and embedded.

A reader connected with no credentials gets, in order, `id: <seq>`, `event: <type>` and
`data: <the event JSON>` for the actions another client posts; it resumes exactly after
`Last-Event-ID` (or `?after=`); comment lines keep an idle connection alive; the stream
ends after `game_finished`. Every check reads with a timeout: a stream that stalls fails.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from tests.e2e.helpers import bearer

pytestmark = pytest.mark.e2e

TIMEOUT = 5.0
KEEPALIVE = 0.5  # seconds, for the keep-alive tests
DECK = ["R1", "$2", "W1", "B3", "R2", "$1", "G5", "O4", "B#", "R6", "G1", "$3"]


class Block:
    """One SSE block: its comment lines and its fields, in order."""

    def __init__(self) -> None:
        self.comments: list[str] = []
        self.fields: list[tuple[str, str]] = []

    def __bool__(self) -> bool:
        return bool(self.comments or self.fields)

    def get(self, name: str) -> str | None:
        values = [v for k, v in self.fields if k == name]
        return "\n".join(values) if values else None

    @property
    def is_event(self) -> bool:
        return self.get("id") is not None or self.get("event") is not None


class Stream:
    """An open event stream, read block by block with a timeout."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()
        self.ended = False

    async def block(self, timeout: float = TIMEOUT) -> Block | None:
        """The next block, or None once the server has ended the stream."""
        block = Block()
        while True:
            try:
                line = await asyncio.wait_for(anext(self._lines), timeout)
            except StopAsyncIteration:
                self.ended = True
                return block or None
            if line == "":
                if block:
                    return block
                continue
            if line.startswith(":"):
                block.comments.append(line[1:].strip())
                continue
            name, _, value = line.partition(":")
            block.fields.append((name, value.removeprefix(" ")))

    async def event(self, timeout: float = TIMEOUT) -> dict[str, Any] | None:
        """The next event (comment and `retry` blocks skipped), or None at the end."""
        while True:
            block = await self.block(timeout)
            if block is None:
                return None
            if block.is_event:
                data = json.loads(block.get("data") or "null")
                assert block.get("id") == str(data["seq"]), block.fields
                assert block.get("event") == data["type"], block.fields
                return data

    async def events(self, count: int) -> list[dict[str, Any]]:
        found = []
        for _ in range(count):
            event = await self.event()
            assert event is not None, f"the stream ended after {len(found)} of {count} events"
            found.append(event)
        return found

    async def rest(self) -> list[dict[str, Any]]:
        """Every event until the server ends the stream."""
        found = []
        while (event := await self.event()) is not None:
            found.append(event)
        return found


@asynccontextmanager
async def open_stream(
    http: httpx.AsyncClient, game_id: str, headers: dict[str, str] | None = None, **params: Any
) -> AsyncIterator[Stream]:
    async with http.stream(
        "GET", f"/v1/games/{game_id}/events/stream", headers=headers or {}, params=params
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        yield Stream(response)


class AsyncTable:
    def __init__(self, http: httpx.AsyncClient, body: dict[str, Any]) -> None:
        self.http = http
        self.id = body["id"]
        self.tokens = {s["seat"]: s["token"] for s in body["seats"]}
        self.body = body

    @classmethod
    async def create(cls, http: httpx.AsyncClient, humans: int, deck: list[str]) -> AsyncTable:
        players = [{"name": f"p{i}"} for i in range(humans)]
        response = await http.post(
            "/v1/games", json={"players": players, "deck": deck, "starting_seat": 0}
        )
        assert response.status_code == 201, response.text
        return cls(http, response.json())

    async def step(self, rng: random.Random) -> list[dict[str, Any]]:
        """One action of the seat to act, chosen among its legal actions: its events."""
        seat = self.body["to_act"]
        token = self.tokens[seat]
        legal = (await self.http.get(f"/v1/games/{self.id}", headers=bearer(token))).json()
        action = rng.choice(legal["legal_actions"])
        response = await self.http.post(
            f"/v1/games/{self.id}/actions", json=action, headers=bearer(token)
        )
        assert response.status_code == 200, response.text
        self.body = response.json()
        return self.body["events"]

    async def log(self, after: int = 0) -> list[dict[str, Any]]:
        response = await self.http.get(f"/v1/games/{self.id}/events", params={"after": after})
        assert response.status_code == 200
        return response.json()["events"]

    @property
    def finished(self) -> bool:
        return self.body["status"] == "finished"


async def no_server_errors(response: httpx.Response) -> None:
    if response.status_code >= 500:
        await response.aread()
        raise AssertionError(f"{response.request.url} -> {response.status_code}: {response.text}")


def http_client(base: str) -> httpx.AsyncClient:
    """An async client that fails the test on any 5xx answer."""
    return httpx.AsyncClient(
        base_url=base, timeout=TIMEOUT, event_hooks={"response": [no_server_errors]}
    )


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
