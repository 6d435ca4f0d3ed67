"""The page brings a move's outcome into view: at the end of a game the results (at the top of
the page) are scrolled into the viewport and focused, even from the bottom of a phone-sized
page; after a move on a phone, the tableau (above the controls) is in the viewport."""

from __future__ import annotations

import httpx

from tests.browser.web import (
    BROWSER_GROUP,
    PHONE,
    App,
    deck_game,
    hold_seat,
    play_actions,
    wait_for,
)
from tests.support.api import README_DECK, README_GAME

pytestmark = BROWSER_GROUP

IN_VIEWPORT = """(selector) => {
    const box = document.querySelector(selector).getBoundingClientRect();
    return box.top > -1 && box.top < innerHeight && box.bottom > 0;  // -1: sub-pixel rounding
}"""


def phone_app(new_context) -> App:
    return new_context(viewport=PHONE)


def test_the_results_come_into_view_and_take_focus_at_the_end(
    new_context, api: httpx.Client
) -> None:
    app = phone_app(new_context)
    game = deck_game(api, ["Ann"], README_DECK)
    last = play_actions(api, game, README_GAME[:-1])
    assert last["legal_actions"] == [README_GAME[-1]], last["legal_actions"]
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("scrollY") > 0, "the page is not taller than the phone's screen"
    assert not page.evaluate(IN_VIEWPORT, "[data-testid=status]"), "the top is still in view"

    page.click("""[data-action='{"type":"decline"}']""")
    app.wait_screen("results")
    wait_for(lambda: page.evaluate(IN_VIEWPORT, "[data-testid=results]"), "the results in view")
    assert page.evaluate("document.activeElement.dataset.testid") == "results"


def test_after_a_move_on_a_phone_the_tableau_is_in_view(new_context, api: httpx.Client) -> None:
    app = phone_app(new_context)
    game = deck_game(api, ["Ann"], ["R1", "R2", "R3", "R4"])
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page
    draw = """[data-action='{"type":"draw"}']"""
    page.eval_on_selector(draw, "b => b.scrollIntoView({ block: 'start' })")
    assert not page.evaluate(IN_VIEWPORT, "[data-testid=tableau]"), "the tableau is in view already"

    page.click(draw)
    page.locator("[data-testid=tableau] [data-card=R1]").wait_for()
    wait_for(lambda: page.evaluate(IN_VIEWPORT, "[data-testid=tableau]"), "the tableau in view")
