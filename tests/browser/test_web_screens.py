"""Every screen that is not a live table: lobby, rules, leaderboard, archive, a replay and a
player's stats, each reached by its route, ready, and free of serious or critical axe
violations; the lobby is screenshot at phone and desktop sizes. (The waiting room, the table
and the results are checked where the tests reach them: test_web_live, test_web_game.)"""

from __future__ import annotations

import secrets

import httpx

from tests.browser.axe import check_axe
from tests.browser.web import BROWSER_GROUP, App, archived_game

pytestmark = BROWSER_GROUP


def test_every_other_screen_is_reached_and_accessible(app: App, api: httpx.Client) -> None:
    player_id = f"web-{secrets.token_hex(4)}"
    game_id = archived_game(api, player_id)

    app.goto("/", "lobby")
    app.screenshots("lobby")
    check_axe(app.page, "lobby")

    for nav, screen in (("rules", "rules"), ("leaderboard", "leaderboard"), ("archive", "archive")):
        app.page.click(f"a[data-nav={nav}]")
        app.wait_screen(screen)
        check_axe(app.page, screen)
    app.screenshots("archive")

    app.goto(f"/replay/{game_id}", "replay")
    assert "Ann" in app.page.inner_text("main")
    check_axe(app.page, "replay")

    # an open service ranks nothing: the stats of every finished game (the client's toggle)
    app.goto(f"/players/{player_id}", "stats")
    if app.page.is_checked("#ranked-only"):
        app.page.set_checked("#ranked-only", False)
    figures = app.page.wait_for_selector("table[data-testid=stats]").inner_text()
    stats = api.get(f"/v1/players/{player_id}/stats", params={"ranked": "all"}).json()
    assert stats["games"] == 1, stats
    assert str(stats["best_score"]) in figures, figures
    check_axe(app.page, "stats")


def test_the_create_form_shows_one_seat_choice_per_other_player(app: App) -> None:
    app.goto("/", "lobby")
    for players in (2, 5, 1, 3):
        app.page.select_option("#create-players", str(players))
        shown = [app.page.is_visible(f"#create-seat-{i}") for i in range(1, 5)]
        assert shown == [i < players for i in range(1, 5)], (players, shown)


def test_the_seat_choices_offer_every_bot_level_master_too(app: App) -> None:
    app.goto("/", "lobby")
    options = app.page.eval_on_selector_all(
        "#create-seat-1 option", "os => os.map(o => [o.value, o.textContent])"
    )
    assert dict(options) == {
        "basic": "Bot: basic",
        "expert": "Bot: expert",
        "master": "Bot: master",
        "open": "Open seat (a person joins)",
        "random": "Bot: random",
    }


FOCUS = """() => ({ id: document.activeElement.id, tag: document.activeElement.tagName,
    outline: getComputedStyle(document.activeElement).outlineStyle })"""


def test_a_new_screen_takes_the_focus_without_a_ring_around_the_page(app: App) -> None:
    """The main region is focused on a fresh load (Chromium counts that as :focus-visible):
    no outline frames the whole page; a control reached by keyboard still shows its ring."""
    app.goto("/", "lobby")
    assert app.page.evaluate(FOCUS) == {"id": "main", "tag": "MAIN", "outline": "none"}
    assert app.page.evaluate("document.activeElement.matches(':focus-visible')")
    app.page.keyboard.press("Tab")
    reached = app.page.evaluate(FOCUS)
    assert reached["tag"] in ("A", "INPUT", "SELECT", "BUTTON"), reached
    assert reached["outline"] == "solid", reached


def test_a_game_that_is_gone_says_so_and_leads_back_to_the_lobby(
    app: App, api: httpx.Client
) -> None:
    """An old invite or game link (the game expired, or never was) is no dead end: the page
    says what the service says, in the page's language, with a way back to the lobby."""
    for route, screen, path in (
        ("/join/nope-gone", "table", "/v1/games/nope-gone"),
        ("/replay/nope-gone", "replay", "/v1/archive/games/nope-gone"),
    ):
        for lang in ("en", "es"):
            gone = api.get(path, headers={"Accept-Language": lang})
            assert gone.status_code == 404, gone.text
            app.goto("/", "lobby")
            app.set_language(lang)
            app.goto(route, screen)
            assert app.page.text_content("[role=alert]") == gone.json()["detail"], lang
            app.page.click("[data-testid=to-lobby]")
            app.wait_screen("lobby")


def test_a_screen_left_before_its_reads_came_back_never_draws_over_the_next(app: App) -> None:
    """The leaderboard's read is held until the rules screen, opened meanwhile, is shown;
    then the leaderboard's reply comes: the page goes on showing the rules (each route draws
    into a root of its own, and a screen whose root left the page does not say it is ready)."""
    held: list = []

    def hold(route) -> None:  # a function: Playwright wraps no builtin (held.append)
        held.append(route)

    app.page.route("**/v1/leaderboard*", hold)
    app.goto("/", "lobby")
    app.page.click("a[data-nav=leaderboard]")
    for _ in range(200):  # until the route handler held the read
        if held:
            break
        app.page.wait_for_timeout(50)
    assert held, "the leaderboard's read was not held"
    assert app.page.evaluate("document.body.dataset.ready") == "0"
    app.page.click("a[data-nav=rules]")
    app.wait_screen("rules")
    rules = app.page.inner_text("main")
    with app.page.expect_response("**/v1/leaderboard*"):
        held[0].continue_()
    # the leaderboard's continuation runs once its reply is read: a few frames
    app.page.evaluate(
        "() => new Promise(r => { let n = 10; const f = () => --n ? requestAnimationFrame(f) : r(); f(); })"
    )
    assert app.screen() == "rules"
    assert app.page.inner_text("main") == rules
    assert not app.page.query_selector("main table")
