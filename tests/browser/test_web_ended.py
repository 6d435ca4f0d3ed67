"""An ended game shows no clock: the results do not go on showing a seat's bank as if it
still ran (the last view of a clocked game still carries the clock's figures)."""

from __future__ import annotations

import httpx

from tests.browser.web import BROWSER_GROUP, App, hold_seat, play_actions
from tests.support.api import README_DECK, README_GAME

pytestmark = BROWSER_GROUP

BANK = {"type": "bank", "initial_seconds": 300, "increment_seconds": 10}


def test_a_clocked_game_at_its_end_shows_no_clock(app: App, api: httpx.Client) -> None:
    created = api.post(
        "/v1/games", json={"players": [{"name": "Ann"}], "deck": README_DECK, "clock": BANK}
    )
    assert created.status_code == 201, created.text
    game = created.json()
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    assert app.page.locator("[data-testid=clock]").count() == 1  # it ticks in play
    ended = play_actions(api, game, README_GAME)
    assert ended["status"] == "finished"
    assert ended["clock"], ended  # the view still carries the clock
    app.wait_screen("results")
    assert app.page.locator("[data-testid=results]").is_visible()
    assert app.page.locator("[data-testid=clock]").count() == 0
