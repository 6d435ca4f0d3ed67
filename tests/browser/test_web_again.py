"""'Play again' on the results: a new game with the same seats (this player in seat 0, the
bots again with their levels and names), held by this browser and opened."""

from __future__ import annotations

import random

import httpx

from tests.browser.web import BROWSER_GROUP, App, hold_seat

pytestmark = BROWSER_GROUP

DECK = ["R1", "R2", "B1", "B2", "G1", "G2"]  # a short game


def test_play_again_opens_a_game_with_the_same_seats(app: App, api: httpx.Client) -> None:
    created = api.post(
        "/v1/games",
        json={
            "players": [{"name": "Ann"}, {"name": "Bot 2", "bot": "expert"}],
            "deck": DECK,
        },
    )
    assert created.status_code == 201, created.text
    game = created.json()
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    rng = random.Random("browser/again")
    view = app.synced(api)
    for _ in range(60):
        if view["status"] == "finished":
            break
        app.play_turn(api, rng, view)
        view = app.synced(api)
    assert view["status"] == "finished", view["status"]

    app.page.click("#play-again")
    app.wait_screen("table")
    again = app.game_id
    assert again != game["id"]
    new = app.view(api, again)
    assert [(p["name"], p["bot"]) for p in new["players"]] == [("Ann", None), ("Bot 2", "expert")]
    assert app.seat(again)["seat"] == 0
    assert new["status"] == "active"
