"""Correspondence that calls the player back, from a real service process (on Redis and on
the embedded store) to a real webhook receiver and a real Web Push endpoint on loopback
(`tests.support.push`: it decrypts each message with the subscription's own keys and checks
its VAPID signature): a move in a deadline game tells the next player once by webhook and
once by push; nothing is told to a player whose event stream on the game is open; a
subscription the push service calls gone is deleted; bad input is problem+json and changes
nothing; a player's live games list theirs-to-move first."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.api import bearer
from tests.support.archive import claim_redis_db
from tests.support.push import PushEndpoint
from tests.support.webhooks import SECRET, Receiver

DEADLINE = {"type": "deadline", "hours": 24}
WAIT = 30.0  # seconds: a failsafe bound on waiting for a fact, never a measure


@pytest.fixture(scope="module", params=["redis", "embedded"])
def served(request, redis_url, start_server) -> Iterator[tuple[str, Receiver, PushEndpoint]]:
    receiver = Receiver().start()
    push = PushEndpoint().start()
    env = {
        "TEN_WEBHOOK_URLS": receiver.url,
        "TEN_WEBHOOK_SECRET": SECRET,
        "TEN_PUSH_ALLOW_HTTP_LOOPBACK": "true",
    }
    try:
        if request.param == "redis":
            with (
                claim_redis_db(redis_url) as (url, raw),
                start_server(TEN_REDIS_URL=url, **env) as base,
            ):
                push.vapid_public_key = httpx.get(f"{base}/v1/push/key").json()["public_key"]
                yield base, receiver, push
                for pattern in ("ten:player:*", "ten:presence:*", "{ten:q:*"):
                    for key in raw.scan_iter(match=pattern):
                        raw.delete(key)
        else:
            with start_server(**env) as base:
                push.vapid_public_key = httpx.get(f"{base}/v1/push/key").json()["public_key"]
                yield base, receiver, push
    finally:
        push.stop()
        receiver.stop()


def _until(check, what: str) -> Any:
    stop = time.monotonic() + WAIT
    while not (found := check()):
        assert time.monotonic() < stop, what
        time.sleep(0.05)
    return found


def _turns(receiver: Receiver, game_id: str) -> list[dict]:
    bodies = [json.loads(d.body) for d in receiver.accepted()]
    return [b for b in bodies if b["type"] == "your_turn" and b["data"]["game_id"] == game_id]


def _ids() -> tuple[str, str]:
    tag = secrets.token_hex(4)
    return f"ann-{tag}", f"bob-{tag}"


def _created(client: httpx.Client, ann: str, bob: str, clock: dict = DEADLINE) -> dict:
    created = client.post(
        "/v1/games",
        json={
            "players": [{"name": "Ann", "player_id": ann}, {"name": "Bob", "player_id": bob}],
            "clock": clock,
            "starting_seat": 0,
        },
    )
    assert created.status_code == 201, created.text
    return created.json()


def _game(client: httpx.Client, ann: str, bob: str) -> tuple[str, dict[int, str]]:
    game = _created(client, ann, bob)
    return game["id"], {s["seat"]: s["token"] for s in game["seats"]}


def _play_until_turn_of(
    client: httpx.Client, game_id: str, tokens: dict[int, str], seat: int
) -> None:
    """The other seat plays (its first legal action each time) until `seat` is to act."""
    path = f"/v1/games/{game_id}"
    other = 1 - seat
    while True:
        view = client.get(path, headers=bearer(tokens[other])).json()
        if view["status"] != "active" or view["to_act"] == seat:
            return
        acted = client.post(
            f"{path}/actions", json=view["legal_actions"][0], headers=bearer(tokens[other])
        )
        assert acted.status_code == 200, acted.text


def _subscribe(client: httpx.Client, push: PushEndpoint, player: str, path: str) -> dict:
    made = client.post(
        "/v1/push/subscriptions", json={"player_id": player, **push.subscription(path)}
    )
    assert made.status_code == 201, made.text
    return made.json()


def test_a_move_tells_the_next_player_once_by_webhook_and_by_push(served) -> None:
    base, receiver, push = served
    ann, bob = _ids()
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        sub = _subscribe(client, push, bob, f"/bob/{bob}")
        assert sub["player_id"] == bob
        listed = client.get("/v1/push/subscriptions", params={"player_id": bob}).json()
        assert [s["id"] for s in listed["subscriptions"]] == [sub["id"]]
        game_id, tokens = _game(client, ann, bob)
        _play_until_turn_of(client, game_id, tokens, 1)
        pushed = _until(lambda: push.payloads(f"/bob/{bob}"), "the push to bob")
        told = _until(
            lambda: [t for t in _turns(receiver, game_id) if t["data"]["seat"] == 1],
            "the webhook for bob",
        )
        view = client.get(f"/v1/games/{game_id}").json()
    payload = pushed[0]
    assert payload == {
        "type": "your_turn",
        "game_id": game_id,
        "seat": 1,
        "deadline": payload["deadline"],
        "url": f"/app/#/games/{game_id}",
    }
    assert payload["deadline"] is not None
    assert view["clock"]["deadline"] is not None
    assert all(p.signed for p in push.received), "every push signed with the service's key"
    data = told[0]["data"]
    assert (data["player_id"], data["seat"], data["game_id"]) == (bob, 1, game_id)
    # the game's start told ann too (seat 0 waited first), by webhook: she has no browser
    assert any(t["data"]["seat"] == 0 for t in _turns(receiver, game_id))
    # once: a later fact (ann's next turn) arrives after bob's single notice
    assert len(push.payloads(f"/bob/{bob}")) == 1
    assert len({d.id for d in receiver.accepted() if json.loads(d.body)["type"] == "your_turn"
                and json.loads(d.body)["data"]["seat"] == 1
                and json.loads(d.body)["data"]["game_id"] == game_id}) == 1  # fmt: skip


class _Stream:
    """A seat's event stream held open in a thread until `close`."""

    def __init__(self, base: str, game_id: str, token: str) -> None:
        self.opened = threading.Event()
        self.closing = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(base, game_id, token), daemon=True)
        self.thread.start()
        assert self.opened.wait(WAIT), "the stream opened"

    def _run(self, base: str, game_id: str, token: str) -> None:
        path = f"/v1/games/{game_id}/events/stream"
        try:
            with (
                httpx.Client(base_url=base, timeout=None) as client,
                client.stream("GET", path, headers=bearer(token)) as response,
            ):
                for _chunk in response.iter_raw():
                    self.opened.set()
                    if self.closing.is_set():
                        return
        except httpx.HTTPError:
            return  # the server stopped at the end of the test

    def close(self) -> None:
        self.closing.set()


def test_nothing_is_sent_to_a_player_watching_the_game(served) -> None:
    base, receiver, push = served
    ann, bob = _ids()
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        _subscribe(client, push, bob, f"/bob/{bob}")
        _subscribe(client, push, ann, f"/ann/{ann}")
        game_id, tokens = _game(client, ann, bob)
        stream = _Stream(base, game_id, tokens[1])  # bob watches
        try:
            _play_until_turn_of(client, game_id, tokens, 1)
            # ann's own next turn is a later fact: once she is told of it, bob's turn (if it
            # had been told) would have been told before
            _play_until_turn_of(client, game_id, tokens, 0)
            _until(lambda: push.payloads(f"/ann/{ann}"), "ann's next turn told")
            _until(
                lambda: len([t for t in _turns(receiver, game_id) if t["data"]["seat"] == 0]) >= 2,
                "ann's turns by webhook",
            )
        finally:
            stream.close()
    assert push.payloads(f"/bob/{bob}") == []
    assert [t for t in _turns(receiver, game_id) if t["data"]["seat"] == 1] == []


def test_a_subscription_the_push_service_calls_gone_is_deleted(served) -> None:
    base, _receiver, push = served
    ann, bob = _ids()
    push.gone.add(f"/gone/{bob}")  # this test's own path: the server is shared
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        _subscribe(client, push, bob, f"/gone/{bob}")
        game_id, tokens = _game(client, ann, bob)
        _play_until_turn_of(client, game_id, tokens, 1)

        def forgotten() -> bool:
            held = client.get("/v1/push/subscriptions", params={"player_id": bob}).json()
            return held["subscriptions"] == []

        _until(forgotten, "the gone subscription deleted")


GOOD_KEYS = PushEndpoint().keys


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"endpoint": "https://push.example/x", "keys": GOOD_KEYS}, 401, "player_id_required"),
        (
            {"player_id": "p", "endpoint": "ftp://push.example/x", "keys": GOOD_KEYS},
            400,
            "invalid_request",
        ),
        (
            {"player_id": "p", "endpoint": "https://push.example/x", "keys": None},
            400,
            "invalid_request",
        ),
        (
            {
                "player_id": "p",
                "endpoint": "https://push.example/x",
                "keys": {"p256dh": "AA", "auth": "AA"},
            },
            400,
            "invalid_request",
        ),
        (
            {"player_id": "p", "endpoint": "https://10.0.0.1/x", "keys": GOOD_KEYS},
            403,
            "push_endpoint_refused",
        ),
        (
            {"player_id": "p", "endpoint": "https://127.0.0.1/x", "keys": GOOD_KEYS},
            403,
            "push_endpoint_refused",
        ),
        (
            {"player_id": "p", "endpoint": "https://user:pw@push.example/x", "keys": GOOD_KEYS},
            403,
            "push_endpoint_refused",
        ),
    ],
)
def test_a_bad_subscription_is_problem_json_and_changes_nothing(served, body, status, code) -> None:
    base, _receiver, _push = served
    player = f"p-{secrets.token_hex(4)}"
    if body.get("player_id") == "p":
        body = {**body, "player_id": player}
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        refused = client.post("/v1/push/subscriptions", json=body)
        assert refused.status_code == status, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert refused.json()["code"] == code
        held = client.get("/v1/push/subscriptions", params={"player_id": player}).json()
    assert held["subscriptions"] == []


def test_a_vacation_is_read_and_switched_and_a_bad_one_refused_changing_nothing(served) -> None:
    base, _receiver, _push = served
    player = f"v-{secrets.token_hex(4)}"
    path = f"/v1/players/{player}/vacation"
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        first = client.get(path).json()
        assert (first["on"], first["since"], first["allowance"]) == (False, None, 30)
        assert first["days_left"] == 30
        on = client.put(path, json={"on": True})
        assert on.status_code == 200, on.text
        assert on.json()["on"] is True
        assert on.json()["since"] is not None
        for bad in ({"on": "yes"}, {}, {"on": True, "extra": 1}):
            refused = client.put(path, json=bad)
            assert refused.status_code == 400, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
        assert client.get(path).json()["on"] is True
        off = client.put(path, json={"on": False}).json()
        assert off["on"] is False
        assert 29.99 < off["days_left"] <= 30
        assert client.get("/v1/players/bad%20id/vacation").status_code == 400


def test_a_players_live_games_list_theirs_to_move_first(served) -> None:
    base, _receiver, _push = served
    ann, bob = _ids()
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        first, _tokens_first = _game(client, ann, bob)  # ann to move
        second, tokens_second = _game(client, ann, bob)
        _play_until_turn_of(client, second, tokens_second, 1)  # bob to move
        third, _ = _game(client, ann, bob)  # ann to move, newest
        listed = client.get("/v1/games", params={"player_id": bob}).json()
        ann_listed = client.get("/v1/games", params={"player_id": ann}).json()
    assert [g["id"] for g in listed["games"]] == [second, third, first]
    assert [g["id"] for g in ann_listed["games"]] == [third, first, second]


def test_a_players_vacation_stands_their_deadline_still_until_it_ends(served) -> None:
    base, _receiver, _push = served
    ann, bob = _ids()
    quick = {"type": "deadline", "hours": 0.001}  # 3.6 s a decision
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        assert client.put(f"/v1/players/{ann}/vacation", json={"on": True}).json()["on"]
        created = _created(client, ann, bob, quick)
        game_id, first = created["id"], created["clock"]["deadline"]

        def clock() -> dict:
            return client.get(f"/v1/games/{game_id}").json()["clock"]

        def timed_out() -> bool:
            events = client.get(f"/v1/games/{game_id}/events").json()["events"]
            return any(e["type"] == "timed_out" for e in events)

        # the deadline came while ann was away: moved on, not timed out
        moved = _until(lambda: (c := clock())["deadline"] > first and c, "the deadline moved")
        assert moved["seat"] == 0
        assert not timed_out()
        assert client.put(f"/v1/players/{ann}/vacation", json={"on": False}).json()["on"] is False
        _until(timed_out, "ann timed out once back")
