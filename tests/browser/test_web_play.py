"""The lobby's Play button: a matchmaking ticket, its wait (followed on the ticket's event
stream, kept in localStorage so that a page opened again resumes it, cancelled from the
page), and the game it was matched into opened at this browser's seat."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.browser.web import BROWSER_GROUP, App, hold_seat, wait_for

pytestmark = BROWSER_GROUP


def press_play(
    app: App, name: str, *, mode: str = "live", sizes: tuple[int, ...] = (2,), rated: bool = False
) -> None:
    page = app.page
    page.fill("#play-name", name)
    page.check(f"#play-mode-{mode}")
    for size in (2, 3, 4, 5):
        page.set_checked(f"#play-size-{size}", size in sizes)
    page.set_checked("#play-rated", rated)
    page.click("#play-submit")


def waiting_ticket(app: App) -> str:
    """The ticket's id the waiting view shows (and the one kept in localStorage)."""
    shown = app.page.wait_for_selector("[data-testid=play-waiting]")
    ticket_id = shown.get_attribute("data-ticket-id")
    assert ticket_id
    assert (app.storage("ten.ticket") or {}).get("id") == ticket_id
    return ticket_id


@pytest.fixture
def tickets(api: httpx.Client) -> Iterator[Callable[[App], None]]:
    """Cancels, after the test, the tickets the given pages still hold: a ticket left waiting on
    the shared service would be matched with another test's."""
    holders: list[App] = []
    yield holders.append
    for app in holders:
        held = app.storage("ten.ticket")
        if held:
            api.delete(
                f"/v1/matchmaking/tickets/{held['id']}",
                headers={"Authorization": f"Bearer {held['token']}"},
            )


@pytest.mark.parametrize("app_server", ["embedded", "redis"], indirect=True)
def test_two_players_press_play_and_sit_at_the_same_table(
    new_context: Callable[..., App], api: httpx.Client, tickets: Callable[[App], None]
) -> None:
    ann, bob = new_context(), new_context()
    for app, name in ((ann, "Ann"), (bob, "Bob")):
        tickets(app)
        app.goto("/", "lobby")
        press_play(app, name)
    for app in (ann, bob):
        app.wait_screen("table", "results")
    assert ann.game_id == bob.game_id
    game_id = ann.game_id
    seats = {app.seat(game_id)["seat"] for app in (ann, bob)}
    assert seats == {0, 1}
    for app in (ann, bob):
        held = app.seat(game_id)
        view = api.get(f"/v1/games/{game_id}", headers={"Authorization": f"Bearer {held['token']}"})
        assert view.status_code == 200, view.text
        assert view.json()["seat"] == held["seat"]
        assert app.storage("ten.ticket") is None  # the wait is over
    names = {p["name"] for p in api.get(f"/v1/games/{game_id}").json()["players"]}
    assert names == {"Ann", "Bob"}


@pytest.mark.parametrize("app_server", ["embedded", "redis"], indirect=True)
def test_a_page_opened_again_resumes_the_wait_and_cancels_it(
    app: App, api: httpx.Client, tickets: Callable[[App], None]
) -> None:
    tickets(app)
    app.goto("/", "lobby")
    press_play(app, "Cleo", mode="correspondence", sizes=(5,))
    ticket_id = waiting_ticket(app)
    waited = app.page.text_content("[data-testid=play-waited]") or ""
    assert waited.startswith("Waiting for "), waited
    app.reload("lobby")
    assert waiting_ticket(app) == ticket_id
    token = app.storage("ten.ticket")["token"]
    app.page.click("#play-cancel")
    app.page.wait_for_selector("#play-submit")
    assert "You stopped looking for a game." in (
        app.page.text_content("[data-testid=play-panel]") or ""
    )
    assert app.storage("ten.ticket") is None
    read = api.get(
        f"/v1/matchmaking/tickets/{ticket_id}", headers={"Authorization": f"Bearer {token}"}
    )
    assert read.status_code == 200, read.text
    assert read.json()["status"] == "cancelled"


def test_a_second_ticket_of_the_same_mode_is_refused_with_the_service_reason(
    app: App, api: httpx.Client
) -> None:
    app.goto("/", "lobby")
    player = app.storage("ten.player")
    first = api.post(
        "/v1/matchmaking/tickets",
        json={
            "mode": "correspondence",
            "sizes": [5],
            "rated": False,
            "name": "Dee",
            "player_id": player,
        },
    )
    assert first.status_code == 201, first.text
    try:
        press_play(app, "Dee", mode="correspondence", sizes=(5,))
        alert = app.page.locator("[data-testid=play-error]")
        message = wait_for(alert.text_content, "the refusal shown")
        assert message.strip(), message
        assert app.storage("ten.ticket") is None
        assert app.page.locator("#play-submit").is_visible()
    finally:
        token = first.json()["ticket_token"]
        api.delete(
            f"/v1/matchmaking/tickets/{first.json()['id']}",
            headers={"Authorization": f"Bearer {token}"},
        )


def test_the_game_waiting_on_your_move_comes_first_in_your_games(
    app: App, api: httpx.Client
) -> None:
    """The lobby's "Your games": a game whose seat to act is this browser's comes before the
    newer ones that wait on someone else."""
    mine = api.post("/v1/games", json={"players": [{"name": "Eve"}, {"name": "Fay"}]}).json()
    waiting_on_me = mine["id"]
    to_act = api.get(f"/v1/games/{waiting_on_me}").json()["to_act"]
    hold_seat(app, mine, seat=to_act)  # the seat whose move it is
    other = api.post("/v1/games", json={"players": [{"name": "Gil"}, {"name": "Hal"}]}).json()
    to_act_other = api.get(f"/v1/games/{other['id']}").json()["to_act"]
    hold_seat(app, other, seat=1 - to_act_other)  # newer, and not this browser's move
    app.goto("/", "lobby")
    rows = app.page.locator("[data-testid=my-games] li")
    wait_for(lambda: rows.count() == 2, "both games listed")
    assert rows.nth(0).get_attribute("data-game-id") == waiting_on_me
    assert rows.nth(0).get_attribute("data-your-turn") == "1"
    assert "your turn" in (rows.nth(0).text_content() or "")
    assert rows.nth(1).get_attribute("data-your-turn") == "0"


def test_a_rated_wait_shows_the_ratings_it_looks_among(
    app: App, api: httpx.Client, tickets: Callable[[App], None]
) -> None:
    tickets(app)
    app.goto("/", "lobby")
    press_play(app, "Ida", mode="correspondence", sizes=(5,), rated=True)
    ticket_id = waiting_ticket(app)
    token = app.storage("ten.ticket")["token"]
    read = api.get(
        f"/v1/matchmaking/tickets/{ticket_id}", headers={"Authorization": f"Bearer {token}"}
    )
    window = read.json()["window"]
    assert window is not None, read.json()
    shown = app.page.locator("[data-testid=play-window]")
    text = wait_for(shown.text_content, "the rating window shown")
    assert text.startswith("Looking among players rated "), text
    numbers = [float(n.replace(",", "")) for n in re.findall(r"[\d,.]+\d", text)]
    assert len(numbers) == 2, text
    assert numbers[0] <= read.json()["rating"] <= numbers[1], (text, read.json())


def test_a_match_made_while_the_page_was_closed_opens_the_game_when_it_opens_again(
    new_context: Callable[..., App], api: httpx.Client, tickets: Callable[[App], None]
) -> None:
    jon, kim = new_context(), new_context()
    for app in (jon, kim):
        tickets(app)
    jon.goto("/", "lobby")
    press_play(jon, "Jon", mode="correspondence", sizes=(2,))
    ticket_id = waiting_ticket(jon)
    held = jon.storage("ten.ticket")
    jon.page.goto("about:blank")  # the app closed: the ticket waits on the service
    kim.goto("/", "lobby")
    press_play(kim, "Kim", mode="correspondence", sizes=(2,))
    kim.wait_screen("table", "results")
    game_id = kim.game_id
    jon.goto("/", "table")  # the app opened again: the ticket, matched, opens its game
    assert jon.game_id == game_id
    assert {jon.seat(game_id)["seat"], kim.seat(game_id)["seat"]} == {0, 1}
    assert jon.storage("ten.ticket") is None
    token = jon.seat(game_id)["token"]
    view = api.get(f"/v1/games/{game_id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert view["seat"] == jon.seat(game_id)["seat"]
    ticket = api.get(
        f"/v1/matchmaking/tickets/{ticket_id}", headers={"Authorization": f"Bearer {held['token']}"}
    )
    assert (ticket.json()["status"], ticket.json()["game_id"]) == ("matched", game_id)
