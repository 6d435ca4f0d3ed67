"""The waiting room follows the table on its event stream (no polling every 1.5 s): the host's
page sees the table start when the last open seat is taken; the host can cancel the table;
"Your games" in the lobby names each held game's players, their number and its status, and
opens an ended game's results (not "Resume")."""

from __future__ import annotations

import httpx

from tests.browser.web import BROWSER_GROUP, App, deck_game, hold_seat, play_actions, wait_for
from tests.support.api import README_DECK, README_GAME

pytestmark = BROWSER_GROUP

QUIET = 4.0  # seconds watched for the old poll's requests (every 1.5 s)


def game_reads(app: App, game_id: str) -> list[str]:
    """Records the page's reads of the game (its JSON, not its stream) from now on."""
    reads: list[str] = []
    path = f"/v1/games/{game_id}"
    app.page.on(
        "request",
        lambda r: reads.append(r.url) if r.url.split("?")[0].endswith(path) else None,
    )
    return reads


def test_the_waiting_room_sees_the_start_on_the_stream(app: App, api: httpx.Client) -> None:
    streams: list[str] = []
    app.page.on(
        "request",
        lambda r: streams.append(r.url) if "/events/stream" in r.url else None,
    )
    app.goto("/", "lobby")
    game_id = app.create_table("Ann", ["open"])
    assert app.screen() == "waiting"
    opened = f"/v1/games/{game_id}/events/stream"
    wait_for(lambda: any(opened in u for u in streams), "stream", page=app.page)
    reads = game_reads(app, game_id)
    # not a speed check: a window in which the old page polled twice, waited in the page so
    # that its requests reach `reads` (a sleep in Python would hand them over only after)
    app.page.wait_for_timeout(QUIET * 1000)
    assert len(reads) <= 1, reads  # at most the read when the stream opened

    joined = api.post(f"/v1/games/{game_id}/seats", json={"name": "Bob"})
    assert joined.status_code in (200, 201), joined.text
    app.wait_screen("table")
    assert app.view(api)["status"] == "active"


def test_the_host_cancels_the_table(app: App, api: httpx.Client) -> None:
    app.goto("/", "lobby")
    game_id = app.create_table("Ann", ["open", "basic"])
    app.page.on("dialog", lambda dialog: dialog.accept())
    app.page.click("#cancel-table")
    app.page.locator(".notice").wait_for()
    assert api.get(f"/v1/games/{game_id}").json()["status"] == "cancelled"
    assert app.page.locator("#start-now, #cancel-table").count() == 0


def test_your_games_name_players_and_status(app: App, api: httpx.Client) -> None:
    finished = deck_game(api, ["Ann"], README_DECK)
    play_actions(api, finished, README_GAME)
    hold_seat(app, finished)
    app.goto("/", "lobby")
    waiting = app.create_table("Ann", ["open"])
    app.goto("/", "lobby")
    playing = app.create_table("Ann", ["basic", "expert"])
    app.goto("/", "lobby")
    rows = {
        row.get_attribute("data-game-id"): row.text_content()
        for row in app.page.query_selector_all("[data-testid=my-games] li")
    }
    ann = "\u2068Ann\u2069"  # a player's name, bidi-isolated (a bot's default name is ours)
    assert rows[waiting] == f"Resume {ann} · 2 players · waiting for players", rows
    # "your turn" when the bots have played up to Ann's move, "in play" while they still move
    shown, _, status = rows[playing].rpartition(" · ")
    assert shown == f"Resume {ann}, Bot 2, Bot 3 · 3 players", rows
    assert status in {"your turn", "in play"}, rows
    assert rows[finished["id"]] == f"Results {ann} · 1 player · finished", rows  # not resumed
    app.page.click(f"[data-game-id='{finished['id']}'] a")
    app.wait_screen("results")
