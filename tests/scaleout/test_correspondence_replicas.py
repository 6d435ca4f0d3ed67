"""Correspondence on two replicas sharing one Redis: a player watching a game from a stream
on one replica is told nothing of a turn handed to them by a move sent to the other; once
their stream is closed, the next turn reaches them by webhook and by Web Push (decrypted
with the subscription's keys, signed with the key both replicas share)."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from py_vapid import Vapid02

from tests.support.api import bearer
from tests.support.archive import claim_redis_db
from tests.support.push import PushEndpoint
from tests.support.replicas import replica_env, start_replicas
from tests.support.webhooks import SECRET, Receiver

WAIT = 30.0  # seconds: a failsafe bound on waiting for a fact


@pytest.fixture(scope="module")
def replicas(
    redis_url: str, tmp_path_factory
) -> Iterator[tuple[list[str], Receiver, PushEndpoint]]:
    key = Vapid02()
    key.generate_keys()
    receiver = Receiver().start()
    archive = tmp_path_factory.mktemp("corr-replicas") / "archive.sqlite3"
    with claim_redis_db(redis_url) as (url, raw):
        env = replica_env(
            url,
            str(archive),
            TEN_WEBHOOK_URLS=receiver.url,
            TEN_WEBHOOK_SECRET=SECRET,
            TEN_PUSH_ALLOW_HTTP_LOOPBACK="true",
            TEN_VAPID_PRIVATE_KEY=key.private_pem().decode(),
        )
        servers = start_replicas(env)
        push = PushEndpoint(httpx.get(f"{servers[0].base}/v1/push/key").json()["public_key"])
        push.start()
        try:
            yield [s.base for s in servers], receiver, push
        finally:
            for server in servers:
                server.stop()
            push.stop()
            receiver.stop()
            for pattern in ("ten:player:*", "ten:presence:*", "{ten:q:*"):
                for found in raw.scan_iter(match=pattern):
                    raw.delete(found)


def _until(check, what: str):
    stop = time.monotonic() + WAIT
    while not (found := check()):
        assert time.monotonic() < stop, what
        time.sleep(0.05)
    return found


def _hand_to(client: httpx.Client, game_id: str, tokens: dict[int, str], seat: int) -> None:
    """The other seat plays its first legal action until `seat` is to act."""
    other = 1 - seat
    while (view := client.get(f"/v1/games/{game_id}", headers=bearer(tokens[other])).json())[
        "to_act"
    ] != seat:
        acted = client.post(
            f"/v1/games/{game_id}/actions",
            json=view["legal_actions"][0],
            headers=bearer(tokens[other]),
        )
        assert acted.status_code == 200, acted.text


def _told(receiver: Receiver, game_id: str, seat: int) -> list[dict]:
    bodies = [json.loads(d.body) for d in receiver.accepted()]
    return [
        b for b in bodies
        if b["type"] == "your_turn" and b["data"]["game_id"] == game_id and b["data"]["seat"] == seat
    ]  # fmt: skip


def test_a_player_watching_on_one_replica_is_not_told_of_a_move_sent_to_the_other(replicas):
    bases, receiver, push = replicas
    tag = secrets.token_hex(4)
    ann, bob = f"ann-{tag}", f"bob-{tag}"
    one, two = (
        httpx.Client(base_url=bases[0], timeout=WAIT),
        httpx.Client(base_url=bases[1], timeout=WAIT),
    )
    with one, two:
        made = two.post(
            "/v1/push/subscriptions", json={"player_id": bob, **push.subscription(f"/{bob}")}
        )
        assert made.status_code == 201, made.text
        created = one.post(
            "/v1/games",
            json={
                "players": [{"name": "Ann", "player_id": ann}, {"name": "Bob", "player_id": bob}],
                "clock": {"type": "deadline", "hours": 24},
                "starting_seat": 0,
            },
        )
        assert created.status_code == 201, created.text
        game_id = created.json()["id"]
        tokens = {s["seat"]: s["token"] for s in created.json()["seats"]}

        opened, closing = threading.Event(), threading.Event()

        def watch() -> None:  # bob's stream, on the second replica
            url = f"{bases[1]}/v1/games/{game_id}/events/stream"
            try:
                with httpx.stream("GET", url, headers=bearer(tokens[1]), timeout=None) as stream:
                    for _ in stream.iter_raw():
                        opened.set()
                        if closing.is_set():
                            return
            except httpx.HTTPError:
                return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        assert opened.wait(WAIT)
        _hand_to(one, game_id, tokens, 1)  # the moves go to the first replica
        _hand_to(one, game_id, tokens, 0)
        _until(lambda: len(_told(receiver, game_id, 0)) >= 2, "ann's second turn told")
        assert _told(receiver, game_id, 1) == []
        assert push.payloads(f"/{bob}") == []
        closing.set()
        _hand_to(one, game_id, tokens, 1)  # bob's stream sees this event and closes
        watcher.join(WAIT)
        # the stream is gone (its replica takes its word back once it sees it closed): a
        # later turn reaches bob
        _until(lambda: not watcher.is_alive(), "bob's stream closed")

        def told_again() -> bool:
            if push.payloads(f"/{bob}"):
                return True
            _hand_to(one, game_id, tokens, 0)
            _hand_to(one, game_id, tokens, 1)
            return False  # looked at again after the next hand-over's push had its chance

        _until(told_again, "bob told by push")
        pushed = push.payloads(f"/{bob}")
        _until(lambda: _told(receiver, game_id, 1), "bob told by webhook")
    assert pushed[0]["game_id"] == game_id
    assert pushed[0]["seat"] == 1
    assert all(p.signed for p in push.received)
