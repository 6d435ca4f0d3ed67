"""A client that plays as a real one would through faults: every action carries its own
Idempotency-Key; when a request fails in flight (connection refused or cut, timeout, 503) it
is sent again, same key and body, to the next replica, until it is acknowledged (200).
Every acknowledged reply is kept, per game, to check the event logs against afterwards."""

from __future__ import annotations

import itertools
import random
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

import httpx

from tests.support.api import bearer

RETRY_PAUSE = 0.05  # seconds between two attempts (the service says Retry-After: 1)
ACTION_DEADLINE = 20.0  # seconds one action may take, retries included
PLAYERS = [{"name": "human"}] + [{"name": f"bot{i}", "bot": "random"} for i in range(3)]


class Unacknowledged(AssertionError):
    pass


class Player:
    """Plays 1-human games (3 random bots) through `bases`, spreading its requests over them."""

    def __init__(self, bases: Sequence[str], seed: str, offset: int = 0) -> None:
        self.clients = [httpx.Client(base_url=base, timeout=10) for base in bases]
        self._next = itertools.count(offset)
        self.rng = random.Random(seed)
        self.acked: dict[str, list[dict[str, Any]]] = {}  # game id -> acknowledged replies
        self.ack_times: dict[str, list[float]] = {}
        self.failed_attempts = 0  # requests that errored in flight or got 503
        self.cut_in_flight = 0  # of which: sent, then no answer
        self.replays = 0  # acknowledgements that were Idempotent-Replayed
        self.game: dict[str, Any] | None = None
        self.token = ""
        self.legal: list[dict[str, Any]] = []

    def _client(self) -> httpx.Client:
        return self.clients[next(self._next) % len(self.clients)]

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The request, sent again (to the next replica) until a non-503 answer comes."""
        deadline = time.monotonic() + ACTION_DEADLINE
        while True:
            try:
                response = self._client().request(method, path, **kwargs)
            except httpx.ConnectError:
                response = None
            except httpx.TransportError:  # sent, then the connection broke or timed out
                self.cut_in_flight += 1
                response = None
            if response is not None and response.status_code != 503:
                assert response.status_code < 500, (path, response.status_code, response.text)
                return response
            if response is not None:
                assert response.headers.get("retry-after"), response.headers
            self.failed_attempts += 1
            if time.monotonic() > deadline:
                raise Unacknowledged(f"{method} {path} not acknowledged in {ACTION_DEADLINE} s")
            time.sleep(RETRY_PAUSE)

    def new_game(self) -> None:
        # a create is not idempotent: a create lost in flight leaves an unplayed game behind
        response = self._send("POST", "/v1/games", json={"players": PLAYERS})
        assert response.status_code == 201, response.text
        self.game = response.json()
        self.token = self.game["seats"][0]["token"]
        self.acked[self.game["id"]] = []
        self.ack_times[self.game["id"]] = []
        read = self._send("GET", f"/v1/games/{self.game['id']}", headers=bearer(self.token))
        assert read.status_code == 200, read.text
        self.legal = read.json()["legal_actions"]

    def step(self) -> None:
        """One acknowledged action (a new game first if there is none or it finished)."""
        if self.game is None or self.game["status"] == "finished":
            self.new_game()
        assert self.game is not None
        headers = {**bearer(self.token), "Idempotency-Key": uuid.uuid4().hex}
        action = self.rng.choice(self.legal)
        response = self._send(
            "POST", f"/v1/games/{self.game['id']}/actions", json=action, headers=headers
        )
        assert response.status_code == 200, response.text
        if response.headers.get("idempotent-replayed") == "true":
            self.replays += 1
        body = response.json()
        self.acked[body["id"]].append(body)
        self.ack_times[body["id"]].append(time.monotonic())
        self.game, self.legal = body, body["legal_actions"]

    @property
    def acks(self) -> int:
        return sum(len(replies) for replies in self.acked.values())

    def run(self, stop: threading.Event, errors: list[BaseException]) -> None:
        try:
            while not stop.is_set():
                self.step()
        except BaseException as exc:  # the main thread fails the test with it
            errors.append(exc)
            stop.set()

    def close(self) -> None:
        for client in self.clients:
            client.close()
