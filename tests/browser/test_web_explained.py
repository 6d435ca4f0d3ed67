"""The table explains itself: each stop button says what happens to the tableau (rules 3.2:
numbers: its number cards to the collection, the currency to every other player; currency:
the currency to the seat, its number cards to the market), and the meters say what "Numbers"
subtracts. The currency stop is then sent and does what its button said."""

from __future__ import annotations

import httpx

from tests.browser.web import BROWSER_GROUP, App, deck_game, hold_seat, wait_for

pytestmark = BROWSER_GROUP

DECK = ["R1", "B1", "$5", "R7", "B7", "G7"]


def stop_button(app: App, take: str):
    return app.page.locator(f"""[data-action='{{"type":"stop","take":"{take}"}}']""")


def test_stop_buttons_and_meters_say_what_happens(app: App, api: httpx.Client) -> None:
    game = deck_game(api, ["Ann", "Ben"], DECK)
    seat = game["to_act"]  # the service draws who starts
    token = game["seats"][seat]["token"]
    for _ in range(3):  # R1, B1, $5
        acted = api.post(
            f"/v1/games/{game['id']}/actions",
            json={"type": "draw"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert acted.status_code == 200, acted.text
    before = acted.json()
    assert before["tableau"] == ["R1", "B1", "$5"], before["tableau"]
    hold_seat(app, game, seat)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page

    assert stop_button(app, "numbers").text_content() == (
        "Stop: take 2 number cards into your collection; every other player gains 5 currency"
    )
    assert stop_button(app, "currency").text_content() == (
        "Stop: take 5 currency; your 2 number cards go to the market"
    )
    tableau = page.text_content("[data-testid=tableau]") or ""
    assert "Numbers: -3 of 11" in tableau, tableau
    assert page.text_content("[data-testid=meters-help]") == (
        "Numbers = the number cards (2) minus the currency cards (5). "
        "Either total reaching 11 is a bust."
    )

    stop_button(app, "currency").click()
    wait_for(lambda: app.view(api)["version"] > before["version"], "the stop applied")
    after = app.view(api)
    assert sorted(after["market"]) == ["B1", "R1"], after["market"]
    mine = after["players"][seat]
    assert mine["currency"] == before["players"][seat]["currency"] + 5
    assert mine["cards"] == [], mine
