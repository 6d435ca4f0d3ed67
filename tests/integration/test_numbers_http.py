"""Every number a request carries, in a header, a path or a query, is ASCII digits within
its bounds, else 400 problem+json: never a 500 (`Last-Event-ID: ²` was one, on the game and
tournament streams: `str.isdigit` takes it, `int` does not) and never a number read from
another script (`١`, `１`) or with a sign or spaces (a path's `+1`). The numbers are found
in the OpenAPI document, so a new one is tried too. In process, the embedded store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.core.settings import ArchiveSettings, IdentitySettings, ObservabilitySettings, Settings
from service.entrypoints.api.app import create_app

API_KEY = "platform-key-0123456789abcdef"
PLATFORM = {"X-API-Key": API_KEY}
NOT_NUMBERS = [
    "²",  # str.isdigit takes it, int() refuses: the 500
    "³",
    "١",  # Arabic-Indic one: int() reads it
    "١٢",
    "１",  # fullwidth one
    "99999999999999999999",
    "1" * 100,
    "-1",
    "+1",
    " 1",
    "1_0",
    "0x1",
    "1.5",
    "1.0",  # read as a float, then 1: Litestar parses a query's or a path's number laxly
    "1e0",
    "1e3",
    "1E2",
    "-0",
    "",
    " ",
]
# the numbers a handler reads itself from a string header (the schema cannot say "number")
NUMERIC_HEADERS = {"Last-Event-ID", "If-Match"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tmp: Path = tmp_path_factory.mktemp("numbers")
    settings = Settings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp}/archive.sqlite3", migrate_on_start=True
        ),
        identity=IdentitySettings(api_keys=(API_KEY,)),
        observability=ObservabilitySettings(log_format="json"),
    )
    with TestClient(create_app(settings)) as served:
        yield served


def numbers(client: TestClient) -> list[tuple[str, str, str, str]]:
    """(method, path template, where, name) of every number of the API."""
    found = []
    for path, operations in client.app.openapi_schema.to_schema()["paths"].items():
        for method, operation in operations.items():
            for param in operation.get("parameters", []):
                schema = param.get("schema", {})
                types = {schema.get("type"), *(o.get("type") for o in schema.get("oneOf", []))}
                if "integer" in types or param["name"] in NUMERIC_HEADERS:
                    found.append((method, path, param["in"], param["name"]))
    return found


def test_the_numbers_are_found(client: TestClient) -> None:
    found = {(m, p, w, n) for m, p, w, n in numbers(client)}
    assert ("get", "/v1/games/{game_id}/events/stream", "header", "Last-Event-ID") in found
    assert (
        "get",
        "/v1/tournaments/{tournament_id}/events/stream",
        "header",
        "Last-Event-ID",
    ) in found
    assert ("post", "/v1/games/{game_id}/actions", "header", "If-Match") in found
    assert ("delete", "/v1/games/{game_id}/seats/{seat}", "path", "seat") in found
    assert ("get", "/v1/archive/games/{game_id}/replay", "query", "from_version") in found
    assert len(found) >= 20


def request(client: TestClient, method: str, path: str, where: str, name: str, value: str) -> Any:
    stream = path.endswith("/stream")  # of what has ended: a stream refused by mistake ends
    players = [{"bot": "random"}] * 2 if stream else [{"open": True}, {"bot": "random"}]
    table = client.post("/v1/games", json={"players": players}, headers=PLATFORM).json()
    tournament = client.post(
        "/v1/tournaments", json={"name": "N", "places": 4}, headers=PLATFORM
    ).json()
    if stream:
        client.post(f"/v1/tournaments/{tournament['id']}/stop", headers=PLATFORM)
    filled = {
        "game_id": table["id"],
        "tournament_id": tournament["id"],
        "player_id": "ann",
        "seat": "0",
    }
    if where == "path":
        filled[name] = value
    url = path.format(**filled)
    params = {name: value} if where == "query" else None
    headers = dict(PLATFORM)
    raw = value.encode("latin-1") if all(ord(c) < 256 for c in value) else value.encode()
    headers_bytes = {k.encode(): v.encode() for k, v in headers.items()}
    if where == "header":
        headers_bytes[name.encode()] = raw  # as a client sends it: the bytes, unchanged
    body = {"type": "draw"} if method == "post" and path.endswith("/actions") else None
    return client.request(method.upper(), url, params=params, headers=headers_bytes, json=body)


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_every_number_of_the_api_is_ascii_digits_within_bounds(
    client: TestClient, value: str
) -> None:
    wrong = []
    for method, path, where, name in numbers(client):
        if where == "path" and value.strip() == "":
            continue  # an empty path segment is another path
        if where == "header" and value.strip(" \t").isascii() and value.strip().isdigit():
            continue  # spaces around a header's value are no part of it (RFC 9110, 5.5)
        response = request(client, method, path, where, name, value)
        problem = response.headers["content-type"].startswith("application/problem+json")
        if not problem or response.status_code != 400:
            wrong.append((method, path, where, name, response.status_code, response.text[:200]))
        elif response.json()["code"] != "invalid_request":
            wrong.append((method, path, where, name, response.json()["code"]))
    assert not wrong, wrong
