"""Provably fair deals over HTTP, in process (the embedded store, a SQLite archive): a table
commits to its seed from its creation on; create takes no entropy (it would be seen before
the commitment); the joiners' entropy goes through the text policy into the table's and
then the game's `fairness` (and `game_started`'s); the
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


def test_create_takes_no_entropy(tmp_path: Path) -> None:
    """Entropy given in the request that chooses the seed protects nothing: refused, with
    the way to give it (join), whatever its value and its seat; nothing created."""
    with TestClient(create_app(settings(tmp_path))) as client:
        seats: list[dict[str, Any]] = [
            {"name": "Ann", "entropy": "ann's"}, {"player_id": "ann", "entropy": "a"},
            {"bot": "basic", "entropy": "e"}, {"open": True, "entropy": "e"},
            {"name": "Ann", "entropy": "x" * 65}, {"name": "Ann", "entropy": "a\x00b"},
            {"name": "Ann", "entropy": 5}, {"name": "Ann", "entropy": None},
        ]  # fmt: skip
        for seat in seats:
            refused(client, [{"bot": "basic"}, seat], "invalid_table")
            made = client.post("/v1/games", json={"players": [{"bot": "basic"}, seat]})
            assert made.json()["detail"].startswith("Seat 1: entropy is given on join only")
            assert "player_id" in made.json()["detail"]


def test_bad_join_entropy_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    with TestClient(create_app(settings(tmp_path))) as client:
        table = client.post("/v1/games", json={"players": [{"name": "Ann"}, {"open": True}]})
        game = table.json()["id"]
        for bad, code in [("x" * 65, "invalid_request")] + [
            (b, "invalid_text") for b in ("a\x00b", "\u202eevil", " ", "\u200b", "\x07")
        ]:
            joined = client.post(f"/v1/games/{game}/seats", json={"entropy": bad})
            assert joined.status_code == 400
            assert joined.json()["code"] == code
        assert client.get(f"/v1/games/{game}").json()["status"] == "open"


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
    """Ann's seat is reserved on create, Bob's left open: each gives entropy on join, after
    the commitment was published."""
    players = [{"player_id": "ann"}, {"open": True}, {"bot": "basic"}]
    with TestClient(create_app(settings(tmp_path))) as client:
        made = client.post("/v1/games", json={"players": players})
        assert made.status_code == 201, made.text
        table = made.json()
        fair = table["fairness"]
        assert fair["scheme"] == SCHEME
        assert fair["entropy"] == ["", "", ""]
        assert "seed" not in fair
        game = table["id"]
        ann = client.post(
            f"/v1/games/{game}/seats",
            json={"player_id": "ann", "name": "Ann", "entropy": " Ann's luck "},
        )
        assert ann.status_code == 201, ann.text
        assert ann.json()["seat"] == 0
        fair = client.get(f"/v1/games/{game}").json()["fairness"]
        assert fair["commitment"] == table["fairness"]["commitment"]  # unchanged by the join
        assert fair["entropy"] == ["Ann's luck", "", ""]  # as the text policy keeps it
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
        tokens = {0: ann.json()["token"], joined.json()["seat"]: joined.json()["token"]}
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
