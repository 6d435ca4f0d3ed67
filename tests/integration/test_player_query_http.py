"""A `player_id` named in a query (a player's games, push subscriptions) is held to the same
pattern and length as everywhere else: a bad one is 400 problem+json, and a good one is
answered."""

from __future__ import annotations

from pathlib import Path

import pytest
from litestar.testing import TestClient

from service.core.settings import ArchiveSettings, ObservabilitySettings, Settings
from service.entrypoints.api.app import create_app

BAD = ["\x00bad", "a" * 500, "ann bob", "ann\n", ""]
CALLS = [
    ("GET", "/v1/games"),
    ("GET", "/v1/push/subscriptions"),
    ("DELETE", "/v1/push/subscriptions/abc"),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("q")
    settings = Settings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp}/archive.sqlite3", migrate_on_start=True
        ),
        observability=ObservabilitySettings(metrics=False),
    )
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.mark.parametrize(("method", "path"), CALLS)
@pytest.mark.parametrize("player_id", BAD, ids=["nul", "500 chars", "space", "line feed", "empty"])
def test_a_bad_player_id_in_the_query_is_a_400_problem(client, method, path, player_id):
    answer = client.request(method, path, params={"player_id": player_id})
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize(("method", "path", "status"), [(*CALLS[0], 200), (*CALLS[1], 200)])
def test_a_good_player_id_in_the_query_is_answered(client, method, path, status):
    answer = client.request(method, path, params={"player_id": "ann.b-1@x:y_z"})
    assert answer.status_code == status, answer.text
