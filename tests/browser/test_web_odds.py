"""The odds of the next card in the web client: on the seat's turn to draw (after a first
card), the page shows the service's exact figures for this version, and nothing else."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import httpx

from tests.browser.web import BROWSER_GROUP, App, deck_game, hold_seat, wait_for

pytestmark = BROWSER_GROUP


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


# CLDR's decimal sign of each language (Chromium's Intl has no Armenian: the client brings it)
DECIMAL = {"en": ".", "id": ",", "hy": ",", "es": ",", "gu": "."}


def test_the_odds_are_written_with_the_languages_decimal_sign(app: App, api: httpx.Client) -> None:
    game = deck_game(api, ["Ann"], ["R2", "R3", "W5"])  # one card in three a wild card
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    odds = api.get(f"/v1/games/{game['id']}/odds").json()["odds"]
    figures = [odds["wild"]] + [odds["bust"][k] for k in ("total", "numbers", "currency")]
    panel = app.page.locator("[data-testid=odds]")
    for lang, sign in DECIMAL.items():
        app.page.select_option("#language", lang)
        app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
        app.wait_screen("table")
        text = wait_for(lambda: panel.is_visible() and panel.inner_text(), f"odds in {lang}")
        for p in figures:
            shown = f"{percent(p):g}".replace(".", sign)
            assert f"{shown}%" in text, (lang, shown, text)
        assert any(percent(p) % 1 for p in figures), figures  # a decimal sign to see
