"""Provably fair deals over HTTP, in process (the embedded store, a SQLite archive): a table
commits to its seed from its creation on; the creator's and a joiner's entropy go through
the text policy into the table's and then the game's `fairness` (and `game_started`'s); the
game is dealt from the seed and the entropy, which its finished view lets anyone check,
draw by draw, while no live view shows the seed."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from domain.game.cards import deck_for
from domain.game.fairness import SCHEME, commitment, deal_seed
from domain.game.rng import SeededRandom
from service.core.settings import ArchiveSettings, ObservabilitySettings, Settings
from service.entrypoints.api.app import create_app


def settings(tmp_path: Path) -> Settings:
    return Settings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3", migrate_on_start=True
        ),
        observability=ObservabilitySettings(log_format="json"),
    )


def refused(client: TestClient, players: list[dict[str, Any]], code: str) -> None:
    before = client.get("/v1/games").json()["games"]
    made = client.post("/v1/games", json={"players": players})
    assert made.status_code == 400, made.text
    assert made.headers["content-type"].startswith("application/problem+json")
    assert made.json()["code"] == code
    assert client.get("/v1/games").json()["games"] == before  # nothing created


def test_bad_entropy_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    with TestClient(create_app(settings(tmp_path))) as client:
        refused(client, [{"name": "Ann", "entropy": "x" * 65}, {"open": True}], "invalid_request")
        for bad in ("a\x00b", "\u202eevil", " ", "\u200b"):
            refused(client, [{"name": "Ann", "entropy": bad}, {"open": True}], "invalid_text")
        for seat in ({"bot": "basic", "entropy": "e"}, {"open": True, "entropy": "e"}):
            refused(client, [{"name": "Ann"}, seat], "invalid_table")
        table = client.post("/v1/games", json={"players": [{"name": "Ann"}, {"open": True}]})
        joined = client.post(f"/v1/games/{table.json()['id']}/seats", json={"entropy": "\x07"})
        assert joined.status_code == 400
        assert joined.json()["code"] == "invalid_text"
        assert client.get(f"/v1/games/{table.json()['id']}").json()["status"] == "open"


def play_to_the_end(client: TestClient, game: str, tokens: dict[int, str]) -> dict[str, Any]:
    """Both humans play random legal actions until the game is finished; no view of the
    live game shows its seed."""
    rng = random.Random("fair-deals")
    view = client.get(f"/v1/games/{game}").json()
    for _ in range(3000):
        if view["status"] == "finished":
            return view
        assert "seed" not in view["fairness"]
        token = tokens[view["to_act"]]
        headers = {"Authorization": f"Bearer {token}"}
        mine = client.get(f"/v1/games/{game}", headers=headers).json()
        assert "seed" not in mine["fairness"]
        action = rng.choice(mine["legal_actions"])
        acted = client.post(f"/v1/games/{game}/actions", json=action, headers=headers)
        assert acted.status_code == 200, acted.text
        view = acted.json()
    raise AssertionError("the game did not end")


def test_the_seats_entropy_deals_the_game_and_its_end_reveals_the_seed(tmp_path: Path) -> None:
    players = [{"name": "Ann", "entropy": " Ann's luck "}, {"open": True}, {"bot": "basic"}]
    with TestClient(create_app(settings(tmp_path))) as client:
        made = client.post("/v1/games", json={"players": players})
        assert made.status_code == 201, made.text
        table = made.json()
        fair = table["fairness"]
        assert fair["scheme"] == SCHEME
        assert fair["entropy"] == ["Ann's luck", "", ""]  # as the text policy keeps it
        assert "seed" not in fair
        game = table["id"]
        assert client.get(f"/v1/games/{game}").json()["fairness"] == fair
        joined = client.post(f"/v1/games/{game}/seats", json={"name": "Bob", "entropy": "b0b"})
        assert joined.status_code == 201, joined.text
        started = joined.json()["game"]
        assert started["fairness"]["commitment"] == fair["commitment"]  # committed before
        assert started["fairness"]["entropy"] == ["Ann's luck", "b0b", ""]
        assert started["fairness"]["start_drawn"] is True
        events = client.get(f"/v1/games/{game}/events").json()["events"]
        published = events[0]["fairness"]
        assert published == {
            "scheme": SCHEME, "commitment": fair["commitment"],
            "entropy": ["Ann's luck", "b0b", ""], "start_drawn": True,
        }  # fmt: skip
        tokens = {table["tokens"][0]["seat"]: table["tokens"][0]["token"]}
        tokens[joined.json()["seat"]] = joined.json()["token"]
        ended = play_to_the_end(client, game, tokens)
        seed = ended["fairness"]["seed"]
        assert client.get(f"/v1/games/{game}").json()["fairness"]["seed"] == seed
        assert commitment(seed) == fair["commitment"]
        rng = SeededRandom(deal_seed(seed, published["entropy"]))
        deck = rng.shuffled(deck_for(3))
        assert events[0]["starting_seat"] == rng.randbelow(3)
        log = client.get(f"/v1/games/{game}/events?limit=1000").json()["events"]
        drawn = [e["card"] for e in log if e["type"] == "card_drawn"]
        assert drawn == deck  # a finished game drew the whole pile, in the deal's order
        assert deck != SeededRandom(seed).shuffled(deck_for(3))  # the entropy counted
