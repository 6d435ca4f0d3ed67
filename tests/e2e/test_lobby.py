"""The lobby over real HTTP: tables created open, joined, left, started, cancelled, aborted;
seat tokens reissued; games listed; create and join idempotent; identities verified.

The anonymous flows run on both shared service processes (Redis and the embedded default);
the platform flow runs on Redis + PostgreSQL with API keys and player JWTs configured, behind
two replicas, and ends in the archive's ranked statistics.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import jwt
import pytest

from tests.support.archive import claim_redis_db, pg_database, servers

PROBLEM = "application/problem+json"
API_KEY = "platform-key-" + "k" * 24
OLD_KEY = "platform-key-" + "o" * 24
SECRET = "s" * 40
ISSUER, AUDIENCE = "https://platform.example", "ten"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def player_jwt(sub: str, *, secret: str = SECRET, **claims: object) -> str:
    now = int(time.time())
    body = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": now + 300, "iat": now, **claims}
    return jwt.encode(body, secret, "HS256")


def refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    assert response.json()["code"] == code, response.json()


def open_table(client: httpx.Client, **extra: object) -> dict:
    body = {"players": [{"name": "Ann"}, {"open": True}, {"open": True}], **extra}
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    table = created.json()
    assert table["status"] == "open"
    return table


def play_to_end(client: httpx.Client, game_id: str, tokens: dict[int, str]) -> dict:
    """Every human seat plays its first legal action until the game ends."""
    rng = random.Random(game_id)
    game = client.get(f"/v1/games/{game_id}").json()
    for _ in range(2000):
        if game["status"] != "active":
            return game
        token = tokens[game["to_act"]]
        legal = client.get(f"/v1/games/{game_id}", headers=bearer(token)).json()["legal_actions"]
        acted = client.post(
            f"/v1/games/{game_id}/actions", json=rng.choice(legal), headers=bearer(token)
        )
        assert acted.status_code == 200, acted.text
        game = acted.json()
    raise AssertionError("the game did not end")


# ---------------------------------------------------------------- anonymous (open service)


def test_open_table_is_joined_left_started_and_played(client: httpx.Client) -> None:
    table = open_table(client)
    game_id, host = table["id"], table["host_token"]
    ann = table["tokens"][0]["token"]
    assert table["invite_code"] is None
    assert host
    listed = client.get("/v1/games", params={"limit": 100}).json()["games"]
    assert game_id in [g["id"] for g in listed]

    bob = client.post(f"/v1/games/{game_id}/seats", json={"name": "Bob"})
    assert bob.status_code == 201
    assert bob.json()["seat"] == 1
    assert bob.json()["table"]["version"] == 1
    assert bob.json()["game"] is None
    left = client.delete(f"/v1/games/{game_id}/seats/1", headers=bearer(bob.json()["token"]))
    assert left.status_code == 200
    assert not left.json()["seats"][1]["taken"]
    # the old seat token went with the seat
    refused(client.get(f"/v1/games/{game_id}", headers=bearer(bob.json()["token"])), 401,
            "unauthorized")  # fmt: skip
    bob = client.post(f"/v1/games/{game_id}/seats", json={"name": "Bob", "seat": 2}).json()
    assert bob["seat"] == 2

    refused(client.post(f"/v1/games/{game_id}/start", headers=bearer(ann)), 403, "not_host")
    started = client.post(f"/v1/games/{game_id}/start", headers=bearer(host))
    assert started.status_code == 200, started.text
    game = started.json()
    assert game["status"] in ("active", "finished")
    assert [p["name"] for p in game["players"]] == ["Ann", "Bot 2", "Bob"]
    assert game["players"][1]["bot"] == "basic"
    assert game["version"] > table["version"] + 2  # the game goes on from the table's versions
    assert game_id not in [g["id"] for g in client.get("/v1/games").json()["games"]]
    refused(client.post(f"/v1/games/{game_id}/seats", json={"name": "Late"}), 409,
            "game_not_open")  # fmt: skip
    end = play_to_end(client, game_id, {0: ann, 2: bob["token"]})
    assert end["status"] == "finished"
    assert end["results"]


def test_a_table_that_fills_starts_by_itself_and_drop_compacts_seats(client: httpx.Client) -> None:
    table = open_table(client, fill="drop")
    game_id = table["id"]
    cy = client.post(f"/v1/games/{game_id}/seats", json={"name": "Cy", "seat": 2}).json()
    started = client.post(f"/v1/games/{game_id}/start", headers=bearer(table["host_token"]))
    assert [p["name"] for p in started.json()["players"]] == ["Ann", "Cy"]
    # Cy's token named seat 2: it still finds Cy, now in seat 1
    seen = client.get(f"/v1/games/{game_id}", headers=bearer(cy["token"])).json()
    assert seen["seat"] == 1

    full = open_table(client)
    client.post(f"/v1/games/{full['id']}/seats", json={"name": "Bob"})
    last = client.post(f"/v1/games/{full['id']}/seats", json={"name": "Cy"})
    assert last.status_code == 201
    assert last.json()["table"] is None
    assert last.json()["game"]["status"] == "active"
    assert last.json()["game"]["seat"] == 2  # the joiner sees their own seat
    refused(client.post(f"/v1/games/{full['id']}/seats", json={"name": "Dee"}), 409,
            "game_not_open")  # fmt: skip


def test_private_tables_need_their_invite_and_are_not_listed(client: httpx.Client) -> None:
    table = open_table(client, private=True)
    game_id, invite = table["id"], table["invite_code"]
    assert invite
    listed = client.get("/v1/games", params={"limit": 100}).json()["games"]
    assert game_id not in [g["id"] for g in listed]
    refused(client.post(f"/v1/games/{game_id}/seats", json={"name": "Eve"}), 403,
            "invite_required")  # fmt: skip
    refused(client.post(f"/v1/games/{game_id}/seats", json={"name": "Eve", "invite": "x" * 16}),
            403, "invite_required")  # fmt: skip
    joined = client.post(f"/v1/games/{game_id}/seats", json={"name": "Bob", "invite": invite})
    assert joined.status_code == 201


def test_cancel_reissue_and_refusals_change_nothing(client: httpx.Client) -> None:
    table = open_table(client)
    game_id, host, ann = table["id"], table["host_token"], table["tokens"][0]["token"]
    refused(client.post("/v1/games/0123456789abcdef0123/seats", json={}), 404, "game_not_found")
    refused(client.post(f"/v1/games/{game_id}/seats", json={"seat": 0}), 409, "seat_unavailable")
    refused(client.post(f"/v1/games/{game_id}/seats", json={"seat": 9}), 400, "invalid_request")
    refused(client.post(f"/v1/games/{game_id}/cancel"), 401, "unauthorized")
    refused(client.post(f"/v1/games/{game_id}/actions", json={"type": "draw"},
                        headers=bearer(ann)), 409, "game_not_started")  # fmt: skip
    assert client.get(f"/v1/games/{game_id}").json()["version"] == 0  # nothing changed

    fresh = client.post(f"/v1/games/{game_id}/seats/0/token", headers=bearer(ann))
    assert fresh.status_code == 200
    # the old token stopped working: it is no credential of this game any more (401)
    refused(client.post(f"/v1/games/{game_id}/seats/0/token", headers=bearer(ann)), 401,
            "unauthorized")  # fmt: skip
    cancelled = client.post(f"/v1/games/{game_id}/cancel", headers=bearer(host))
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    refused(client.post(f"/v1/games/{game_id}/seats", json={"name": "Bob"}), 409,
            "game_not_open")  # fmt: skip
    refused(client.post(f"/v1/games/{game_id}/start", headers=bearer(host)), 409,
            "game_not_open")  # fmt: skip


def test_reissued_token_in_a_live_game_replaces_the_old_one(client: httpx.Client) -> None:
    created = client.post("/v1/games", json={"players": [{"name": "Ann"}, {"name": "Bob"}]})
    game = created.json()
    tokens = {s["seat"]: s["token"] for s in game["seats"]}
    seat = game["to_act"]
    version = game["version"]
    fresh = client.post(f"/v1/games/{game['id']}/seats/{seat}/token", headers=bearer(tokens[seat]))
    assert fresh.status_code == 200
    refused(client.post(f"/v1/games/{game['id']}/actions", json={"type": "draw"},
                        headers=bearer(tokens[seat])), 401, "unauthorized")  # fmt: skip
    acted = client.post(f"/v1/games/{game['id']}/actions", json={"type": "draw"},
                        headers=bearer(fresh.json()["token"]))  # fmt: skip
    assert acted.status_code == 200
    assert acted.json()["version"] == version + 1
    # the reissue survives the action (the action did not save a stale copy over it)
    refused(client.post(f"/v1/games/{game['id']}/seats/{seat}/token",
                        headers=bearer(tokens[seat])), 401, "unauthorized")  # fmt: skip


def lobby_requests(table: dict, game: dict) -> dict[str, tuple[str, str, dict | None]]:
    """Every lobby route (and the listing of a player's games), on this table or live game."""
    t, g = f"/v1/games/{table['id']}", f"/v1/games/{game['id']}"
    return {
        "join": ("POST", f"{t}/seats", {"name": "Zed"}),
        "leave": ("DELETE", f"{t}/seats/0", None),
        "start": ("POST", f"{t}/start", None),
        "cancel": ("POST", f"{t}/cancel", None),
        "abort": ("POST", f"{g}/abort", None),
        "reissue": ("POST", f"{t}/seats/0/token", None),
        "reissue_live": ("POST", f"{g}/seats/0/token", None),
        "list_player": ("GET", "/v1/games?player_id=p-ann", None),
    }


def test_a_credential_the_service_cannot_verify_is_401_on_every_lobby_route(
    client: httpx.Client,
) -> None:
    """Garbage, a JWT where no JWT key is configured, a forged or replaced seat or host token,
    another game's token: 401 `unauthorized` (the lobby answered 403 not_host / not_your_seat
    to most of them, a defect: 403 is for a valid credential that does not allow this). A
    valid token of this game that is not the one needed stays 403."""
    table = open_table(client)
    game = client.post("/v1/games", json={"players": [{"name": "Ann"}, {"name": "Bob"}]}).json()
    other = open_table(client)
    tid, host, ann = table["id"], table["host_token"], table["tokens"][0]["token"]
    replaced = client.post(f"/v1/games/{tid}/seats/0/token", headers=bearer(ann))
    assert replaced.status_code == 200
    ann = replaced.json()["token"]
    bad = {
        "garbage": "garbage",
        "a JWT": player_jwt("p-ann"),
        "forged seat token": f"{tid}.0.{'f' * 32}",
        "forged host token": f"{tid}.host.{'f' * 32}",
        "replaced seat token": replaced.request.headers["authorization"].removeprefix("Bearer "),
        "another game's host token": other["host_token"],
    }
    before = (client.get(f"/v1/games/{tid}").json(), client.get(f"/v1/games/{game['id']}").json())
    for route, (method, path, body) in lobby_requests(table, game).items():
        for what, token in bad.items():
            if route in ("join", "list_player") and what not in ("garbage", "a JWT"):
                continue  # a seat token is no credential of these: handed on, not checked
            response = client.request(method, path, json=body, headers=bearer(token))
            assert response.status_code == 401, (route, what, response.text)
            assert response.json()["code"] == "unauthorized", (route, what)
            assert response.headers["www-authenticate"].lower().startswith("bearer")
            assert token not in response.text
    after = (client.get(f"/v1/games/{tid}").json(), client.get(f"/v1/games/{game['id']}").json())
    assert after == before  # nothing changed
    # valid credentials of this game that do not allow the operation: 403
    refused(client.post(f"/v1/games/{tid}/start", headers=bearer(ann)), 403, "not_host")
    refused(client.post(f"/v1/games/{tid}/cancel", headers=bearer(ann)), 403, "not_host")
    refused(client.delete(f"/v1/games/{tid}/seats/1", headers=bearer(ann)), 403, "not_your_seat")
    refused(client.post(f"/v1/games/{tid}/seats/1/token", headers=bearer(host)), 403,
            "not_your_seat")  # fmt: skip


def test_create_and_join_are_idempotent(client: httpx.Client) -> None:
    key = {"Idempotency-Key": secrets.token_hex(8)}
    body = {"players": [{"name": "Ann"}, {"open": True}]}
    first = client.post("/v1/games", json=body, headers=key)
    again = client.post("/v1/games", json=body, headers=key)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    refused(client.post("/v1/games", json={"players": [{"name": "Bo"}]}, headers=key), 409,
            "idempotency_key_reused")  # fmt: skip
    game_id = first.json()["id"]
    join_key = {"Idempotency-Key": secrets.token_hex(8)}
    joined = client.post(f"/v1/games/{game_id}/seats", json={"name": "Bob"}, headers=join_key)
    retried = client.post(f"/v1/games/{game_id}/seats", json={"name": "Bob"}, headers=join_key)
    assert joined.status_code == retried.status_code == 201
    assert retried.content == joined.content  # one seat taken, the same token


def test_fifty_clients_race_for_the_last_seat(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as http:
        body = {"players": [{"name": "Ann"}, {"name": "Bob"}, {"open": True}], "fill": "drop"}
        table = http.post("/v1/games", json=body).json()

    def join(i: int) -> httpx.Response:
        with httpx.Client(base_url=server, timeout=30) as http:
            return http.post(f"/v1/games/{table['id']}/seats", json={"name": f"P{i}"})

    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(join, range(50)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(201) == 1, statuses
    assert set(statuses) == {201, 409}, statuses
    codes = {a.json()["code"] for a in answers if a.status_code == 409}
    assert codes <= {"game_not_open", "table_full", "concurrent_update"}, codes
    with httpx.Client(base_url=server, timeout=30) as http:
        game = http.get(f"/v1/games/{table['id']}").json()
    assert game["status"] == "active"
    assert len(game["players"]) == 3


def test_a_join_racing_the_start_leaves_one_consistent_table(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as http:
        table = http.post(
            "/v1/games", json={"players": [{"name": "Ann"}, {"open": True}, {"open": True}]}
        ).json()

    def start() -> httpx.Response:
        with httpx.Client(base_url=server, timeout=30) as http:
            return http.post(f"/v1/games/{table['id']}/start", headers=bearer(table["host_token"]))

    def join() -> httpx.Response:
        with httpx.Client(base_url=server, timeout=30) as http:
            return http.post(f"/v1/games/{table['id']}/seats", json={"name": "Bob"})

    with ThreadPoolExecutor(max_workers=2) as pool:
        started, joined = pool.submit(start), pool.submit(join)
        started_answer, joined_answer = started.result(), joined.result()
    assert started_answer.status_code == 200
    with httpx.Client(base_url=server, timeout=30) as http:
        game = http.get(f"/v1/games/{table['id']}").json()
    names = [p["name"] for p in game["players"]]
    if joined_answer.status_code == 201:  # the join came first: Bob plays
        assert "Bob" in names
        seen = http_get_seat(server, table["id"], joined_answer.json()["token"])
        assert seen == names.index("Bob")
    else:  # the start came first: the seat went to a bot
        refused(joined_answer, 409, "game_not_open")
        assert "Bob" not in names
    assert len(names) == 3


def http_get_seat(server: str, game_id: str, token: str) -> int:
    with httpx.Client(base_url=server, timeout=30) as http:
        return http.get(f"/v1/games/{game_id}", headers=bearer(token)).json()["seat"]


# ---------------------------------------------------------------- the platform


@pytest.fixture(scope="module")
def platform(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[list[str]]:
    """Two replicas on one Redis and one PostgreSQL, API keys and player JWTs configured."""
    tmp_path: Path = tmp_path_factory.mktemp("platform")
    with contextlib.ExitStack() as stack:
        url, _ = stack.enter_context(claim_redis_db(request.getfixturevalue("redis_url")))
        db = stack.enter_context(pg_database(migrate=False))
        env = {
            "TEN_REDIS_URL": url,
            "TEN_DATABASE_URL": db.url,
            "TEN_MIGRATE_ON_START": "true",
            "TEN_API_KEYS": f"{API_KEY},{OLD_KEY}",
            "TEN_JWT_SECRET": SECRET,
            "TEN_JWT_ISSUER": ISSUER,
            "TEN_JWT_AUDIENCE": AUDIENCE,
            "TEN_ARCHIVE_INTERVAL": "0.2",
        }
        replicas = stack.enter_context(servers(tmp_path, env, env))
        yield [r.base for r in replicas]


@pytest.fixture
def replicas(platform: list[str]) -> Iterator[list[httpx.Client]]:
    clients = [httpx.Client(base_url=base, timeout=30) for base in platform]
    yield clients
    for http in clients:
        http.close()


def test_platform_flow_ends_ranked_and_counted(replicas: list[httpx.Client]) -> None:
    a, b = replicas
    key = {"X-API-Key": API_KEY}
    players = [{"player_id": p} for p in ("p-ann", "p-bob", "p-cy")] + [{"open": True}]
    table = a.post("/v1/games", json={"players": players, "private": True}, headers=key).json()
    game_id = table["id"]
    assert table["status"] == "open"
    assert table["invite_code"]
    assert table["host_token"] is None
    tokens = {}
    for i, pid in enumerate(("p-ann", "p-bob", "p-cy")):  # joined on the other replica
        joined = b.post(f"/v1/games/{game_id}/seats", json={"name": pid},
                        headers=bearer(player_jwt(pid)))  # fmt: skip
        assert joined.status_code == 201, joined.text
        assert joined.json()["seat"] == i  # their reserved seats
        tokens[i] = joined.json()["token"]
    mine = a.get("/v1/games", params={"player_id": "p-ann"}, headers=bearer(player_jwt("p-ann")))
    assert game_id in [g["id"] for g in mine.json()["games"]]
    refused(a.get("/v1/games", params={"player_id": "p-ann"},
                  headers=bearer(player_jwt("p-bob"))), 403, "player_id_not_yours")  # fmt: skip
    dee = b.post(f"/v1/games/{game_id}/seats", json={"invite": table["invite_code"]},
                 headers=bearer(player_jwt("p-dee")))  # fmt: skip
    assert dee.status_code == 201
    assert dee.json()["game"]["status"] == "active"
    tokens[3] = dee.json()["token"]
    game = play_to_end(a, game_id, tokens)
    assert game["status"] == "finished"
    for _ in range(100):
        stats = b.get("/v1/players/p-dee/stats").json()
        if stats["games"]:
            break
        time.sleep(0.1)
    assert stats["games"] == 1
    assert stats["ranked_only"] is True
    archived = a.get(f"/v1/archive/games/{game_id}").json()
    assert archived["ranked"] is True
    assert archived["unranked_reason"] is None


def test_platform_refuses_what_it_should(replicas: list[httpx.Client]) -> None:
    http = replicas[0]
    body = {"players": [{"name": "Ann", "player_id": "p-ann"}, {"open": True}]}
    refused(http.post("/v1/games", json=body), 401, "authentication_required")
    refused(http.post("/v1/games", json=body, headers={"X-API-Key": "wrong-" + "x" * 20}), 401,
            "invalid_api_key")  # fmt: skip
    refused(http.post("/v1/games", json=body, headers=bearer(player_jwt("p-bob"))), 403,
            "player_id_not_yours")  # fmt: skip
    for token in (
        player_jwt("p-ann", exp=int(time.time()) - 600),
        player_jwt("p-ann", iss="https://evil.example"),
        player_jwt("p-ann", aud="other"),
        player_jwt("p-ann", secret="t" * 40),
        jwt.encode({"sub": "p-ann", "iss": ISSUER, "aud": AUDIENCE}, None, "none"),
        player_jwt("p-ann")[:-4] + "AAAA",
    ):
        refused(http.post("/v1/games", json=body, headers=bearer(token)), 401, "invalid_token")
    table = http.post("/v1/games", json=body, headers=bearer(player_jwt("p-ann")))
    assert table.status_code == 201, table.text
    game_id = table.json()["id"]
    assert table.json()["seats"][0]["verified"] is True
    # a player may not take a seat as someone else, nor without credentials
    refused(http.post(f"/v1/games/{game_id}/seats", json={"player_id": "p-cy"},
                      headers=bearer(player_jwt("p-bob"))), 403, "player_id_not_yours")  # fmt: skip
    refused(http.post(f"/v1/games/{game_id}/seats", json={"name": "Anon"}), 401,
            "authentication_required")  # fmt: skip
    refused(http.post(f"/v1/games/{game_id}/seats", json={}, headers=bearer(player_jwt("p-ann"))),
            409, "already_seated")  # fmt: skip
    # the host (the JWT's player) may abort; another player may not
    refused(http.post(f"/v1/games/{game_id}/cancel", headers=bearer(player_jwt("p-bob"))), 403,
            "not_host")  # fmt: skip
    assert http.get(f"/v1/games/{game_id}").json()["status"] == "open"
    cancelled = http.post(f"/v1/games/{game_id}/cancel", headers={"X-API-Key": OLD_KEY})
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"


def test_options_names_both_methods_of_the_games_collection(client: httpx.Client) -> None:
    allowed = client.options("/v1/games").headers["Allow"]
    assert {m.strip() for m in allowed.split(",")} == {"GET", "OPTIONS", "POST"}


def test_an_aborted_game_is_archived_as_aborted_and_unranked(client: httpx.Client) -> None:
    table = open_table(client)
    game_id, host, ann = table["id"], table["host_token"], table["tokens"][0]["token"]
    refused(client.post(f"/v1/games/{game_id}/abort", headers=bearer(host)), 409,
            "game_not_started")  # fmt: skip
    client.post(f"/v1/games/{game_id}/start", headers=bearer(host))
    refused(client.post(f"/v1/games/{game_id}/abort", headers=bearer(ann)), 403, "not_host")
    aborted = client.post(f"/v1/games/{game_id}/abort", headers=bearer(host))
    assert aborted.status_code == 200
    assert aborted.json()["status"] == "aborted"
    assert aborted.json()["legal_actions"] is None
    refused(client.post(f"/v1/games/{game_id}/actions", json={"type": "draw"},
                        headers=bearer(ann)), 409, "game_over")  # fmt: skip
    for _ in range(100):
        archived = client.get(f"/v1/archive/games/{game_id}")
        if archived.status_code == 200:
            break
        time.sleep(0.1)
    assert archived.status_code == 200, archived.text
    assert archived.json()["status"] == "aborted"
    assert archived.json()["ranked"] is False
    assert archived.json()["unranked_reason"] == "aborted"
