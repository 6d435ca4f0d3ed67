"""Two browsers at one table: the host creates it from the lobby with one open seat, the other
player joins from the invite link, and each sees the other's moves arrive (event log, draw
pile, controls) without reloading. On Redis, like a real deployment. Also: a private table is
joined only with its invite code."""

from __future__ import annotations

import random
from collections.abc import Callable

import httpx
import pytest

from tests.browser.axe import check_axe
from tests.browser.web import BROWSER_GROUP, App, wait_for

pytestmark = BROWSER_GROUP

DECISIONS = 14  # enough for both seats to act several times, each seen by the other


@pytest.mark.parametrize("app_server", ["redis"], indirect=True)
def test_two_players_see_each_other_live(
    new_context: Callable[..., App], api: httpx.Client
) -> None:
    rng = random.Random("browser/live")
    ann, bob = new_context(), new_context()
    ann.goto("/", "lobby")
    game_id = ann.create_table("Ann", ["open"])
    assert ann.screen() == "waiting"
    link = ann.page.input_value("[data-testid=invite-link]")
    assert f"#/join/{game_id}" in link, link
    seats = ann.page.text_content("[data-testid=table-seats]") or ""
    assert "Ann" in seats, seats

    bob.page.goto(link)
    bob.wait_screen("waiting")
    bob.page.fill("#join-name", "Bob")
    bob.page.click("#join-submit")
    bob.wait_screen("table")
    assert bob.seat(game_id)["seat"] == 1
    ann.wait_screen("table")  # the host's waiting room sees the table start by itself
    players = {0: ann, 1: bob}
    for app in players.values():
        app.synced(api, game_id)
        app.mark_document()

    for _ in range(DECISIONS):
        view = api.get(f"/v1/games/{game_id}").json()
        if view["status"] != "active":
            break
        mover = players[view["to_act"]]
        (watcher,) = (app for seat, app in players.items() if seat != view["to_act"])
        before = watcher.log_texts()
        mover.play_turn(api, rng)
        # the other browser, untouched, shows the move: its log grows, its view catches up
        wait_for(
            lambda w=watcher, b=before: w.log_texts() != b, "the other page's event log growing"
        )
        for app in players.values():
            app.synced(api, game_id)
    for app in players.values():
        assert app.same_document(), "a page was reloaded"
    after = api.get(f"/v1/games/{game_id}/events").json()["events"]
    acted = {e["seat"] for e in after if e["type"] in ("card_drawn", "bid_placed", "bid_passed")}
    assert acted == {0, 1}, "both seats should have acted"


def test_a_private_table_is_joined_from_its_invite_link(
    new_context: Callable[..., App], api: httpx.Client
) -> None:
    ann, bob, eve = new_context(), new_context(), new_context()
    ann.goto("/", "lobby")
    game_id = ann.create_table("Ann", ["open", "basic"], private=True)
    assert ann.screen() == "waiting"
    link = ann.page.input_value("[data-testid=invite-link]")
    assert f"#/join/{game_id}?invite=" in link, link
    ann.screenshots("waiting")
    check_axe(ann.page, "waiting room")

    # not listed in the lobby, and without its code nobody gets a seat
    eve.goto("/", "lobby")
    assert not eve.page.query_selector(f'[data-testid=open-table][data-game-id="{game_id}"]')
    eve.goto(f"/join/{game_id}", "waiting")
    eve.page.fill("#join-name", "Eve")
    eve.page.click("#join-submit")
    eve.page.wait_for_selector("[role=alert]")
    assert game_id not in (eve.storage("ten.seats") or {})

    bob.page.goto(link)
    bob.wait_screen("waiting")
    bob.page.fill("#join-name", "Bob")
    bob.page.click("#join-submit")
    bob.wait_screen("table", "results")
    assert bob.seat(game_id)["seat"] == 1
    view = bob.view(api, game_id)
    assert [p["name"] for p in view["players"]][:2] == ["Ann", "Bob"]
    assert view["players"][2]["bot"] == "basic"
    ann.wait_screen("table", "results")
