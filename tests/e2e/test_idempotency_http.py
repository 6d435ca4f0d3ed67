"""`Idempotency-Key` over HTTP: a retry returns the first response and changes nothing.

- the same key and body again: the same status, the byte-identical body, the header
  `Idempotent-Replayed: true`; the version moved once and the log grew once;
- the same key with another body: 409 `idempotency_key_reused`, nothing changed;
- the same key and body from another seat's token: another request (the fingerprint holds
  the seat): refused like a reused key, and the first seat's response is not handed out;
- retries racing each other: one is applied, all answer the same bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid

import httpx
import msgspec
import pytest
import redis

from tests.support.api import Table, bearer, check_etag, check_problem

pytestmark = pytest.mark.e2e

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
    # the same action spelled with other bytes is another body too
    spaced = table.client.post(
        f"{table.path}/actions",
        content=b'{ "type" : "draw" }',
        headers={
            **bearer(table.tokens[0]),
            "Content-Type": "application/json",
            "Idempotency-Key": key,
        },
    )
    check_problem(spaced, 409, "idempotency_key_reused")
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


def test_retry_of_a_key_an_older_release_remembered(
    redis_http: httpx.Client, redis_client: redis.Redis
) -> None:
    """During a rolling upgrade a retry may find its key remembered by the release before,
    which kept the rendered answer (fingerprint, status, body, version), not the outcome: the
    retry gets that answer again, byte for byte, not a 500; another body is still refused."""
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

    headers = {**bearer(table.tokens[0]), **JSON, "Idempotency-Key": key}
    again = redis_http.post(f"{table.path}/actions", content=body, headers=headers)
    assert again.status_code == 200, again.text[:500]
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["etag"] == first.headers["etag"] == '"1"'
    assert again.headers["content-type"] == first.headers["content-type"]
    assert table.snapshot() == after_first

    other = b'{"type":"pass"}'
    check_problem(
        redis_http.post(f"{table.path}/actions", content=other, headers=headers),
        409,
        "idempotency_key_reused",
    )
    assert table.snapshot() == after_first
