"""The event stream (SSE) read by tests: a parsed stream of blocks, a table playing over async
HTTP, and many streams opened at once (e2e, scale-out and fault tiers)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from tests.support.api import bearer

TIMEOUT = 5.0


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


def pool(base: str) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    return httpx.AsyncClient(base_url=base, timeout=30, limits=limits)


async def open_streams(clients: list[httpx.AsyncClient], game_ids: list[str], count: int):
    """`count` streams, stream i on game i mod len and client i mod len, each past its
    opening: (game id, response, Stream)."""

    async def one(i: int):
        http = clients[i % len(clients)]
        game_id = game_ids[i % len(game_ids)]
        request = http.build_request("GET", f"/v1/games/{game_id}/events/stream")
        response = await http.send(request, stream=True)
        assert response.status_code == 200, await response.aread()
        stream = Stream(response)
        assert not (await stream.block()).is_event  # the opening comment
        return game_id, response, stream

    return await asyncio.gather(*(one(i) for i in range(count)))


DECK = [
    "R1",
    "$2",
    "W1",
    "B3",
    "R2",
    "$1",
    "G5",
    "O4",
    "B#",
    "R6",
    "G1",
    "$3",
    "R3",
    "B4",
    "G2",
    "O1",
]
