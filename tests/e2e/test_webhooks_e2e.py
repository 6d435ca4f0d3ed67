"""Webhooks from a real service process to a real receiver on loopback: what a platform sees
of the games it hosts (started, a seat taken over, finished with results, aborted), each
delivery signed per Standard Webhooks and verified by the `standardwebhooks` package, on
Redis and on the embedded store."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from tests.support.api import bearer, check_results
from tests.support.archive import claim_redis_db
from tests.support.webhooks import SECRET, Receiver


@pytest.fixture(params=["redis", "embedded"])
def hooked(request, redis_url, start_server):
    receiver = Receiver().start()
    env = {"TEN_WEBHOOK_URLS": receiver.url, "TEN_WEBHOOK_SECRET": SECRET}
    if request.param == "redis":
        with (
            claim_redis_db(redis_url) as (url, raw),
            start_server(TEN_REDIS_URL=url, **env) as base,
        ):
            yield base, receiver
            for key in raw.scan_iter(match="{ten:webhooks}*"):
                raw.delete(key)
    else:
        with start_server(**env) as base:
            yield base, receiver
    receiver.stop()


def _messages(receiver: Receiver, game_id: str) -> dict[str, dict]:
    found = {}
    for delivery in receiver.accepted():
        body = json.loads(delivery.body)
        if body["data"]["game_id"] == game_id:
            found.setdefault(body["type"], body)
    return found


def _wait_for(receiver: Receiver, game_id: str, kinds: set[str]) -> dict[str, dict]:
    stop = time.monotonic() + 30
    while not kinds <= set(found := _messages(receiver, game_id)):
        assert time.monotonic() < stop, (kinds, set(found))
        time.sleep(0.05)
    return found


def test_the_platform_hears_of_start_takeover_finish_and_abort(hooked) -> None:
    base, receiver = hooked
    with httpx.Client(base_url=base) as client:
        created = client.post(
            "/v1/games",
            json={"players": [{"name": "ann", "player_id": "p-ann"}, {"name": "bob"}]},
        )
        assert created.status_code == 201, created.text
        game = created.json()
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        path = f"/v1/games/{game['id']}"
        resigned = client.post(
            f"{path}/actions", json={"type": "resign"}, headers=bearer(tokens[1])
        )
        assert resigned.status_code == 200, resigned.text
        while (view := client.get(path, headers=bearer(tokens[0])).json())["status"] == "active":
            client.post(f"{path}/actions", json=view["legal_actions"][0], headers=bearer(tokens[0]))
        check_results(client, view)

        # a table started by its host with a bot in the open seat, then aborted by the host
        table = client.post("/v1/games", json={"players": [{"name": "cy"}, {"open": True}]})
        assert table.status_code == 201, table.text
        other, host = table.json()["id"], bearer(table.json()["host_token"])
        assert client.post(f"/v1/games/{other}/start", headers=host).status_code == 200
        assert client.post(f"/v1/games/{other}/abort", headers=host).status_code == 200

        found = _wait_for(
            receiver, game["id"], {"game_started", "seat_taken_over", "game_finished"}
        )
        stopped = _wait_for(receiver, other, {"game_started", "game_aborted"})
    assert stopped["game_aborted"]["data"]["reason"] == "aborted"
    assert [s["bot"] for s in stopped["game_started"]["data"]["seats"]] == [None, "basic"]
    started = found["game_started"]["data"]
    assert [s["player_id"] for s in started["seats"]] == ["p-ann", None]
    taken = found["seat_taken_over"]["data"]
    assert (taken["seat"], taken["reason"], taken["bot"]) == (1, "resigned", "basic")
    results = found["game_finished"]["data"]["results"]
    assert [(r["seat"], r["rank"], r["winner"], r["resigned"]) for r in results] == [
        (r["seat"], r["rank"], r["winner"], r["resigned"]) for r in view["results"]
    ]
    assert results[1]["resigned"] is True
    # every delivery verified; one message id per fact, whatever the retries
    assert all(d.verified for d in receiver.received), [d.error for d in receiver.received]
    ids = {json.loads(d.body)["type"]: d.id for d in receiver.accepted()
           if json.loads(d.body)["data"]["game_id"] == game["id"]}  # fmt: skip
    assert len(set(ids.values())) == 3
