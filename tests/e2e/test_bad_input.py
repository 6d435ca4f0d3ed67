"""Bad requests get their documented 4xx as problem+json and change nothing (api.md).

Every refusal is checked for: the status, `Content-Type: application/problem+json`, a body
with `status`, `title`, `detail` and `code`, and an unchanged game (the whole public body
and the whole event log, byte for byte, before and after). The `client` fixture fails any
test that gets a 5xx.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from domain.game.cards import deck_for
from tests.support.api import Table, bearer, check_problem

JSON = {"Content-Type": "application/json"}
UNKNOWN_GAME = "0123456789abcdef0123"
BIG = 64 * 1024


@contextmanager
def unchanged(table: Table) -> Iterator[None]:
    before = table.snapshot()
    yield
    assert table.snapshot() == before, "a refused request changed the game"


@pytest.fixture
def table(client: httpx.Client) -> Table:
    """Two humans, Ann (seat 0) to draw first, on a known deck."""
    return Table.create(
        client,
        [{"name": "Ann"}, {"name": "Bob"}],
        deck=["R1", "R3", "W#", "R1", "B5", "B6", "G2", "O7"],
        starting_seat=0,
    )


def post_raw(
    table: Table, content: bytes, seat: int = 0, headers: Mapping[str, str] | None = None
) -> httpx.Response:
    return table.client.post(
        f"{table.path}/actions",
        content=content,
        headers={**bearer(table.tokens[seat]), **JSON, **(headers or {})},
    )


# ------------------------------------------------------------------ bodies of an action

BAD_ACTION_BODIES: dict[str, bytes] = {
    "malformed_json": b'{"type": "draw"',
    "not_json": b"draw please",
    "empty_body": b"",
    "array": b"[]",
    "string": b'"x"',
    "null": b"null",
    "number": b"7",
    "no_type": b"{}",
    "unknown_type": b'{"type": "fly"}',
    "type_not_a_string": b'{"type": 5}',
    "unknown_field": b'{"type": "draw", "card": "R1"}',
    "unknown_field_in_payment": b'{"type": "bid", "amount": 2, "payment": {"gold": 1}}',
    "stop_without_take": b'{"type": "stop"}',
    "stop_take_unknown": b'{"type": "stop", "take": "everything"}',
    "bid_without_amount": b'{"type": "bid"}',
    "amount_word": b'{"type": "bid", "amount": "four"}',
    "amount_bool": b'{"type": "bid", "amount": true}',
    "amount_null": b'{"type": "bid", "amount": null}',
    "amount_list": b'{"type": "bid", "amount": [4]}',
    "amount_fraction": b'{"type": "bid", "amount": 2.5}',
    "amount_huge": b'{"type": "bid", "amount": 1000000000000000000000000000000}',
    "amount_huge_float": b'{"type": "bid", "amount": 1e30}',
    "amount_zero": b'{"type": "bid", "amount": 0}',
    "amount_negative": b'{"type": "bid", "amount": -3}',
    "payment_negative": b'{"type": "bid", "amount": 2, "payment": {"currency": -1, "bust": 1}}',
    "payment_huge": b'{"type": "bid", "amount": 2, "payment": {"currency": 1000000000000000000000}}',
    "buy_unknown_card": b'{"type": "buy", "card": "X9"}',
    "buy_a_wild": b'{"type": "buy", "card": "W#"}',
    "buy_a_currency_card": b'{"type": "buy", "card": "$3"}',
    "buy_card_lowercase": b'{"type": "buy", "card": "r3"}',
    "buy_card_not_a_string": b'{"type": "buy", "card": 13}',
    "payment_unknown_card": b'{"type": "buy", "card": "R1", "payment": {"cards": ["ZZ"]}}',
    "payment_currency_card": b'{"type": "buy", "card": "R1", "payment": {"cards": ["$1"]}}',
    "payment_cards_not_a_list": b'{"type": "buy", "card": "R1", "payment": {"cards": "R2"}}',
    "invalid_utf8": b'{"type": "\xff\xfe"}',
    "nul_in_type": b'{"type": "draw\\u0000"}',
    "duplicate_type": b'{"type": "draw", "type": "fly"}',
}


@pytest.mark.parametrize("name", list(BAD_ACTION_BODIES))
def test_bad_action_body_is_400(table: Table, name: str) -> None:
    with unchanged(table):
        check_problem(post_raw(table, BAD_ACTION_BODIES[name]), 400)


@pytest.mark.parametrize("amount", [b'"1"', b"true", b"[1]"], ids=["string", "bool", "list"])
def test_number_of_the_wrong_json_type_is_400(table: Table, amount: bytes) -> None:
    assert table.act(0, {"type": "draw"}).status_code == 200
    assert table.act(0, {"type": "draw"}).status_code == 200
    assert table.act(0, {"type": "draw"}).json()["phase"] == "auction"  # W#: Bob bids first
    with unchanged(table):
        check_problem(post_raw(table, b'{"type": "bid", "amount": ' + amount + b"}", seat=1), 400)


def test_a_whole_number_written_as_a_float_is_that_integer(table: Table) -> None:
    """JSON Schema counts 1.0 as an integer (and so do contract tools): accepted as 1."""
    assert table.act(0, {"type": "draw"}).status_code == 200
    assert table.act(0, {"type": "draw"}).status_code == 200
    assert table.act(0, {"type": "draw"}).json()["phase"] == "auction"
    response = post_raw(table, b'{"type": "bid", "amount": 1.0}', seat=1)
    assert response.status_code == 200
    assert response.json()["auction"]["high_bid"] == 1
    check_problem(post_raw(table, b'{"type": "bid", "amount": 2.5}', seat=0), 400)


NESTED = b"[" * 2000 + b"]" * 2000  # 4 KB: well under the body limit


@pytest.mark.parametrize("route", ["actions", "create", "scores"])
def test_deeply_nested_json_is_400(table: Table, route: str) -> None:
    with unchanged(table):
        if route == "actions":
            response = post_raw(table, b'{"type": "buy", "card": "R1", "payment": ' + NESTED + b"}")
        elif route == "create":
            response = table.client.post(
                "/v1/games", content=b'{"players": ' + NESTED + b"}", headers=JSON
            )
        else:
            response = table.client.post(
                "/v1/scores", content=b'{"cards": ' + NESTED + b"}", headers=JSON
            )
        check_problem(response, 400)


def test_oversized_action_is_413(table: Table) -> None:
    body = b'{"type": "draw", "note": "' + b"x" * (BIG + 10) + b'"}'
    with unchanged(table):
        check_problem(post_raw(table, body), 413)


def test_oversized_chunked_action_is_413(table: Table) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"type": "draw", "note": "'
        for _ in range(20):
            yield b"x" * 8192
        yield b'"}'

    with unchanged(table):
        response = table.client.post(
            f"{table.path}/actions", content=chunks(), headers={**bearer(table.tokens[0]), **JSON}
        )
        check_problem(response, 413)


# ------------------------------------------------------------------ credentials


def test_missing_token_is_401_with_www_authenticate(table: Table) -> None:
    with unchanged(table):
        response = table.client.post(f"{table.path}/actions", json={"type": "draw"})
        check_problem(response, 401, "unauthorized")
        assert response.headers["www-authenticate"].lower().startswith("bearer")


MALFORMED_AUTH = {
    "basic": "Basic x",
    "bearer_alone": "Bearer",
    "garbage": "garbage",
    "bearer_garbage": "Bearer garbage",
    "bearer_dots": "Bearer ...",
    "bearer_no_secret": "Bearer {id}.0",
    "bearer_bad_seat": "Bearer {id}.x.secret",
    "bearer_big_seat": "Bearer {id}.12345678901234567890.secret",
    "bearer_negative_seat": "Bearer {id}.-1.secret",
    "bearer_huge_token": "Bearer {id}.0." + "a" * 4000,
}


@pytest.mark.parametrize("name", list(MALFORMED_AUTH))
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_malformed_authorization_is_401(table: Table, name: str, method: str) -> None:
    header = MALFORMED_AUTH[name].format(id=table.id)
    with unchanged(table):
        if method == "GET":
            response = table.client.get(table.path, headers={"Authorization": header})
        else:
            response = table.client.post(
                f"{table.path}/actions", json={"type": "draw"}, headers={"Authorization": header}
            )
        check_problem(response, 401, "unauthorized")
        assert response.headers["www-authenticate"].lower().startswith("bearer")


@pytest.mark.parametrize("name", ["bearer_garbage", "bearer_dots", "bearer_bad_seat"])
def test_malformed_authorization_is_401_on_every_games_route(
    client: httpx.Client, table: Table, name: str
) -> None:
    """Wherever a caller counts (create, a player's listing, read, act), and before the game
    or the body is looked at: an unknown game or an invalid body is 401 with it too. (A
    create or listing with garbage credentials went through on an open service; a defect.)"""
    header = {"Authorization": MALFORMED_AUTH[name].format(id=table.id)}
    with unchanged(table):
        for response in (
            client.post("/v1/games", json={"players": [{"name": "Ann"}]}, headers=header),
            client.post("/v1/games", json={"players": []}, headers=header),
            client.get("/v1/games", params={"player_id": "p-ann"}, headers=header),
            client.get(f"/v1/games/{UNKNOWN_GAME}", headers=header),
            client.post(f"/v1/games/{UNKNOWN_GAME}/actions", json={"type": "draw"}, headers=header),
            client.post(f"{table.path}/actions", json={"type": "no such"}, headers=header),
        ):
            check_problem(response, 401, "unauthorized")
            assert response.headers["www-authenticate"].lower().startswith("bearer")


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_wrong_token_for_this_game_is_401(table: Table, method: str) -> None:
    token = table.tokens[0]
    wrong = [
        token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"),  # wrong secret
        token.replace(f"{table.id}.0.", f"{table.id}.1.", 1),  # seat 0's secret for seat 1
        f"{table.id}.4.{token.rsplit('.', 1)[1]}",  # a seat the game does not have
    ]
    with unchanged(table):
        for candidate in wrong:
            if method == "GET":
                response = table.client.get(table.path, headers=bearer(candidate))
            else:
                response = table.client.post(
                    f"{table.path}/actions", json={"type": "draw"}, headers=bearer(candidate)
                )
            check_problem(response, 401, "unauthorized")


def test_bot_seat_has_no_token(client: httpx.Client) -> None:
    table = Table.create(
        client, [{"name": "Ann"}, {"name": "Bot", "bot": "basic"}], deck=["R1", "R2", "R3"]
    )
    secret = table.tokens[0].rsplit(".", 1)[1]
    with unchanged(table):
        response = client.post(
            f"{table.path}/actions",
            json={"type": "draw"},
            headers=bearer(f"{table.id}.1.{secret}"),
        )
        check_problem(response, 401, "unauthorized")


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_token_of_another_game_is_403(client: httpx.Client, table: Table, method: str) -> None:
    other = Table.create(client, [{"name": "Eve"}])
    with unchanged(table), unchanged(other):
        headers = bearer(other.tokens[0])
        if method == "GET":
            response = client.get(table.path, headers=headers)
        else:
            response = client.post(f"{table.path}/actions", json={"type": "draw"}, headers=headers)
        check_problem(response, 403, "forbidden")


def test_unknown_game_is_404(client: httpx.Client, table: Table) -> None:
    with unchanged(table):
        for game_id in (UNKNOWN_GAME, "nothex", "0" * 64):
            unknown_game_checks(client, table, game_id)


def unknown_game_checks(client: httpx.Client, table: Table, game_id: str) -> None:
    path = f"/v1/games/{game_id}"
    check_problem(client.get(path), 404, "game_not_found")
    check_problem(client.get(f"{path}/events"), 404, "game_not_found")
    check_problem(client.get(f"{path}/events/stream"), 404, "game_not_found")
    response = client.post(
        f"{path}/actions", json={"type": "draw"}, headers=bearer(table.tokens[0])
    )
    check_problem(response, 404, "game_not_found")


# ------------------------------------------------------------------ the rules say no


def test_out_of_turn_is_409(table: Table) -> None:
    with unchanged(table):
        check_problem(table.act(1, {"type": "draw"}), 409, "not_your_turn")


def test_rule_refusals_are_409(table: Table) -> None:
    """The deck R1 R3 W# R1 B5 ... reaches each refusal in a few moves."""
    with unchanged(table):
        check_problem(table.act(0, {"type": "stop", "take": "numbers"}), 409, "must_draw")
        check_problem(table.act(0, {"type": "pass"}), 409, "illegal_action")
        check_problem(table.act(0, {"type": "bid", "amount": 1}), 409, "illegal_action")
        check_problem(table.act(0, {"type": "decline"}), 409, "illegal_action")
        check_problem(table.act(0, {"type": "buy", "card": "R1"}), 409, "illegal_action")
    assert table.act(0, {"type": "draw"}).status_code == 200  # R1
    assert table.act(0, {"type": "draw"}).status_code == 200  # R3
    auction = table.act(0, {"type": "draw"}).json()  # W#: Bob bids first, then Ann
    assert auction["phase"] == "auction"
    assert auction["to_act"] == 1
    assert table.act(1, {"type": "bid", "amount": 3}).status_code == 200
    with unchanged(table):
        check_problem(table.act(0, {"type": "bid", "amount": 3}), 409, "bid_too_low")
        check_problem(table.act(0, {"type": "bid", "amount": 2}), 409, "bid_too_low")
        check_problem(table.act(0, {"type": "bid", "amount": 6}), 409, "bid_too_high")
        check_problem(
            table.act(0, {"type": "bid", "amount": 4, "payment": {"currency": 1}}),
            409,
            "insufficient_payment",
        )
        check_problem(
            table.act(0, {"type": "bid", "amount": 4, "payment": {"currency": 1, "bust": 1}}),
            409,
            "payment_not_held",
        )
        check_problem(table.act(0, {"type": "draw"}), 409, "illegal_action")
        check_problem(table.act(0, {"type": "decline"}), 409, "illegal_action")
        check_problem(table.act(1, {"type": "pass"}), 409, "not_your_turn")
    assert table.act(0, {"type": "pass"}).status_code == 200  # Bob wins W# for 3
    stop = table.act(0, {"type": "stop", "take": "currency"}).json()  # R1 R3 to the market
    assert stop["market"] == ["R1", "R3"]
    assert stop["to_act"] == 1
    assert table.act(1, {"type": "draw"}).json()["tableau"] == ["R1"]
    buy = table.act(1, {"type": "stop", "take": "numbers"}).json()
    assert buy["phase"] == "buy"
    assert buy["players"][1]["cards"] == ["W#", "R1"]
    assert buy["players"][1]["currency"] == 2
    with unchanged(table):
        check_problem(table.act(1, {"type": "buy", "card": "R1"}), 409, "duplicate_card")
        check_problem(table.act(1, {"type": "buy", "card": "R9"}), 409, "card_not_in_market")
        check_problem(
            table.act(1, {"type": "buy", "card": "R3", "payment": {"currency": 1}}),
            409,
            "insufficient_payment",
        )
        check_problem(
            table.act(
                1, {"type": "buy", "card": "R3", "payment": {"currency": 2, "cards": ["R1", "W#"]}}
            ),
            409,
            "payment_not_minimal",
        )
        check_problem(
            table.act(1, {"type": "buy", "card": "R3", "payment": {"cards": ["B1", "W#", "R1"]}}),
            409,
            "payment_not_held",
        )
        check_problem(table.act(1, {"type": "pass"}), 409, "illegal_action")
        check_problem(table.act(1, {"type": "draw"}), 409, "illegal_action")
        check_problem(table.act(0, {"type": "decline"}), 409, "not_your_turn")
    assert table.act(1, {"type": "decline"}).status_code == 200


def test_actions_on_a_finished_game_are_409(client: httpx.Client) -> None:
    table = Table.create(client, [{"name": "Ann"}], deck=["R1"])
    assert table.act(0, {"type": "draw"}).status_code == 200
    assert table.act(0, {"type": "stop", "take": "currency"}).status_code == 200
    assert table.act(0, {"type": "decline"}).json()["status"] == "finished"
    with unchanged(table):
        check_problem(table.act(0, {"type": "draw"}), 409, "game_finished")
        check_problem(table.act(0, {"type": "decline"}), 409, "game_finished")


# ------------------------------------------------------------------ If-Match


def test_stale_if_match_is_412(table: Table) -> None:
    assert table.act(0, {"type": "draw"}, headers={"If-Match": '"0"'}).status_code == 200
    with unchanged(table):
        for stale in ('"0"', '"2"', '"999"', "0"):
            response = table.act(0, {"type": "draw"}, headers={"If-Match": stale})
            check_problem(response, 412, "version_mismatch")
    assert table.act(0, {"type": "draw"}, headers={"If-Match": '"1"'}).status_code == 200
    assert table.act(0, {"type": "draw"}, headers={"If-Match": "*"}).status_code == 200


@pytest.mark.parametrize(
    "value", ["abc", '"abc"', "**", '"-1"', '"1.5"', '"' + "9" * 30 + '"', "1" * 100, '"1", "2"']
)
def test_malformed_if_match_is_400(table: Table, value: str) -> None:
    with unchanged(table):
        check_problem(table.act(0, {"type": "draw"}, headers={"If-Match": value}), 400)


# ------------------------------------------------------------------ Idempotency-Key


@pytest.mark.parametrize("value", ["", "k" * 201])
def test_idempotency_key_out_of_bounds_is_400(table: Table, value: str) -> None:
    """1 to 200 characters, as the OpenAPI document declares (the handler checks it itself)."""
    with unchanged(table):
        response = table.act(0, {"type": "draw"}, headers={"Idempotency-Key": value})
        check_problem(response, 400, "invalid_request")


def test_idempotency_key_of_200_characters_is_taken(table: Table) -> None:
    first = table.act(0, {"type": "draw"}, headers={"Idempotency-Key": "k" * 200})
    assert first.status_code == 200, first.text
    again = table.act(0, {"type": "draw"}, headers={"Idempotency-Key": "k" * 200})
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.content == first.content


# ------------------------------------------------------------------ creating a game

BAD_CREATES: dict[str, bytes] = {
    "malformed_json": b'{"players": [',
    "empty_body": b"",
    "array": b"[]",
    "string": b'"x"',
    "null": b"null",
    "no_players": b"{}",
    "players_empty": b'{"players": []}',
    "six_players": b'{"players": [' + b",".join([b'{"name": "p"}'] * 6) + b"]}",
    "players_not_a_list": b'{"players": "Ann"}',
    "player_not_an_object": b'{"players": ["Ann"]}',
    "name_missing": b'{"players": [{}]}',
    "name_empty": b'{"players": [{"name": ""}]}',
    "name_number": b'{"players": [{"name": 5}]}',
    "name_too_long": b'{"players": [{"name": "' + b"n" * 41 + b'"}]}',
    "unknown_bot": b'{"players": [{"name": "A", "bot": "god"}]}',
    "unknown_field": b'{"players": [{"name": "A"}], "seed": "1234"}',
    "unknown_player_field": b'{"players": [{"name": "A", "token": "x"}]}',
    "unknown_rule": b'{"players": [{"name": "A"}], "rules": {"wild_bonus": 2}}',
    "rule_out_of_range": b'{"players": [{"name": "A"}], "rules": {"perfect_bonus": 1000}}',
    "starting_seat_out_of_range": b'{"players": [{"name": "A"}, {"name": "B"}], "starting_seat": 2}',
    "starting_seat_5": b'{"players": [{"name": "A"}], "starting_seat": 5}',
    "starting_seat_negative": b'{"players": [{"name": "A"}], "starting_seat": -1}',
    "starting_seat_huge": b'{"players": [{"name": "A"}], "starting_seat": 100000000000000000000}',
    "starting_seat_bool": b'{"players": [{"name": "A"}], "starting_seat": true}',
    "deck_empty": b'{"players": [{"name": "A"}], "deck": []}',
    "deck_not_a_list": b'{"players": [{"name": "A"}], "deck": "R1"}',
    "deck_unknown_card": b'{"players": [{"name": "A"}], "deck": ["R1", "Q7"]}',
    "deck_lowercase_card": b'{"players": [{"name": "A"}], "deck": ["r1"]}',
    "deck_card_number": b'{"players": [{"name": "A"}], "deck": [11]}',
    # the whole game's 129 cards and one more: longer than any valid deck
    "deck_too_long": json.dumps(
        {"players": [{"name": "A"}], "deck": [*deck_for(5), "R1"]}
    ).encode(),
    "deck_too_many_copies": b'{"players": [{"name": "A"}], "deck": ["R1", "R1", "R1", "R1"]}',
}


@pytest.mark.parametrize("name", list(BAD_CREATES))
def test_bad_create_is_400(client: httpx.Client, name: str) -> None:
    check_problem(client.post("/v1/games", content=BAD_CREATES[name], headers=JSON), 400)


@pytest.mark.parametrize(
    "body",
    [
        b'{"players": [{"name": "A"}], "starting_seat": "0"}',
        b'{"players": [{"name": "A"}], "rules": {"perfect_bonus": "2"}}',
    ],
    ids=["starting_seat_string", "perfect_bonus_string"],
)
def test_create_with_numbers_as_strings_is_400(client: httpx.Client, body: bytes) -> None:
    check_problem(client.post("/v1/games", content=body, headers=JSON), 400)


def test_deck_of_the_whole_game_is_accepted(client: httpx.Client) -> None:
    """The longest deck allowed: every card of the 129-card game, as often as it has it."""
    deck = deck_for(5)
    assert len(deck) == 129
    created = client.post("/v1/games", json={"players": [{"name": "A"}], "deck": deck})
    assert created.status_code == 201, created.text[:500]
    too_long = client.post("/v1/games", json={"players": [{"name": "A"}], "deck": [*deck, "R1"]})
    assert "129" in check_problem(too_long, 400)["detail"]


def test_deck_refused_when_not_allowed(
    request: pytest.FixtureRequest, start_server, server_kind: str
) -> None:
    """A service may refuse `deck` unless configured to allow it (api.md)."""
    env = {"TEN_ALLOW_CUSTOM_DECK": "false"}
    if server_kind == "redis":
        env["TEN_REDIS_URL"] = request.getfixturevalue("redis_url")
    with start_server(**env) as base, httpx.Client(base_url=base, timeout=10) as client:
        refused = client.post("/v1/games", json={"players": [{"name": "A"}], "deck": ["R1"]})
        check_problem(refused, 400, "custom_deck_not_allowed")
        assert client.post("/v1/games", json={"players": [{"name": "A"}]}).status_code == 201


def test_oversized_create_is_413(client: httpx.Client) -> None:
    body = b'{"players": [{"name": "A"}], "deck": [' + b",".join([b'"R1"'] * 20000) + b"]}"
    assert len(body) > BIG
    check_problem(client.post("/v1/games", content=body, headers=JSON), 413)


# ------------------------------------------------------------------ other routes


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/nothing"),
        ("GET", "/v2/games"),
        ("POST", "/v1/games/{id}/undo"),
        ("GET", "/v1/games/{id}/events/stream/more"),
    ],
)
def test_unknown_route_is_404(table: Table, method: str, path: str) -> None:
    response = table.client.request(method, path.format(id=table.id))
    check_problem(response, 404)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/v1/games/{id}"),
        ("PUT", "/v1/games/{id}"),
        ("PATCH", "/v1/games/{id}"),
        ("GET", "/v1/games/{id}/actions"),
        ("PUT", "/v1/games"),
        ("POST", "/v1/games/{id}/events"),
        ("GET", "/v1/scores"),
        ("POST", "/v1/rules"),
    ],
)
def test_wrong_method_is_405(table: Table, method: str, path: str) -> None:
    with unchanged(table):
        response = table.client.request(method, path.format(id=table.id), json={"type": "draw"})
        check_problem(response, 405)


@pytest.mark.parametrize(
    "query",
    [
        {"after": "-1"},
        {"after": "x"},
        {"after": str(10**30)},
        {"limit": "0"},
        {"limit": "1001"},
        {"limit": "many"},
    ],
)
def test_bad_event_query_is_400(table: Table, query: dict[str, Any]) -> None:
    check_problem(table.client.get(f"{table.path}/events", params=query), 400)


def test_bad_score_request_is_400(client: httpx.Client) -> None:
    for body in (
        {"cards": ["R1", "$1"]},
        {"cards": ["Q1"]},
        {"cards": "R1"},
        {"cards": ["R1"], "extra": 1},
        {},
    ):
        check_problem(client.post("/v1/scores", json=body), 400)


@pytest.mark.parametrize("cards", [["W5", "W5"], ["W#", "R1", "W#"], ["R#", "R#", "R#"]])
def test_scoring_more_copies_of_a_card_than_the_game_has_is_400(
    client: httpx.Client, cards: list[str]
) -> None:
    body = check_problem(client.post("/v1/scores", json={"cards": cards}), 400, "too_many_copies")
    assert cards[0] in body["detail"]


# ------------------------------------------------------------------ paths under /static

STATIC_PATHS_NO_FILE_HAS = {
    "nul": "/static/app/%00",
    "nul in a name": "/static/app/js/main%00.js",
    "nul at the root": "/static/%00",
    "a name too long": "/static/app/" + "a" * 300,
    "a path too long": "/static/app/" + "/".join(["d" * 200] * 30),
    "below a file": "/static/app/index.html/x",
}


@pytest.mark.parametrize("path", STATIC_PATHS_NO_FILE_HAS.values(), ids=STATIC_PATHS_NO_FILE_HAS)
def test_a_static_path_no_file_can_have_is_not_found(client: httpx.Client, path: str) -> None:
    """A 404 problem, as for any missing file (a 500 with a traceback before); the files
    themselves are still served."""
    got = client.get(path)
    check_problem(got, 404, "not_found")
    served = client.get("/static/app/index.html")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("text/html")
