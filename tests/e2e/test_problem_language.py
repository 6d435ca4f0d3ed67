"""Problem responses follow `Accept-Language` over real HTTP (issue 13): a rule error, a service
error, a 404 and a validation error come back in each of the five languages with the same
`status`, `code` and `type`, `Content-Language` set and `Vary: Accept-Language`; a header the
service cannot read is English, never an error (the `client` fixture fails on any 5xx)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from service.entrypoints.api.i18n import CATALOGS
from tests.support.api import Table, check_problem

UNKNOWN_GAME = "0123456789abcdef0123"
# what a browser of each language sends
HEADERS = {
    "en": "en-US,en;q=0.9",
    "id": "id-ID,id;q=0.9,en;q=0.5",
    "hy": "hy",
    "es": "es-MX,es;q=0.9,en;q=0.3",
    "gu": "gu-IN",
}
Send = Callable[[httpx.Client, dict[str, str]], httpx.Response]


def _table(client: httpx.Client) -> Table:
    return Table.create(client, [{"name": "Ann"}, {"name": "Bob"}], starting_seat=0)


def stop_before_drawing(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    """A rule error: `must_draw` (409)."""
    table = _table(client)
    return table.act(0, {"type": "stop", "take": "numbers"}, headers=headers)


def starting_seat_out_of_range(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    """A rule error with a parameter: `invalid_game` (400), "between 0 and {last}"."""
    body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "starting_seat": 4}
    return client.post("/v1/games", json=body, headers=headers)


def unknown_game(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    """A service error: `game_not_found` (404)."""
    return client.get(f"/v1/games/{UNKNOWN_GAME}", headers=headers)


def act_without_a_token(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    """A service error: `unauthorized` (401)."""
    table = _table(client)
    return client.post(f"{table.path}/actions", json={"type": "draw"}, headers=headers)


def unknown_path(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    """The router's 404: `not_found`."""
    return client.get("/v1/no-such-thing", headers=headers)


def wrong_type(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    """A validation error (400 `invalid_request`): msgspec's message, translated, and where."""
    return client.post("/v1/games", json={"players": "Ann"}, headers=headers)


CASES: dict[str, tuple[Send, int, str]] = {
    "rule_error": (stop_before_drawing, 409, "must_draw"),
    "rule_error_with_a_parameter": (starting_seat_out_of_range, 400, "invalid_game"),
    "service_error": (unknown_game, 404, "game_not_found"),
    "service_error_401": (act_without_a_token, 401, "unauthorized"),
    "not_found": (unknown_path, 404, "not_found"),
    "validation_error": (wrong_type, 400, "invalid_request"),
}


def _check(response: httpx.Response, status: int, code: str, language: str) -> dict[str, Any]:
    body = check_problem(response, status, code)
    assert response.headers.get("content-language") == language
    vary = [v.strip().lower() for v in response.headers.get("vary", "").split(",")]
    assert "accept-language" in vary, response.headers.get("vary")
    return body


@pytest.mark.parametrize("case", list(CASES))
def test_each_language(client: httpx.Client, case: str) -> None:
    send, status, code = CASES[case]
    english = _check(send(client, {"Accept-Language": HEADERS["en"]}), status, code, "en")
    assert english == _check(send(client, {}), status, code, "en")  # no header: English
    for language in ("id", "hy", "es", "gu"):
        body = _check(send(client, {"Accept-Language": HEADERS[language]}), status, code, language)
        assert body["type"] == english["type"]
        assert body.get("errors") == english.get("errors")  # the machine-readable part
        assert body["title"] == CATALOGS[language][english["title"]]
        assert body["detail"] != english["detail"], (language, body["detail"])


def test_the_words_are_the_catalogs(client: httpx.Client) -> None:
    english = check_problem(stop_before_drawing(client, {}), 409, "must_draw")
    assert english["detail"] == "The first action of every turn is a draw."
    spanish = check_problem(stop_before_drawing(client, {"Accept-Language": "es"}), 409)
    assert spanish["title"] == "Conflicto"
    assert spanish["detail"] == "La primera acción de cada turno es robar."
    seat = check_problem(starting_seat_out_of_range(client, {"Accept-Language": "id"}), 400)
    assert seat["detail"] == "starting_seat harus antara 0 dan 1."
    typed = check_problem(wrong_type(client, {"Accept-Language": "es"}), 400)
    assert typed["detail"] == "Se esperaba `array`, se recibió `str` (en players)"


@pytest.mark.parametrize(
    "value",
    [
        b"*;q=abc",
        b"es;q=2",
        b"\xff\xfe\x80garbage",  # obs-text (NUL, CR, LF are refused before the app)
        b"x" * 8000,
        b",".join([b"fr"] * 2000),
        b";;;===,,,",
        "\u0570\u0575".encode(),
    ],
    ids=["bad_q", "q_too_big", "binary", "long", "many_ranges", "punctuation", "utf8"],
)
def test_an_unreadable_header_is_english(client: httpx.Client, value: bytes) -> None:
    response = client.get(f"/v1/games/{UNKNOWN_GAME}", headers=[(b"Accept-Language", value)])
    body = _check(response, 404, "game_not_found", "en")
    assert body["detail"] == "No game with this id (it may have expired)."
