"""The odds of the next card in the web client: on the seat's turn to draw (after a first
card), the page shows the service's exact figures for this version, and nothing else."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import httpx

from tests.browser.web import BROWSER_TIER, App, wait_for

pytestmark = BROWSER_TIER


def percent(p: float) -> float:
    """As the page shows it: Intl.NumberFormat rounds the double's exact value to one
    decimal, a half away from zero (6.25 -> 6.3, where Python's round() gives 6.2)."""
    return float(Decimal(100 * p).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def test_the_page_shows_the_services_odds_on_its_turn_to_draw(app: App, api: httpx.Client) -> None:
    app.goto("/", "lobby")
    app.create_table("Ann", ["basic", "basic", "basic"])
    for _ in range(200):
        view = app.synced(api)
        assert view["status"] == "active", "the game ended before a second draw of Ann's"
        mine = view["to_act"] == view["seat"]
        if mine and view["phase"] == "draw" and view["drawn"]:
            break
        if not mine:
            continue
        decisions = [a for a in view["legal_actions"] if a["type"] != "stop"]
        draw = [a for a in decisions if a["type"] == "draw"]
        app.act((draw or decisions or view["legal_actions"])[0])
    else:
        raise AssertionError("Ann never had a second draw to decide")
    odds = api.get(f"/v1/games/{app.game_id}/odds").json()
    assert odds["version"] == view["version"]
    assert odds["odds"]["seat"] == view["seat"]
    panel = app.page.locator("[data-testid=odds]")
    wait_for(panel.is_visible, "the odds panel")
    text = panel.inner_text()
    shown = [float(p) for p in re.findall(r"(\d+(?:\.\d)?)%", text)]
    expected = [percent(odds["odds"][k]) for k in ("wild",)] + [
        percent(odds["odds"]["bust"][k]) for k in ("total", "numbers", "currency")
    ]
    assert sorted(shown) == sorted(expected), (text, odds)
