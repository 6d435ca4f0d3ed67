"""Bulk pairings over HTTP, in process, on the embedded store and on Redis (two apps on one
Redis database of the test's own: the second one is read): tables created now and for a
time, each seat's token acting in its own game, the read, the start now, the cancel, a copy
of the create, and the refusals, each a problem that changes nothing; each table's
`game_started` webhook delivered to the platform once, for a bulk started now (created so,
or started early) and for one started by its job at its time."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt
import pytest
from litestar.testing import TestClient

from service.bulk.records import LEAD, job_id
from service.core.settings import (
    ArchiveSettings,
    IdentitySettings,
    ObservabilitySettings,
    RedisSettings,
    WebhookSettings,
)
from service.core.settings import Settings as ServiceSettings
from tests.support.archive import in_process_replicas
from tests.support.webhooks import SECRET as WEBHOOK_SECRET
from tests.support.webhooks import Receiver

API_KEY = "platform-key-0123456789abcdef"
SECRET = "jwt-secret-for-the-bulk-tests-0123456789"
PLATFORM = {"X-API-Key": API_KEY}
WAITS = 600  # looks (0.05 s apart) before giving up on a start


def app_settings(
    tmp_path: Path, redis_url: str | None = None, hooks: str | None = None
) -> ServiceSettings:
    """The service's settings; `hooks`: the platform's webhook endpoint (None: no webhooks)."""
    return ServiceSettings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3", migrate_on_start=True
        ),
        redis=RedisSettings(url=redis_url),
        observability=ObservabilitySettings(log_format="json"),
        identity=IdentitySettings(
            api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer="platform", jwt_audience="ten"
        ),
        webhooks=WebhookSettings(
            urls=(hooks,) if hooks else (), secret=WEBHOOK_SECRET if hooks else None
        ),
    )


def player(sub: str) -> dict[str, str]:
    claims = {"sub": sub, "iss": "platform", "aud": "ten", "exp": int(time.time()) + 3600}
    return {"Authorization": f"Bearer {jwt.encode(claims, SECRET, algorithm='HS256')}"}


def replicas(kind: str, tmp_path: Path, request: pytest.FixtureRequest, hooks: str | None = None):
    """(the client the test drives, the client it reads from): one app on the embedded
    store, or two on one Redis database of the test's own; `hooks`: their webhook endpoint."""
    return in_process_replicas(
        kind, lambda url: app_settings(tmp_path, url, hooks), request, "ten:bulk:*"
    )


def tables(n: int, tag: str) -> list[dict[str, Any]]:
    return [
        {
            "seats": [
                {"player_id": f"{tag}{i}a", "name": f"Ann {i}"},
                {"player_id": f"{tag}{i}b", "name": f"Bob {i}"},
                {"bot": "random"},
            ]
        }
        for i in range(n)
    ]


def at(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def problem(response: Any, status: int, code: str) -> dict:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == code
    return body


def statuses(client: TestClient, bulk_id: str) -> list[str]:
    read = client.get(f"/v1/bulk-pairings/{bulk_id}", headers=PLATFORM)
    assert read.status_code == 200, read.text
    return [t["status"] for t in read.json()["tables"]]


def resign(client: TestClient, game_id: str, token: str) -> Any:
    return client.post(
        f"/v1/games/{game_id}/actions",
        json={"type": "resign"},
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_three_tables_made_now_start_at_once_and_each_seat_token_acts_in_its_own_game(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with replicas(kind, tmp_path, request) as (client, reader):
        made = client.post("/v1/bulk-pairings", json={"tables": tables(3, "now")}, headers=PLATFORM)
        assert made.status_code == 201, made.text
        bulk = made.json()
        assert made.headers["Location"] == f"/v1/bulk-pairings/{bulk['id']}"
        assert bulk["status"] == "started"
        assert [t["status"] for t in bulk["tables"]] == ["active"] * 3
        games = [t["game_id"] for t in bulk["tables"]]
        assert len(set(games)) == 3
        for table in bulk["tables"]:
            seats = table["seats"]
            assert [s["player_id"] for s in seats[:2]] == [
                f"now{table['index']}a",
                f"now{table['index']}b",
            ]
            assert seats[2]["bot"] == "random"
            assert seats[2]["token"] is None
            game = reader.get(f"/v1/games/{table['game_id']}").json()
            assert game["status"] == "active"
            assert [p["name"] for p in game["players"]][:2] == [s["name"] for s in seats[:2]]
        first, second = bulk["tables"][0], bulk["tables"][1]
        problem(resign(client, second["game_id"], first["seats"][0]["token"]), 403, "forbidden")
        acted = resign(client, first["game_id"], first["seats"][0]["token"])
        assert acted.status_code == 200, acted.text
        read = reader.get(f"/v1/bulk-pairings/{bulk['id']}", headers=PLATFORM).json()
        assert all(s["token"] is None for t in read["tables"] for s in t["seats"])  # read: none


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_bulk_for_a_time_waits_as_open_tables_its_seats_cannot_act_in(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with replicas(kind, tmp_path, request) as (client, reader):
        start_at = at(3600)
        made = client.post(
            "/v1/bulk-pairings",
            json={"tables": tables(3, "t"), "start_at": start_at},
            headers=PLATFORM,
        )
        assert made.status_code == 201, made.text
        bulk = made.json()
        assert bulk["status"] == "scheduled"
        assert [t["status"] for t in bulk["tables"]] == ["open"] * 3
        table = bulk["tables"][0]
        token = table["seats"][0]["token"]
        seen = reader.get(
            f"/v1/games/{table['game_id']}", headers={"Authorization": f"Bearer {token}"}
        )
        assert seen.status_code == 200
        assert seen.json()["status"] == "open"
        assert seen.json()["starts_at"] == pytest.approx(
            datetime.fromisoformat(start_at).timestamp(), abs=0.001
        )
        problem(resign(client, table["game_id"], token), 409, "game_not_started")
        assert statuses(reader, bulk["id"]) == ["open"] * 3


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_the_start_job_starts_a_bulks_tables_at_their_time_and_not_before(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with replicas(kind, tmp_path, request) as (client, reader):
        start_at = at(2)
        made = client.post(
            "/v1/bulk-pairings",
            json={"tables": tables(3, "j"), "start_at": start_at},
            headers=PLATFORM,
        )
        assert made.status_code == 201, made.text
        bulk = made.json()
        for _ in range(WAITS):  # the fact: the job started them (a failsafe bound only)
            if statuses(reader, bulk["id"]) == ["active"] * 3:
                break
            time.sleep(0.05)
        assert statuses(reader, bulk["id"]) == ["active"] * 3
        # seen started only once their time had come: the job waits for it
        assert time.time() >= datetime.fromisoformat(start_at).timestamp()
        started = reader.get(f"/v1/bulk-pairings/{bulk['id']}", headers=PLATFORM).json()
        assert started["status"] == "started"
        token = bulk["tables"][0]["seats"][0]["token"]
        assert resign(client, bulk["tables"][0]["game_id"], token).status_code == 200


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_start_now_then_cancel_leaves_the_started_games_and_a_fresh_bulk_is_cancelled_whole(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with replicas(kind, tmp_path, request) as (client, reader):
        ask = {"tables": tables(2, "s"), "start_at": at(3600)}
        bulk = client.post("/v1/bulk-pairings", json=ask, headers=PLATFORM).json()
        started = client.post(f"/v1/bulk-pairings/{bulk['id']}/start", headers=PLATFORM)
        assert started.status_code == 200, started.text
        assert [t["status"] for t in started.json()["tables"]] == ["active"] * 2
        cancelled = client.post(f"/v1/bulk-pairings/{bulk['id']}/cancel", headers=PLATFORM)
        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        assert statuses(reader, bulk["id"]) == ["active"] * 2  # left alone
        other = client.post(
            "/v1/bulk-pairings",
            json={"tables": tables(2, "c"), "start_at": at(3600)},
            headers=PLATFORM,
        ).json()
        client.post(f"/v1/bulk-pairings/{other['id']}/cancel", headers=PLATFORM)
        assert statuses(reader, other["id"]) == ["cancelled"] * 2
        again = client.post(f"/v1/bulk-pairings/{other['id']}/start", headers=PLATFORM)
        problem(again, 409, "bulk_pairing_cancelled")
        assert statuses(reader, other["id"]) == ["cancelled"] * 2


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_copy_of_the_create_returns_the_same_games_and_tokens(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with replicas(kind, tmp_path, request) as (client, reader):
        ask = {"tables": tables(3, "k"), "start_at": at(3600)}
        key = {**PLATFORM, "Idempotency-Key": "bulk-1"}
        first = client.post("/v1/bulk-pairings", json=ask, headers=key)
        copy = reader.post("/v1/bulk-pairings", json=ask, headers=key)
        assert first.status_code == copy.status_code == 201
        assert copy.headers.get("Idempotent-Replayed") == "true"
        assert "Idempotent-Replayed" not in first.headers
        assert copy.json()["tables"] == first.json()["tables"]
        other = client.post(
            "/v1/bulk-pairings", json={**ask, "tables": tables(2, "k")}, headers=key
        )
        problem(other, 409, "idempotency_key_reused")


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_refusals_are_problems_and_change_nothing(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with replicas(kind, tmp_path, request) as (client, _):
        before = client.get("/v1/games", params={"player_id": "r0a"}, headers=PLATFORM).json()
        ask = {"tables": tables(2, "r")}
        problem(client.post("/v1/bulk-pairings", json=ask), 401, "authentication_required")
        problem(
            client.post("/v1/bulk-pairings", json=ask, headers={"X-API-Key": "x" * 20}),
            401,
            "invalid_api_key",
        )
        problem(
            client.post("/v1/bulk-pairings", json=ask, headers=player("r0a")), 403, "platform_only"
        )
        problem(
            client.post("/v1/bulk-pairings", json={"tables": tables(1001, "r")}, headers=PLATFORM),
            400,
            "invalid_request",
        )
        problem(
            client.post("/v1/bulk-pairings", json={"tables": []}, headers=PLATFORM),
            400,
            "invalid_request",
        )
        far = client.post(
            "/v1/bulk-pairings", json={**ask, "start_at": at(31 * 86400)}, headers=PLATFORM
        )
        problem(far, 400, "invalid_bulk_pairing")
        past = client.post(
            "/v1/bulk-pairings", json={**ask, "start_at": at(-3600)}, headers=PLATFORM
        )
        problem(past, 400, "invalid_bulk_pairing")
        bad = [*tables(2, "r"), {"seats": [{"player_id": "z", "name": "Z"}, {"name": "nobody"}]}]
        named = problem(
            client.post("/v1/bulk-pairings", json={"tables": bad}, headers=PLATFORM),
            400,
            "invalid_bulk_pairing",
        )
        assert named["table"] == 2
        twice = [{"seats": [{"player_id": "r0a", "name": "A"}, {"player_id": "r0a", "name": "B"}]}]
        problem(
            client.post("/v1/bulk-pairings", json={"tables": twice}, headers=PLATFORM),
            400,
            "invalid_bulk_pairing",
        )
        for name in ("Ann\x00", "\u202eAnn", " "):
            policed = [{"seats": [{"player_id": "r0a", "name": name}, {"bot": "basic"}]}]
            problem(
                client.post("/v1/bulk-pairings", json={"tables": policed}, headers=PLATFORM),
                400,
                "invalid_text",
            )
        after = client.get("/v1/games", params={"player_id": "r0a"}, headers=PLATFORM).json()
        assert after == before
        problem(
            client.get(f"/v1/bulk-pairings/{'a' * 20}", headers=PLATFORM),
            404,
            "bulk_pairing_not_found",
        )
        problem(
            client.get(f"/v1/bulk-pairings/{'a' * 20}", headers=player("r0a")), 403, "platform_only"
        )
        problem(
            client.post(f"/v1/bulk-pairings/{'a' * 20}/start", headers=PLATFORM),
            404,
            "bulk_pairing_not_found",
        )
        problem(client.post(f"/v1/bulk-pairings/{'a' * 20}/cancel"), 401, "authentication_required")


def started_webhooks(receiver: Receiver, game_ids: list[str]) -> dict[str, list[dict]]:
    """Each game's `game_started` deliveries the receiver verified, each its `webhook-id`
    and its body."""
    found: dict[str, list[dict]] = {game_id: [] for game_id in game_ids}
    for delivery in receiver.accepted():
        body = json.loads(delivery.body)
        if body["type"] == "game_started" and body["data"]["game_id"] in found:
            found[body["data"]["game_id"]].append({"id": delivery.id, **body})
    return found


def idle(client: TestClient) -> bool:
    """Nothing left to relay (no mark of a save waits for a relay worker) and nothing left
    to deliver (the webhook outbox is empty)."""
    relay = client.app.state.service.relay
    hooks = next(r for r in relay.reactions if r.name == "webhooks")
    portal = client.blocking_portal
    return portal.call(relay.queue.backlog) == 0 and portal.call(hooks.outbox.backlog) == 0


def each_started_once(client: TestClient, receiver: Receiver, bulk: dict) -> None:
    """Each table of the bulk has had its `game_started` webhook, once: waits for the fact
    (every table's arrived, and nothing is left to relay or deliver, so no copy is on its
    way), then counts them. Its seats: the table's."""
    game_ids = [t["game_id"] for t in bulk["tables"]]
    for _ in range(WAITS):  # a failsafe bound only
        found = started_webhooks(receiver, game_ids)
        if all(found.values()) and idle(client):
            break
        time.sleep(0.05)
    found = started_webhooks(receiver, game_ids)
    for table in bulk["tables"]:
        game_id = table["game_id"]
        assert [d["id"] for d in found[game_id]] == [f"msg_{game_id}_started"], found[game_id]
        seats = found[game_id][0]["data"]["seats"]
        assert [s["player_id"] for s in seats] == [s["player_id"] for s in table["seats"]]
        assert [s["bot"] for s in seats] == [s["bot"] for s in table["seats"]]


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_each_table_of_a_bulk_started_now_sends_its_game_started_webhook_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, receiver: Receiver
) -> None:
    """A bulk created to start now, and one for a time started early by the platform: each
    table's game tells the platform it started, once."""
    with replicas(kind, tmp_path, request, receiver.url) as (client, reader):
        made = client.post("/v1/bulk-pairings", json={"tables": tables(3, "h")}, headers=PLATFORM)
        assert made.status_code == 201, made.text
        now = made.json()
        assert [t["status"] for t in now["tables"]] == ["active"] * 3
        ask = {"tables": tables(2, "e"), "start_at": at(3600)}
        early = client.post("/v1/bulk-pairings", json=ask, headers=PLATFORM).json()
        assert started_webhooks(receiver, [t["game_id"] for t in early["tables"]]) == {
            t["game_id"]: [] for t in early["tables"]
        }  # open tables tell nothing yet
        started = client.post(f"/v1/bulk-pairings/{early['id']}/start", headers=PLATFORM)
        assert started.status_code == 200, started.text
        assert [t["status"] for t in started.json()["tables"]] == ["active"] * 2
        each_started_once(reader, receiver, now)
        each_started_once(reader, receiver, early)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_each_table_of_a_bulk_started_by_its_job_at_its_time_sends_its_webhook_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, receiver: Receiver
) -> None:
    """A bulk for an hour ahead, its start job run on a clock of the test's (due LEAD
    seconds before the time, it deals the tables ahead, waits for the time, then saves the
    starts and leaves their webhooks to the relay's workers): each table's `game_started`
    webhook reaches the platform once."""
    with replicas(kind, tmp_path, request, receiver.url) as (client, reader):
        ask = {"tables": tables(3, "a"), "start_at": at(3600)}
        made = client.post("/v1/bulk-pairings", json=ask, headers=PLATFORM)
        assert made.status_code == 201, made.text
        bulk = made.json()
        assert statuses(reader, bulk["id"]) == ["open"] * 3
        start_at = datetime.fromisoformat(ask["start_at"]).timestamp()
        # the start jobs as a worker runs them, on a clock of the test's: due LEAD seconds
        # before the time (the app's own worker, on the wall clock, finds nothing due for an
        # hour), its wait for the time a step of that clock
        jobs = client.app.state.bulk.served(identities_open=False)
        clock = [start_at - LEAD]

        async def wait(seconds: float) -> None:
            clock[0] += seconds

        jobs.clock, jobs.sleep = (lambda: clock[0]), wait
        assert client.blocking_portal.call(jobs.run_job, job_id(bulk["id"], 0)) is None
        assert clock[0] >= start_at  # it waited for the time
        assert statuses(reader, bulk["id"]) == ["active"] * 3
        each_started_once(reader, receiver, bulk)
