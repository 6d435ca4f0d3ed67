"""Matchmaking tickets over HTTP, in process, on the embedded store and on the real Redis: create,
read, cancel and their refusals (problem+json, nothing changed), two players matched into
one game each reading their own seat token and not the other's, a party seated together
with a player alone, each reading and playing their seat with their JWT, the ticket's stream
delivering the match, bots filling a table after the wait, a ticket expiring after a day,
and the `ticket_matched` webhook queued for the platform."""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from litestar.testing import TestClient

from service.core.settings import (
    ArchiveSettings,
    IdentitySettings,
    ObservabilitySettings,
    RedisSettings,
    WebhookSettings,
)
from service.core.settings import Settings as ServiceSettings
from service.entrypoints.api.app import create_app
from service.matchmaking.records import LIFETIME
from service.reactions.webhook_delivery import delivery_id
from tests.support.archive import claim_redis_db

API_KEY = "platform-key-0123456789abcdef"
PLATFORM = {"X-API-Key": API_KEY}
SECRET = "a-secret-of-the-platform-32-bytes-or-more"
ISSUER = "https://platform.example"
HOOK = "http://127.0.0.1:9/hooks"  # nobody listens: the deliveries stay queued
WAITS = 400  # looks at a ticket (0.05 s apart) before giving up on its match
STREAM_FAILSAFE = 120.0  # seconds a ticket's stream may take to end before the test fails
TICKETS = "/v1/matchmaking/tickets"


def player(sub: str) -> dict[str, str]:
    claims = {"sub": sub, "iss": ISSUER, "aud": "ten", "exp": int(time.time()) + 600}
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {token}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def app_settings(tmp_path: Path, redis_url: str | None, verified: bool) -> ServiceSettings:
    identity = IdentitySettings()
    if verified:
        identity = IdentitySettings(
            api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer=ISSUER, jwt_audience="ten"
        )
    return ServiceSettings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3", migrate_on_start=True
        ),
        redis=RedisSettings(url=redis_url),
        observability=ObservabilitySettings(log_format="json"),
        identity=identity,
        webhooks=WebhookSettings(urls=(HOOK,), secret="whsec_" + "A" * 32),
    )


@contextlib.contextmanager
def serving(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, *, verified: bool = True
) -> Iterator[TestClient]:
    if kind == "memory":
        with TestClient(create_app(app_settings(tmp_path, None, verified))) as client:
            yield client
        return
    with claim_redis_db(request.getfixturevalue("redis_url")) as (url, raw):
        try:
            with TestClient(create_app(app_settings(tmp_path, url, verified))) as client:
                yield client
        finally:
            held = "*quota:{waiting-tickets:*"  # the callers' quotas of waiting tickets
            for pattern in ("{ten:mm:*", "{ten:q:matchmaking}*", "{ten:q:webhooks}*", held):
                left = list(raw.scan_iter(match=pattern, count=1000))
                if left:
                    raw.delete(*left)


def problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


def created(response: Any) -> dict:
    assert response.status_code == 201, response.text[:500]
    return response.json()


def wait_for(client: TestClient, ticket_id: str, status: str, **headers: str) -> dict:
    for _ in range(WAITS):
        body = client.get(f"{TICKETS}/{ticket_id}", headers=headers).json()
        if body["status"] == status:
            return body
        time.sleep(0.05)
    raise AssertionError(f"ticket {ticket_id} never got {status}: {body}")


def queued_webhook(client: TestClient, message_id: str) -> bool:
    webhooks = client.app.state.matchmaking.matchmaker.announce.__self__
    return client.blocking_portal.call(webhooks.outbox.queue.queued, delivery_id(message_id, HOOK))


STORES = pytest.mark.parametrize("kind", ["memory", "redis"])


@STORES
def test_two_players_are_matched_into_one_game_and_each_reads_only_their_own_seat_token(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with serving(kind, tmp_path, request) as client:
        ask = {"mode": "live", "sizes": [2], "name": "Ann", "rated": False}
        ann = created(client.post(TICKETS, json=ask, headers=player("ann")))
        assert ann["status"] == "waiting"
        assert ann["player_id"] == "ann"
        assert ann["ticket_token"] is None  # a player's JWT holds it
        # the stream sends the ticket at once, then each change as shown to its reader, then
        # ends after the match (the test client hands a response over once it ended: it is
        # read in a thread of its own); whether its first read falls before the match or
        # after it is the feed's timing, so the waiting event may or may not be there
        events: list[dict] = []

        def follow() -> None:
            path = f"{TICKETS}/{ann['id']}/events/stream"
            with client.stream("GET", path, headers=player("ann")) as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                for line in stream.iter_lines():
                    if line.startswith("data: "):
                        events.append(json.loads(line[6:]))

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        bob_ask = {**ask, "name": "Bob", "player_id": "bob"}
        bob = created(client.post(TICKETS, json=bob_ask, headers=PLATFORM))
        reader.join(STREAM_FAILSAFE)  # the fact: the stream ended, after the matched event
        assert not reader.is_alive(), f"the stream never ended: {events}"
        statuses = [e["status"] for e in events]
        assert statuses, "the stream sent no ticket"
        assert statuses[-1] == "matched", statuses
        assert set(statuses[:-1]) <= {"waiting"}, statuses
        assert all(a != b for a, b in itertools.pairwise(statuses)), statuses
        matched = events[-1]
        assert matched["seat_token"] is not None  # to its holder, on its stream too
        mine = client.get(f"{TICKETS}/{ann['id']}", headers=player("ann")).json()
        theirs = client.get(f"{TICKETS}/{bob['id']}", headers=player("bob")).json()
        assert mine["game_id"] == theirs["game_id"] == matched["game_id"]
        assert {mine["seat"], theirs["seat"]} == {0, 1}
        assert mine["seat_token"] != theirs["seat_token"]
        # another player, and an anonymous reader, see no seat token
        assert (
            client.get(f"{TICKETS}/{ann['id']}", headers=player("bob")).json()["seat_token"] is None
        )
        assert client.get(f"{TICKETS}/{ann['id']}").json()["seat_token"] is None
        # the platform reads every seat token; each works for its own seat only
        assert (
            client.get(f"{TICKETS}/{bob['id']}", headers=PLATFORM).json()["seat_token"]
            == theirs["seat_token"]
        )
        game = client.get(f"/v1/games/{mine['game_id']}", headers=bearer(mine["seat_token"]))
        assert game.status_code == 200
        assert game.json()["seat"] == mine["seat"]
        assert queued_webhook(client, f"msg_mm_{ann['id']}_matched")
        assert queued_webhook(client, f"msg_mm_{bob['id']}_matched")
        problem(
            client.delete(f"{TICKETS}/{ann['id']}", headers=player("ann")),
            409,
            "ticket_already_matched",
        )


@STORES
def test_a_party_is_seated_together_at_one_game_and_each_member_reads_their_seat_by_jwt(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A party of two (the platform's ticket for Ann, Bea kept with her) and Cal alone, both
    asking for three seats: one game, the party side by side in it, no bot. Each player
    reads their own seat with their own JWT; the party's ticket gives its seat token to its
    holder (Ann, or the platform) alone, never to Bea."""
    with serving(kind, tmp_path, request) as client:
        party = {
            "mode": "live", "sizes": [3], "name": "Ann", "rated": False, "player_id": "ann",
            "party": [{"player_id": "bea", "name": "Bea"}],
        }  # fmt: skip
        ann = created(client.post(TICKETS, json=party, headers=PLATFORM))
        assert ann["party"] == [{"player_id": "bea", "name": "Bea"}]
        assert ann["ticket_token"] is None  # the platform holds it
        solo = {"mode": "live", "sizes": [3], "name": "Cal", "rated": False}
        cal = created(client.post(TICKETS, json=solo, headers=player("cal")))
        ours = wait_for(client, ann["id"], "matched", **player("ann"))
        hers = wait_for(client, cal["id"], "matched", **player("cal"))
        game_id = ours["game_id"]
        assert hers["game_id"] == game_id
        # the party side by side: Bea right after her holder; Cal at the seat left
        seats = {"ann": ours["seat"], "bea": ours["seat"] + 1, "cal": hers["seat"]}
        assert sorted(seats.values()) == [0, 1, 2]
        game = client.get(f"/v1/games/{game_id}", headers=PLATFORM).json()
        assert [(p["name"], p["bot"]) for p in game["players"]] == sorted(
            [("Ann", None), ("Bea", None), ("Cal", None)], key=lambda n: seats[n[0].lower()]
        )
        # each player's JWT reads their own seat of the game
        for who, seat in seats.items():
            mine = client.get(f"/v1/games/{game_id}", headers=player(who))
            assert mine.status_code == 200, mine.text
            assert mine.json()["seat"] == seat, who
        # the party's ticket: its seat token (Ann's seat's) to Ann's JWT and the platform,
        # never to Bea's JWT, to Cal's or to a reader without credentials
        assert ours["seat_token"] is not None
        by_platform = client.get(f"{TICKETS}/{ann['id']}", headers=PLATFORM).json()
        assert by_platform["seat_token"] == ours["seat_token"]
        for other in (player("bea"), player("cal"), {}):
            shown = client.get(f"{TICKETS}/{ann['id']}", headers=other).json()
            assert shown["status"] == "matched"
            assert shown["game_id"] == game_id
            assert shown["seat_token"] is None
        # identities configured: the members' own JWTs (or the platform) reach their seats,
        # so no reader of the ticket gets their seats' tokens, not even its holder
        for reader in (player("ann"), PLATFORM, player("bea"), {}):
            shown = client.get(f"{TICKETS}/{ann['id']}", headers=reader).json()
            assert shown["party_seats"] is None
        held = client.get(f"/v1/games/{game_id}", headers=bearer(ours["seat_token"]))
        assert held.json()["seat"] == seats["ann"]
        assert hers["seat_token"] is not None
        assert client.get(
            f"/v1/games/{game_id}", headers=bearer(hers["seat_token"])
        ).json()["seat"] == seats["cal"]  # fmt: skip
        # one webhook per ticket (the party's names its holder)
        assert queued_webhook(client, f"msg_mm_{ann['id']}_matched")
        assert queued_webhook(client, f"msg_mm_{cal['id']}_matched")
        # Bea plays her seat with her JWT (a resignation: whoever's turn it is)
        resigned = client.post(
            f"/v1/games/{game_id}/actions", json={"type": "resign"}, headers=player("bea")
        )
        assert resigned.status_code == 200, resigned.text
        after = client.get(f"/v1/games/{game_id}", headers=PLATFORM).json()["players"]
        assert [p["resigned"] for p in after] == [s == seats["bea"] for s in range(3)]
        # Bea holds no ticket: she may ask for another game at once
        created(client.post(TICKETS, json={**solo, "name": "Bea"}, headers=player("bea")))


@STORES
def test_one_waiting_ticket_per_player_and_mode_and_cancel_by_its_holder_alone(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with serving(kind, tmp_path, request) as client:
        ask = {"mode": "live", "sizes": [5], "name": "Ann"}
        ann = created(client.post(TICKETS, json=ask, headers=player("ann")))
        problem(client.post(TICKETS, json=ask, headers=player("ann")), 409, "ticket_exists")
        problem(
            client.post(TICKETS, json={**ask, "player_id": "ann"}, headers=PLATFORM),
            409,
            "ticket_exists",
        )
        created(client.post(TICKETS, json={**ask, "mode": "correspondence"}, headers=player("ann")))
        problem(
            client.delete(f"{TICKETS}/{ann['id']}", headers=player("bob")), 403, "not_your_ticket"
        )
        problem(client.delete(f"{TICKETS}/{ann['id']}"), 403, "not_your_ticket")
        problem(client.get(f"{TICKETS}/l0000000000000000000"), 404, "ticket_not_found")
        problem(client.get(f"{TICKETS}/nonsense"), 404, "ticket_not_found")
        cancelled = client.delete(f"{TICKETS}/{ann['id']}", headers=player("ann"))
        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        created(client.post(TICKETS, json=ask, headers=player("ann")))  # free again


@STORES
def test_bad_input_is_problem_json_and_changes_nothing(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with serving(kind, tmp_path, request) as client:
        good = {"mode": "live", "sizes": [5], "name": "Ann"}
        for body, status, code in [
            ({**good, "sizes": [1]}, 400, "invalid_request"),
            ({**good, "sizes": []}, 400, "invalid_request"),
            ({**good, "sizes": [6]}, 400, "invalid_request"),
            ({**good, "mode": "blitz"}, 400, "invalid_request"),
            ({**good, "fill_bots_after": -1}, 400, "invalid_request"),
            ({**good, "fill_bots_after": "10"}, 400, "invalid_request"),
            ({**good, "bot": "grandmaster"}, 400, "invalid_request"),
            ({**good, "surprise": 1}, 400, "invalid_request"),
            ({**good, "name": "A\u202eB"}, 400, "invalid_text"),
            ({**good, "player_id": "bob"}, 403, "player_id_not_yours"),
            ({**good, "party": [{"player_id": "bob", "name": "Bob"}]}, 403, "player_id_not_yours"),
        ]:
            problem(client.post(TICKETS, json=body, headers=player("ann")), status, code)
        problem(client.post(TICKETS, json=good), 401, "authentication_required")
        problem(client.post(TICKETS, json=good, headers=PLATFORM), 400, "invalid_ticket")
        party = {**good, "sizes": [2], "player_id": "ann", "party": [
            {"player_id": "b", "name": "B"}, {"player_id": "c", "name": "C"},
        ]}  # fmt: skip
        problem(client.post(TICKETS, json=party, headers=PLATFORM), 409, "party_too_large")
        problem(client.post(TICKETS, content=b"{", headers=player("ann")), 400, "invalid_request")
        # nothing was held: ann's first ticket is taken
        created(client.post(TICKETS, json=good, headers=player("ann")))


@STORES
def test_bots_fill_a_table_after_the_wait(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with serving(kind, tmp_path, request) as client:
        ask = {"mode": "live", "sizes": [3], "name": "Ann", "fill_bots_after": 0, "bot": "random"}
        ann = created(client.post(TICKETS, json=ask, headers=player("ann")))
        matched = wait_for(client, ann["id"], "matched", **player("ann"))
        game = client.get(f"/v1/games/{matched['game_id']}", headers=bearer(matched["seat_token"]))
        players = game.json()["players"]
        assert [p["bot"] for p in players] == [None, "random", "random"]


@STORES
def test_a_ticket_expires_after_a_day_and_its_player_may_ask_again(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with serving(kind, tmp_path, request) as client:
        ask = {"mode": "correspondence", "sizes": [5], "name": "Ann"}
        ann = created(client.post(TICKETS, json=ask, headers=player("ann")))
        later = time.time() + LIFETIME
        client.app.state.matchmaking.set_clock(lambda: later)
        expired = wait_for(client, ann["id"], "expired")
        assert expired["waited"] == pytest.approx(LIFETIME, abs=0.01)
        assert expired["expires_at"] == ann["expires_at"]
        problem(
            client.delete(f"{TICKETS}/{ann['id']}", headers=player("bob")), 403, "not_your_ticket"
        )
        created(client.post(TICKETS, json=ask, headers=player("ann")))


@STORES
def test_in_open_mode_the_ticket_token_holds_the_ticket(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with serving(kind, tmp_path, request, verified=False) as client:
        ask = {"mode": "live", "sizes": [2], "name": "Ann", "player_id": "ann", "rated": False}
        keyed = {"Idempotency-Key": "ann-1"}
        ann = created(client.post(TICKETS, json=ask, headers=keyed))
        again = client.post(TICKETS, json=ask, headers=keyed)
        assert again.json()["id"] == ann["id"]
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json()["ticket_token"] is None  # a copy never gets it
        problem(
            client.post(TICKETS, json={**ask, "sizes": [3]}, headers=keyed),
            409,
            "idempotency_key_reused",
        )
        token = ann["ticket_token"]
        assert token.startswith(f"{ann['id']}.ticket.")
        guest = created(client.post(TICKETS, json={**ask, "player_id": None, "name": "Guest"}))
        matched = wait_for(client, ann["id"], "matched", **bearer(token))
        assert matched["seat_token"] is not None
        assert client.get(f"{TICKETS}/{ann['id']}").json()["seat_token"] is None
        other = client.get(f"{TICKETS}/{ann['id']}", headers=bearer(guest["ticket_token"]))
        assert other.json()["seat_token"] is None
        problem(
            client.delete(f"{TICKETS}/{ann['id']}", headers=bearer(f"{ann['id']}.ticket.forged")),
            401,
            "unauthorized",
        )


def ticket_stream(client: TestClient, ticket_id: str, headers: dict[str, str]) -> list[dict]:
    """The events of a final ticket's stream (it sends the ticket once, then ends)."""
    events = []
    path = f"{TICKETS}/{ticket_id}/events/stream"
    with client.stream("GET", path, headers=headers) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    return events


@STORES
def test_in_open_mode_a_party_ticket_hands_its_holder_every_party_seat_token_and_nobody_else(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Open mode: a party (Ann holding, Bea and Dan kept with her) and Cal alone, four
    seats. The party's members have no JWT and nothing reissues a seat's token there, so the
    ticket's holder (the bearer of its ticket token) reads every member's seat and token,
    on the ticket and on its stream; Bea plays her seat with the token Ann handed her. Cal,
    a reader without credentials, a forged ticket token, and the streams of those never see
    them."""
    with serving(kind, tmp_path, request, verified=False) as client:
        party = {
            "mode": "live", "sizes": [4], "name": "Ann", "rated": False, "player_id": "ann",
            "party": [{"player_id": "bea", "name": "Bea"}, {"player_id": "dan", "name": "Dan"}],
        }  # fmt: skip
        ann = created(client.post(TICKETS, json=party))
        assert ann["party_seats"] is None  # waiting: no seats yet
        solo = {"mode": "live", "sizes": [4], "name": "Cal", "rated": False, "player_id": "cal"}
        cal = created(client.post(TICKETS, json=solo))
        holder = bearer(ann["ticket_token"])
        ours = wait_for(client, ann["id"], "matched", **holder)
        hers = wait_for(client, cal["id"], "matched", **bearer(cal["ticket_token"]))
        game_id = ours["game_id"]
        assert hers["game_id"] == game_id
        # every other member, after the holder in the party's order, with their seat's token
        handed = ours["party_seats"]
        assert [(p["player_id"], p["seat"]) for p in handed] == [
            ("bea", ours["seat"] + 1),
            ("dan", ours["seat"] + 2),
        ]
        tokens = [ours["seat_token"], *(p["seat_token"] for p in handed), hers["seat_token"]]
        assert all(tokens)
        assert len(set(tokens)) == 4
        game = client.get(f"/v1/games/{game_id}", headers=bearer(ours["seat_token"])).json()
        by_seat = {p["seat"]: p for p in game["players"]}
        for member in handed:
            assert by_seat[member["seat"]]["name"] == member["player_id"].title()
            # each token is that member's seat's
            mine = client.get(f"/v1/games/{game_id}", headers=bearer(member["seat_token"]))
            assert mine.status_code == 200, mine.text
            assert mine.json()["seat"] == member["seat"]
        # the holder's stream says the same; nobody else's read or stream shows them
        assert ticket_stream(client, ann["id"], holder)[-1]["party_seats"] == handed
        forged = bearer(f"{ann['id']}.ticket.forged")
        for stranger in ({}, forged, bearer(cal["ticket_token"]), bearer(hers["seat_token"])):
            shown = client.get(f"{TICKETS}/{ann['id']}", headers=stranger).json()
            assert (shown["status"], shown["game_id"]) == ("matched", game_id)
            assert (shown["seat_token"], shown["party_seats"]) == (None, None)
            streamed = ticket_stream(client, ann["id"], stranger)
            assert streamed
            assert all(e["party_seats"] is None for e in streamed), streamed
            assert all(e["seat_token"] is None for e in streamed), streamed
        assert hers["party_seats"] is None  # Cal came alone
        # Bea plays her seat with the token Ann handed her (a resignation: whoever's turn)
        bea = handed[0]
        resigned = client.post(
            f"/v1/games/{game_id}/actions",
            json={"type": "resign"},
            headers=bearer(bea["seat_token"]),
        )
        assert resigned.status_code == 200, resigned.text
        after = client.get(f"/v1/games/{game_id}", headers=bearer(hers["seat_token"])).json()
        assert [p["resigned"] for p in after["players"]] == [s == bea["seat"] for s in range(4)]


def counted(create, made: list[str]):
    async def counting(command):
        answer = await create(command)
        made.append(answer.record.id)
        return answer

    return counting


def test_two_replicas_stepping_at_once_on_redis_never_make_two_tables_for_a_ticket(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Two apps on one Redis, each ticket created through either, and both replicas' steps
    run at once again and again (beside their own workers): every ticket in one game, each
    game made once, its seats those of its tickets."""
    with claim_redis_db(request.getfixturevalue("redis_url")) as (url, raw):
        try:
            one = create_app(app_settings(tmp_path, url, True))
            two = create_app(app_settings(tmp_path, url, True))
            with TestClient(one) as first, TestClient(two) as second:
                # their clock days ahead: their own workers (on the wall clock) find no step
                # due, so the steps below, at once on both, make every table
                ahead = time.time() + 10 * 86400
                made: list[str] = []
                for client in (first, second):
                    mm = client.app.state.matchmaking
                    mm.set_clock(lambda: ahead)
                    mm.matchmaker.create_game = counted(mm.matchmaker.create_game, made)
                ids = []
                for i in range(24):
                    client = (first, second)[i % 2]
                    ask = {"mode": "live", "sizes": [2, 3], "name": f"P{i}", "player_id": f"p{i}"}
                    ids.append(created(client.post(TICKETS, json=ask, headers=PLATFORM))["id"])
                for _ in range(3):
                    steps = [
                        client.blocking_portal.start_task_soon(
                            client.app.state.matchmaking.matchmaker.step, "live:rated"
                        )
                        for client in (first, second, first, second)
                    ]
                    for step in steps:
                        step.result(60)
                shown = [wait_for(first, i, "matched", **PLATFORM) for i in ids]
                by_game: dict[str, list[dict]] = {}
                for ticket in shown:
                    by_game.setdefault(ticket["game_id"], []).append(ticket)
                assert set(made) == set(by_game)  # a game made again is the same game
                for game_id, tickets in by_game.items():
                    game = second.get(f"/v1/games/{game_id}", headers=PLATFORM).json()
                    assert len(game["players"]) == len(tickets)
                    assert sorted(t["seat"] for t in tickets) == list(range(len(tickets)))
        finally:
            held = "*quota:{waiting-tickets:*"
            for pattern in ("{ten:mm:*", "{ten:q:matchmaking}*", "{ten:q:webhooks}*", held):
                left = list(raw.scan_iter(match=pattern, count=1000))
                if left:
                    raw.delete(*left)
