"""A whole game against three bots, played from the lobby by clicking what the page offers.

The bots' moves are shown all at once (the table's pace control, as a player may choose: the
pace itself is test_web_paced.py's). On every state the seat reaches, the page is first seen
catching up with the seat's view (the API's, read with the token this browser keeps in
localStorage["ten.seats"]; the table it folded from the events never unlike the API's), then
every `[data-action]` on the page is checked to be one of that view's `legal_actions` /
`seat_actions` and the turn's decisions offered are exactly the legal ones. A reload in the
middle of the game resumes the seat. The table and the results are screenshot at phone and
desktop sizes and checked with axe; the results show every seat with its rank.
"""

from __future__ import annotations

import random

import httpx

from tests.browser.axe import check_axe
from tests.browser.web import BROWSER_GROUP, App, canonical

pytestmark = BROWSER_GROUP

MAX_TURNS = 400  # a four-player game takes about 50 decisions of one seat


def test_a_game_against_three_bots_is_played_through_the_page(app: App, api: httpx.Client) -> None:
    rng = random.Random("browser/three-bots")
    app.goto("/", "lobby")
    game_id = app.create_table("Ann", ["basic", "basic", "basic"])
    assert app.screen() == "table"
    # the bots' moves all at once, as a player may choose (the pace itself: test_web_paced.py)
    app.choose_pace("instant")
    held = app.seat(game_id)
    assert held["seat"] == 0
    assert held["token"].startswith(f"{game_id}.")

    view = app.synced(api)
    assert [p["bot"] for p in view["players"]] == [None, "basic", "basic", "basic"]
    assert view["players"][0]["name"] == "Ann"
    app.screenshots("table")
    check_axe(app.page, "table")

    played: list[str] = []
    reloaded = False
    while view["status"] != "finished":
        assert len(played) < MAX_TURNS, "the game did not end"
        played.append(app.play_turn(api, rng, view)["type"])
        if len(played) == 6 and not reloaded:
            # a reload in the middle of the game: the same seat, its controls offered again
            app.reload("table")
            reloaded = True
            view = app.synced(api)
            assert app.seat(game_id) == held
            assert view["to_act"] == 0
            offered = {canonical(a) for a in app.offered()}
            assert {canonical(a) for a in view["legal_actions"]} <= offered
        view = app.synced(api)

    assert reloaded, f"the game ended after {len(played)} decisions, before the reload"
    assert {"draw"} <= set(played), played
    assert app.screen() == "results"
    results = app.page.query_selector_all("[data-testid=results] [data-testid=result]")
    shown = {int(r.get_attribute("data-seat")): int(r.get_attribute("data-rank")) for r in results}
    assert shown == {r["seat"]: r["rank"] for r in view["results"]}
    assert 1 in shown.values()
    # each colour's run with its wild cards marked
    wilds = [
        card
        for r in view["results"]
        for part in r["colors"].values()
        for card in part["run"]
        if card.startswith("W") or card.endswith("#")
    ]
    marked = app.page.query_selector_all("[data-testid=results] .card.wild-placed")
    assert len(marked) == len(wilds), (len(marked), wilds)
    assert app.offered() == [], "controls offered after the end"
    app.screenshots("results")
    check_axe(app.page, "results")
