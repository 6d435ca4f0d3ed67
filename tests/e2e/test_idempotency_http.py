"""`Idempotency-Key` over HTTP: a retry returns the first response and changes nothing.

- the same key and body again: the same status, the byte-identical body, the header
  `Idempotent-Replayed: true`; the version moved once and the log grew once;
- the same key with another command: 409 `idempotency_key_reused`, nothing changed (the
  fingerprint is the decoded command's: other bytes for the same command are the same
  request);
- the same key and body from another seat's token: another request (the fingerprint holds
  the seat): refused like a reused key, and the first seat's response is not handed out;
- retries racing each other: one is applied, all answer the same bytes;
- an idempotent create, join and act cut by a Redis stall or by a SIGKILLed service
  process succeed when retried at once (the first outcome, or run afresh), with their
  effect once: nothing holds a key for the first request (no `request_in_progress`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import msgspec
import pytest
import redis

from tests.servers import RedisServer, ServiceProcess, wait_until
from tests.support.api import Table, bearer, check_etag, check_problem
from tests.support.processes import busy_descendant
from tests.support.replicas import create_game, replica_env

JSON = {"Content-Type": "application/json"}
DECK = ["R1", "R2", "W#", "B3", "O4", "G5", "$1", "R6", "B1", "G2"]


def new_key() -> str:
    return f"e2e-{uuid.uuid4()}"


@pytest.fixture
def table(client: httpx.Client) -> Table:
    """Ann (seat 0) and Bob (seat 1), Ann to draw R1 first."""
    table = Table.create(client, [{"name": "Ann"}, {"name": "Bob"}], deck=DECK, starting_seat=0)
    table.sync_events()
    return table


def version_of(table: Table) -> int:
    return check_etag(table.get())["version"]


def test_retry_returns_the_first_response(table: Table) -> None:
    key = new_key()
    first = table.act(0, {"type": "draw"}, headers={"Idempotency-Key": key})
    assert first.status_code == 200
    assert "idempotent-replayed" not in first.headers
    assert first.json()["version"] == 1
    after_first = table.snapshot()
    log_size = len(table.read_events())

    again = table.act(0, {"type": "draw"}, headers={"Idempotency-Key": key})
    assert again.status_code == first.status_code
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["etag"] == first.headers["etag"] == '"1"'
    assert again.headers["content-type"] == first.headers["content-type"]
    assert table.snapshot() == after_first
    assert len(table.read_events()) == log_size
    assert version_of(table) == 1

    # the same body without the key is a new action
    fresh = table.act(0, {"type": "draw"})
    assert fresh.status_code == 200
    assert fresh.json()["version"] == 2
    # and the key still answers with the first response, though the game moved on
    late = table.act(0, {"type": "draw"}, headers={"Idempotency-Key": key})
    assert late.content == first.content
    assert late.headers["idempotent-replayed"] == "true"
    assert version_of(table) == 2


def test_retry_is_replayed_even_when_its_if_match_is_stale(table: Table) -> None:
    key = new_key()
    headers = {"Idempotency-Key": key, "If-Match": '"0"'}
    first = table.act(0, {"type": "draw"}, headers=headers)
    assert first.status_code == 200
    again = table.act(0, {"type": "draw"}, headers=headers)
    assert again.status_code == 200
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert version_of(table) == 1


def test_same_key_with_another_body_is_409(table: Table) -> None:
    key = new_key()
    first = table.act(0, {"type": "draw"}, headers={"Idempotency-Key": key})
    assert first.status_code == 200
    before = table.snapshot()
    for other in (
        {"type": "stop", "take": "numbers"},
        {"type": "stop", "take": "currency"},
        {"type": "decline"},
    ):
        response = table.act(0, other, headers={"Idempotency-Key": key})
        check_problem(response, 409, "idempotency_key_reused")
        assert "idempotent-replayed" not in response.headers
    assert table.snapshot() == before
    # the same action spelled with other bytes is the same command: its first answer
    spaced = table.client.post(
        f"{table.path}/actions",
        content=b'{ "type" : "draw" }',
        headers={
            **bearer(table.tokens[0]),
            "Content-Type": "application/json",
            "Idempotency-Key": key,
        },
    )
    assert spaced.status_code == 200
    assert spaced.content == first.content
    assert spaced.headers["idempotent-replayed"] == "true"
    assert table.snapshot() == before


def test_same_key_from_another_seat_is_another_request(table: Table) -> None:
    for _ in range(2):  # R1, R2
        assert table.act(0, {"type": "draw"}).status_code == 200
    auction = table.act(0, {"type": "draw"}).json()  # W#: Bob, then Ann
    assert auction["to_act"] == 1
    key = new_key()
    first = table.act(1, {"type": "pass"}, headers={"Idempotency-Key": key})
    assert first.status_code == 200
    assert first.json()["seat"] == 1
    before = table.snapshot()

    # Ann sends the very same bytes with the same key: not Bob's request, not Bob's answer
    theirs = table.act(0, {"type": "pass"}, headers={"Idempotency-Key": key})
    assert theirs.content != first.content
    assert "idempotent-replayed" not in theirs.headers
    check_problem(theirs, 409, "idempotency_key_reused")
    assert table.snapshot() == before

    # Ann's own key works for her pass
    mine = table.act(0, {"type": "pass"}, headers={"Idempotency-Key": new_key()})
    assert mine.status_code == 200
    assert mine.json()["seat"] == 0


def test_keys_are_per_game(client: httpx.Client, table: Table) -> None:
    other = Table.create(client, [{"name": "Eve"}], deck=DECK)
    key = new_key()
    assert table.act(0, {"type": "draw"}, headers={"Idempotency-Key": key}).status_code == 200
    response = other.act(0, {"type": "draw"}, headers={"Idempotency-Key": key})
    assert response.status_code == 200
    assert "idempotent-replayed" not in response.headers
    assert response.json()["id"] == other.id


def test_refused_action_is_not_remembered(table: Table) -> None:
    key = new_key()
    refused = table.act(0, {"type": "stop", "take": "numbers"}, headers={"Idempotency-Key": key})
    check_problem(refused, 409, "must_draw")
    again = table.act(0, {"type": "stop", "take": "numbers"}, headers={"Idempotency-Key": key})
    check_problem(again, 409, "must_draw")
    assert version_of(table) == 0


def test_concurrent_retries_apply_once(server: str, table: Table) -> None:
    key = new_key()
    before = len(table.read_events())

    async def main() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=server, timeout=10) as http:
            requests = [
                http.post(
                    f"{table.path}/actions",
                    json={"type": "draw"},
                    headers={**bearer(table.tokens[0]), "Idempotency-Key": key},
                )
                for _ in range(8)
            ]
            return await asyncio.gather(*requests)

    responses = asyncio.run(main())
    assert {r.status_code for r in responses} == {200}, [r.text[:200] for r in responses]
    assert len({r.content for r in responses}) == 1
    applied = [r for r in responses if "idempotent-replayed" not in r.headers]
    assert len(applied) == 1
    assert version_of(table) == 1
    events = table.read_events()
    assert len(events) == before + 1
    assert events[-1]["type"] == "card_drawn"
    assert events[-1]["card"] == "R1"


def test_a_key_an_older_release_remembered_is_refused_never_applied_again(
    redis_http: httpx.Client, redis_client: redis.Redis
) -> None:
    """An entry of the releases before `IdempotentResponse` (they kept the rendered answer:
    fingerprint, status, body, version) is no longer read as an answer: its key is refused
    (409 `idempotency_key_reused`, never a 500) for every seat, and the action is not applied
    a second time. Such entries expire with their game; a client retrying across that upgrade
    reads the game and sends a new key."""
    table = Table.create(redis_http, [{"name": "Ann"}, {"name": "Bob"}], deck=DECK, starting_seat=0)
    body = b'{"type":"draw"}'
    first = redis_http.post(  # the action as the older release applied and answered it
        f"{table.path}/actions", content=body, headers={**bearer(table.tokens[0]), **JSON}
    )
    assert first.status_code == 200
    after_first = table.snapshot()
    key = new_key()
    old_entry = {
        "fingerprint": f"0:{hashlib.sha256(body).hexdigest()}",
        "status": 200,
        "body": first.content,
        "version": 1,
    }
    idem = f"{{game:{table.id}}}:idem"
    redis_client.hset(idem, key, msgspec.msgpack.encode(old_entry))
    redis_client.pexpire(idem, 600_000)

    for token, sent in ((table.tokens[0], body), (table.tokens[1], b'{"type":"pass"}')):
        headers = {**bearer(token), **JSON, "Idempotency-Key": key}
        again = redis_http.post(f"{table.path}/actions", content=sent, headers=headers)
        check_problem(again, 409, "idempotency_key_reused")
        assert table.snapshot() == after_first


# ------------------------------------------------------------------ cut by a stall or a crash

# a game of bots alone is played to its end in its create: experts search (busy for a while,
# in a bot worker), basic bots decide at once (the create's time is its store's alone)
EXPERTS = [{"name": f"Bot {i}", "bot": "expert"} for i in range(4)]
BASIC = [{"name": f"Bot {i}", "bot": "basic"} for i in range(4)]


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A redis-server of this test alone."""
    server = RedisServer()
    try:
        yield server
    finally:
        server.close()


class Cut:
    """Three keyed requests of one client: a create (a game of bots, played to its end in
    the request), a join that fills a table, an action; set up on a live service."""

    def __init__(self, client: httpx.Client, bots: list[dict[str, str]]) -> None:
        self.bots = bots
        self.table = create_game(client, [{"name": "Ann"}, {"open": True}], private=False)
        self.game = create_game(client, [{"name": "Ann"}, {"name": "Bob"}], deck=DECK,
                                starting_seat=0)  # fmt: skip
        self.keys = {what: new_key() for what in ("create", "join", "act")}

    def send(self, base: str, what: str) -> httpx.Response | Exception:
        """One of the requests (a fresh client: a cut may break its connection)."""
        headers = {"Idempotency-Key": self.keys[what]}
        try:
            with httpx.Client(base_url=base, timeout=30) as http:
                if what == "create":
                    return http.post("/v1/games", json={"players": self.bots}, headers=headers)
                if what == "join":
                    path = f"/v1/games/{self.table['id']}/seats"
                    return http.post(path, json={"name": "Bob"}, headers=headers)
                token = self.game["seats"][0]["token"]
                path = f"/v1/games/{self.game['id']}/actions"
                return http.post(path, json={"type": "draw"}, headers={**headers, **bearer(token)})
        except httpx.TransportError as exc:  # the process died with the request
            return exc

    def send_all(self, base: str) -> dict[str, httpx.Response | Exception]:
        with ThreadPoolExecutor(3) as pool:
            sent = {what: pool.submit(self.send, base, what) for what in self.keys}
            return {what: future.result() for what, future in sent.items()}

    def check_retries(self, client: httpx.Client, base: str) -> dict[str, bool]:
        """Each request sent again with its key succeeds at once, and a copy after it gets
        the same answer; every effect is there once. Whether each retry found its first
        request's outcome (replayed) or ran afresh."""
        retried = self.send_all(base)
        replayed = {}
        for what, status in (("create", 201), ("join", 201), ("act", 200)):
            response = retried[what]
            assert isinstance(response, httpx.Response), (what, response)
            assert response.status_code == status, (what, response.text[:300])
            replayed[what] = response.headers.get("idempotent-replayed") == "true"
            again = self.send(base, what)
            assert isinstance(again, httpx.Response), (what, again)
            assert again.status_code == status
            assert again.headers["idempotent-replayed"] == "true"
            assert again.json() == response.json() if what == "create" else again.content
        created = retried["create"].json()
        assert created["status"] == "finished"
        assert client.get(f"/v1/games/{created['id']}").json()["version"] == created["version"]
        joined = retried["join"].json()
        table = client.get(f"/v1/games/{self.table['id']}").json()
        assert joined["seat"] == 1
        assert [p["name"] for p in table["players"]] == ["Ann", "Bob"]  # one seat taken
        log = client.get(f"/v1/games/{self.game['id']}/events").json()["events"]
        assert [e["type"] for e in log].count("card_drawn") == 1  # applied once
        assert client.get(f"/v1/games/{self.game['id']}").json()["version"] == 1
        return replayed


class HeldReplies:
    """A loopback TCP proxy in front of Redis that can hold Redis' replies while commands
    still go through (`hold()`, `release()`): a stall in which Redis applies what it is sent
    and the service hears nothing back, so a request whose first command was its atomic
    write is cut after that write. Replies held for a connection its client closed are
    dropped."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream = upstream_port
        self.flowing = threading.Event()
        self.flowing.set()
        self.sockets: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def hold(self) -> None:
        self.flowing.clear()

    def release(self) -> None:
        self.flowing.set()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                server = socket.create_connection(("127.0.0.1", self.upstream))
                self.sockets += (client, server)
                threading.Thread(
                    target=self._pump, args=(client, server, False), daemon=True
                ).start()
                threading.Thread(
                    target=self._pump, args=(server, client, True), daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket, replies: bool) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if replies:
                    self.flowing.wait()
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()
        for end in self.sockets:
            end.close()


def warm_up(base: str, path: str) -> None:
    """Concurrent reads, so that the service's Redis pool holds open connections: a request
    then sends its first command at once (a new connection's handshake would be held)."""

    async def main() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            for response in await asyncio.gather(*(http.get(path) for _ in range(24))):
                assert response.status_code == 200

    asyncio.run(main())


def test_requests_cut_by_a_redis_stall_succeed_when_retried(own_redis: RedisServer, tmp_path):
    """Redis' replies held (a stall) while a create, a join and an action are sent with
    their keys: each is a 503 after the client's timeout. Each one's first command is held
    before anything is applied (the create's is the relay's mark of a game that ends at
    once, service.reactions.relay, written before the game; the join's and the action's are reads).
    Once the replies flow again, each retried with its key succeeds at once and runs afresh,
    its effect there once. (A create cut after its atomic write, answer lost, gets its first
    outcome: tests/unit/service/core/test_idempotency.py, with the store failing after the write.)"""
    proxy = HeldReplies(own_redis.port)
    server = ServiceProcess(replica_env(proxy.url, str(tmp_path / "archive.sqlite3")))
    try:
        with httpx.Client(base_url=server.base, timeout=30) as client:
            # basic bots: the create waits on nothing but Redis, however busy the machine
            cut = Cut(client, BASIC)
            warm_up(server.base, f"/v1/games/{cut.game['id']}")
            proxy.hold()
            try:
                first = cut.send_all(server.base)
            finally:
                proxy.release()
            for what, response in first.items():
                assert isinstance(response, httpx.Response), (what, response)
                check_problem(response, 503, "store_unavailable")
            wait_until(lambda: client.get("/ready").status_code == 200, 15, "/ready")
            replayed = cut.check_retries(client, server.base)
            assert replayed == {"create": False, "join": False, "act": False}
    finally:
        server.stop()
        proxy.close()


def test_requests_cut_by_a_killed_replica_succeed_on_another(own_redis: RedisServer, tmp_path):
    """A service process SIGKILLed while a create is in flight (its bots' game, seen
    computing in a bot worker of the process), with a join and an action sent with their
    keys that may be: each retried with its key on
    another process succeeds and its effect is there once (the first outcome, or afresh)."""
    env = replica_env(own_redis.url, str(tmp_path / "archive.sqlite3"))
    first = ServiceProcess(env)
    try:
        with httpx.Client(base_url=first.base, timeout=30) as client:
            cut = Cut(client, EXPERTS)  # computing long enough to be killed in
        with ThreadPoolExecutor(1) as pool:
            sent = pool.submit(cut.send_all, first.base)
            # into the create's bots' game: once a bot worker of the process computes
            assert busy_descendant(first.proc.pid) is not None, "no bot worker got busy"
            first.kill()
            cut_off: dict[str, Any] = sent.result()
    finally:
        first.kill()
    assert any(isinstance(r, Exception) for r in cut_off.values()), cut_off  # one was cut
    second = ServiceProcess(env)
    try:
        with httpx.Client(base_url=second.base, timeout=30) as client:
            replayed = cut.check_retries(client, second.base)
            print(f"\nretries that found their first outcome: {replayed}")
    finally:
        second.stop()
