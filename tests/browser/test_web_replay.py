"""A replay opens on its first step (the game's start), with First and Previous disabled
there and Next and Last disabled on the last step."""

from __future__ import annotations

import secrets

import httpx

from tests.browser.web import BROWSER_GROUP, App, archived_game

pytestmark = BROWSER_GROUP

ENDS = ("#replay-first", "#replay-prev", "#replay-next", "#replay-last")


def disabled(app: App) -> list[bool]:
    return [app.page.is_disabled(selector) for selector in ENDS]


def test_a_replay_runs_from_step_0_with_its_ends_disabled(app: App, api: httpx.Client) -> None:
    game_id = archived_game(api, f"web-{secrets.token_hex(4)}")
    states = api.get(f"/v1/archive/games/{game_id}/replay", params={"limit": 500}).json()
    total = len(states["states"])
    assert total > 2, total
    app.goto(f"/replay/{game_id}", "replay")
    page = app.page
    step = "[data-testid=replay-step]"
    assert page.text_content(step) == f"Step 1 of {total}"
    assert page.input_value("#replay-slider") == "0"
    assert disabled(app) == [True, True, False, False]
    page.click("#replay-next")
    assert page.text_content(step) == f"Step 2 of {total}"
    assert disabled(app) == [False, False, False, False]
    page.click("#replay-last")
    assert page.text_content(step) == f"Step {total} of {total}"
    assert disabled(app) == [False, False, True, True]
    page.click("#replay-first")
    assert disabled(app) == [True, True, False, False]
