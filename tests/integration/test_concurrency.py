"""50 clients acting on one game at the same time: no lost update, no action applied twice.

Each round, every client reads nothing new: they all post, at once, what they believe is a
legal action for their seat (same and different seats, half with If-Match on the version
they read). Afterwards every event of the log must belong to exactly one accepted (200)
response, and every accepted response's events must be in the log: an action lost or
applied twice breaks one of the two. The rules' invariants must hold on the final state and
the event log must rebuild it. Runs on Redis behind two worker processes (real parallelism)
and on the embedded store.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Iterator

import httpx
import msgspec
import pytest

from domain.game.cards import deck_size
from domain.game.model import AnyEvent
from domain.game.replay import rebuild
from tests.servers import run_server

# the module's tests on one worker: its module fixture `base_url` (a process per store, two
# workers on Redis) is made once (--dist loadgroup would spread them over the workers, and each
# would make it)
pytestmark = pytest.mark.xdist_group("integration-concurrency-servers")

CLIENTS = 50
ROUNDS = 12
PLAYERS = [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}, {"name": "Dee", "bot": "basic"}]


@pytest.fixture(scope="module", params=["redis", "embedded"])
def base_url(request, redis_url: str) -> Iterator[str]:
    if request.param == "redis":
        with run_server({"TEN_REDIS_URL": redis_url}, workers=2) as base:
            yield base
    else:
        with run_server({}) as base:
            yield base


def check_public_invariants(game: dict) -> None:
    currency = game["supply"]["currency"] + sum(p["currency"] for p in game["players"])
    bust = game["supply"]["bust"] + sum(p["bust"] for p in game["players"])
    assert currency == 50
    assert bust == 15
    assert all(0 <= p["currency"] <= 10 for p in game["players"])
    cards = len(game["tableau"]) + len(game["market"]) + len(game["discard"])
    cards += sum(len(p["cards"]) for p in game["players"]) + game["draw_pile_size"]
    cards += 1 if game["auction"] else 0
    assert cards == deck_size(len(game["players"]))
    assert all(code[0] in "RBOG" and code[1].isdigit() for code in game["market"])


async def play_rounds(base: str, use_idempotency: bool) -> None:
    rng = random.Random(f"concurrency/{use_idempotency}")
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        created = await client.post("/v1/games", json={"players": PLAYERS, "starting_seat": 0})
        assert created.status_code == 201
        game = created.json()
        game_id = game["id"]
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        accepted: list[dict] = []
        statuses: Counter[int] = Counter()
        for round_no in range(ROUNDS):
            views = {}
            for seat, token in tokens.items():
                read = await client.get(
                    f"/v1/games/{game_id}", headers={"Authorization": f"Bearer {token}"}
                )
                views[seat] = read.json()
            version = views[0]["version"]
            if views[0]["status"] == "finished":
                break
            requests = []
            for i in range(CLIENTS):
                seat = rng.choice(list(tokens))
                legal = views[seat]["legal_actions"] or [{"type": "draw"}]
                action = rng.choice(legal)
                headers = {"Authorization": f"Bearer {tokens[seat]}"}
                if i % 2:
                    headers["If-Match"] = f'"{version}"'
                if use_idempotency:
                    headers["Idempotency-Key"] = f"r{round_no}-c{i % (CLIENTS // 2)}"
                    # the other half of the clients retry the same request: same key, same body
                    if i >= CLIENTS // 2:
                        headers, action = requests[i - CLIENTS // 2]
                requests.append((headers, action))
            responses = await asyncio.gather(
                *(
                    client.post(f"/v1/games/{game_id}/actions", json=action, headers=headers)
                    for headers, action in requests
                )
            )
            by_key: dict[str, set[bytes]] = {}
            for (headers, _), response in zip(requests, responses, strict=True):
                statuses[response.status_code] += 1
                assert response.status_code in (200, 409, 412), response.text
                if response.status_code != 200:
                    assert response.headers["content-type"] == "application/problem+json"
                    continue
                if "Idempotency-Key" in headers:
                    by_key.setdefault(headers["Idempotency-Key"], set()).add(response.content)
                if response.headers.get("Idempotent-Replayed") != "true":
                    accepted.append(response.json())
            for key, bodies in by_key.items():
                assert len(bodies) == 1, f"retries of {key} got different answers"
        log = (await client.get(f"/v1/games/{game_id}/events", params={"limit": 1000})).json()
        final = (await client.get(f"/v1/games/{game_id}")).json()
    assert statuses[200] > ROUNDS, f"too few actions were accepted: {statuses}"
    initial_seqs = {e["seq"] for e in game.get("events", [])}
    logged = [e for e in log["events"] if e["version"] > 0]
    returned = [e for body in accepted for e in body["events"]]
    # every accepted action's events are in the log, and each log event was returned once
    assert Counter(e["seq"] for e in returned) == Counter(e["seq"] for e in logged)
    assert {e["seq"]: e for e in returned} == {e["seq"]: e for e in logged}
    assert [e["seq"] for e in log["events"]] == list(range(1, len(log["events"]) + 1))
    versions = sorted({e["version"] for e in logged})
    assert versions == list(range(1, final["version"] + 1)), "a version was skipped or repeated"
    assert not initial_seqs & {e["seq"] for e in returned}
    check_public_invariants(final)
    events = msgspec.json.decode(msgspec.json.encode(log["events"]), type=list[AnyEvent])
    rebuilt = msgspec.json.decode(msgspec.json.encode(rebuild(events)))
    for field, value in rebuilt.items():
        assert final[field] == value, f"the event log does not rebuild {field}"


def test_fifty_clients_on_one_game_lose_nothing_and_apply_nothing_twice(base_url: str) -> None:
    asyncio.run(play_rounds(base_url, use_idempotency=False))


def test_fifty_clients_retrying_with_idempotency_keys_apply_each_once(base_url: str) -> None:
    asyncio.run(play_rounds(base_url, use_idempotency=True))
