"""Every name the web client shows is bidi-isolated (FSI ... PDI, the plain-text `<bdi>`):
a name written right to left, or one ending in digits, never reorders the text around it
(the event log's lines, the status line, a player's heading); the text policy of the API
has already refused the bidi controls that could unbalance it."""

from __future__ import annotations

import httpx

from tests.browser.web import BROWSER_GROUP, App, deck_game, hold_seat, wait_for

pytestmark = BROWSER_GROUP

FSI, PDI = "\u2068", "\u2069"
HEBREW = "\u05d0\u05d1\u05d2 12"  # right to left, then digits


def test_a_right_to_left_name_is_isolated_wherever_it_is_shown(app: App, api: httpx.Client) -> None:
    game = deck_game(api, ["Ann", HEBREW], ["R2", "R3", "R4", "B5", "B6"])
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page
    headings = wait_for(
        lambda: [h for h in page.locator("[data-testid=player] h3").all_text_contents() if h],
        "the players' headings",
    )
    isolated = FSI + HEBREW + PDI
    assert any(h.startswith(isolated) for h in headings), headings
    assert any(h.startswith(FSI + "Ann" + PDI) for h in headings), headings
    log = wait_for(
        lambda: page.locator("[data-testid=event-log] li").all_text_contents(),
        "the event log",
    )
    named = [line for line in log if HEBREW in line or "Ann" in line]
    assert named, log
    for line in named:  # every name in the log is wrapped, and every wrap closed
        assert line.count(FSI) == line.count(PDI) >= 1, line
        assert (isolated in line) or (FSI + "Ann" + PDI in line), line
