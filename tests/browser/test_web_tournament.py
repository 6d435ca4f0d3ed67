"""The tournament page (`#/tournaments/<id>`) against the API, in English and in Spanish: a
duplicate Swiss tournament of bots created by the platform, a player who signs in with their
JWT and registers (withdraws, registers again) through the page, the page's "your table"
the API's, the player's games played from the page (each resigned at once: the seat's bot
plays it out; the results lead back to the tournament), and once it is over the standings and every round's tables, seats and
results the page shows are the API's, in the page's language; the list and the page are
free of serious axe violations."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.browser.axe import check_axe
from tests.browser.web import BROWSER_GROUP, PHONE, TIMEOUT, WIDER, App, wait_for
from tests.support.platform_server import PLATFORM, platform_server, player_token

pytestmark = BROWSER_GROUP

ROUNDS = 2
# what the page says in each language (its catalogue), to know it is the language shown
WORDS = {
    "en": {"place": "Place", "finished": "finished", "registered": "You are registered."},
    "es": {"place": "Puesto", "finished": "terminado", "registered": "Estás inscrito."},
}
DECIMAL = {"en": ".", "es": ","}
ISOLATES = re.compile("[\u2066-\u2069]")


@pytest.fixture
def app_server() -> Iterator[str]:
    """A service with a platform API key and players' JWTs (HS256): tournaments need both."""
    with platform_server() as base:
        yield base


def shown(number: float, lang: str, digits: int = 2) -> str:
    """A number as the page writes it: at most `digits` decimals, the language's sign."""
    text = f"{number:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{number:.0f}"
    return text.replace(".", DECIMAL[lang])


def text_of(app: App, selector: str) -> str:
    return ISOLATES.sub("", app.page.inner_text(selector)).strip()


def create_tournament(api: httpx.Client) -> dict[str, Any]:
    body = {
        "name": f"Cup {secrets.token_hex(3)}",
        "table_size": 4,
        "places": 8,
        "rounds": ROUNDS,
        "format": "swiss",
        "deal_mode": "duplicate",
        "bot_level": "random",
    }
    created = api.post("/v1/tournaments", json=body, headers=PLATFORM)
    assert created.status_code == 201, created.text
    return created.json()


def choose_language(app: App, lang: str) -> None:
    if lang != "en":
        app.page.select_option("#language", lang)
        app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")


def registered(api: httpx.Client, tid: str) -> list[str]:
    return api.get(f"/v1/tournaments/{tid}").json()["registered"]


def sign_in(app: App, tid: str, pid: str, lang: str) -> None:
    """English: the sign-in form (a text that is no JWT refused first); Spanish: the
    platform's hand-off link, whose token leaves the address at once."""
    page = app.page
    if lang == "en":
        page.fill("#player-token", "not a token")
        page.click("#sign-in-submit")
        page.wait_for_selector("[data-testid=entry-error]:not(:empty)")
        page.fill("#player-token", player_token(pid))
        page.click("#sign-in-submit")
    else:
        app.goto(f"/tournaments/{tid}?token={player_token(pid)}", "tournament")
        assert page.evaluate("location.hash") == f"#/tournaments/{tid}"
    page.wait_for_selector(f"[data-testid=signed-in-as][data-player-id='{pid}']")


def register_through_the_page(app: App, api: httpx.Client, tid: str, pid: str, lang: str) -> None:
    page = app.page
    sign_in(app, tid, pid, lang)
    page.click("#tour-register")
    page.wait_for_selector("[data-testid=registration][data-registered='1']")
    assert text_of(app, "[data-testid=registration]") == WORDS[lang]["registered"]
    assert registered(api, tid) == [pid]
    assert pid in page.inner_text("[data-testid=registered]")
    # the control pressed gave way to the one that undoes it: the focus went there
    assert page.evaluate("document.activeElement.id") == "tour-withdraw"
    page.click("#tour-withdraw")
    page.wait_for_selector("[data-testid=registration][data-registered='0']")
    assert registered(api, tid) == []
    page.click("#tour-register")
    page.wait_for_selector("[data-testid=registration][data-registered='1']")
    assert registered(api, tid) == [pid]


def play_my_round(app: App, api: httpx.Client, tid: str, pid: str, number: int) -> None:
    """Waits for the page's table of round `number` (the API's), follows its link and
    resigns there (the confirm accepted): the game's bot plays the seat out."""
    page = app.page
    app.goto(f"/tournaments/{tid}", "tournament")
    mine = wait_for(
        lambda: (
            (t := api.get(f"/v1/tournaments/{tid}/players/{pid}/table").json())["round"] == number
            and t
        ),
        f"round {number} paired",
    )
    link = page.wait_for_selector(f"[data-testid=your-table][data-game-id='{mine['game_id']}']")
    assert link.get_attribute("data-seat") == str(mine["seat"])
    assert str(mine["table"] + 1) in link.inner_text(), link.inner_text()
    page.click("#play-your-game")
    app.wait_screen("table", "results")
    assert app.game_id == mine["game_id"]
    if app.screen() == "table":
        page.click('[data-action*=\'"type":"resign"\']')
    wait_for(
        lambda: api.get(f"/v1/games/{mine['game_id']}").json()["status"] == "finished",
        f"round {number}'s game over",
    )
    app.wait_screen("results")  # a tournament's game leads back to it, not to a new table
    assert page.query_selector("#play-again") is None
    page.click("[data-testid=to-tournament]")
    app.wait_screen("tournament")
    assert page.evaluate("location.hash") == f"#/tournaments/{tid}"


def check_standings(app: App, api: httpx.Client, tid: str, lang: str) -> None:
    standings = api.get(f"/v1/tournaments/{tid}/standings").json()["standings"]
    rows = app.page.query_selector_all("[data-testid=standings] tbody tr")
    assert [r.get_attribute("data-entrant") for r in rows] == [s["entrant"] for s in standings]
    for row, want in zip(rows, standings, strict=True):
        cells = {
            c.get_attribute("data-col"): ISOLATES.sub("", c.inner_text()).strip()
            for c in row.query_selector_all("[data-col]")
        }
        assert cells["position"] == str(want["position"])
        assert cells["points"] == shown(want["points"], lang)
        assert cells["matchpoints"] == shown(want["matchpoints"], lang)  # duplicate mode
        assert cells["buchholz"] == shown(want["buchholz"], lang)
        assert cells["score"] == shown(want["score"], lang, 0)
        if want["entrant"].startswith("bot:"):
            assert cells["entrant"].startswith(f"Bot {want['entrant'][4:]}"), cells
        else:
            assert cells["entrant"].startswith(want["entrant"]), cells


def check_rounds(app: App, api: httpx.Client, tid: str, lang: str) -> None:
    rounds = api.get(f"/v1/tournaments/{tid}/rounds").json()["rounds"]
    assert [r["round"] for r in rounds] == list(range(1, ROUNDS + 1))
    page = app.page
    shown_tables = page.query_selector_all("[data-testid=round-table]")
    assert len(shown_tables) == sum(len(r["tables"]) for r in rounds)
    for played in rounds:
        for table in played["tables"]:
            where = f"[data-testid=round-table][data-round='{played['round']}'][data-table='{table['table']}']"
            el = page.query_selector(where)
            assert el is not None, where
            assert el.get_attribute("data-game-id") == table["game_id"]
            seats = el.query_selector_all("tbody tr")
            assert [s.get_attribute("data-entrant") for s in seats] == table["seats"]
            result = table["result"]
            for seat, row in enumerate(seats):
                cells = {
                    c.get_attribute("data-col"): c.inner_text().strip()
                    for c in row.query_selector_all("[data-col]")
                }
                assert cells["seat"] == str(seat + 1)
                assert cells["rank"] == str(result["ranks"][seat])
                assert cells["score"] == shown(result["scores"][seat], lang, 0)
                assert cells["points"] == shown(result["points"][seat], lang)
            replay = el.query_selector("[data-testid=table-replay]")
            assert replay is not None
            assert replay.get_attribute("href") == f"#/replay/{table['game_id']}"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_player_registers_plays_and_reads_the_standings_the_api_has(
    new_context: Callable[..., App], api: httpx.Client, lang: str
) -> None:
    app = new_context(reduced_motion="reduce")  # the bots' moves shown at once, not paced
    page = app.page
    page.on("dialog", lambda dialog: dialog.accept())  # the resign's confirm
    tour = create_tournament(api)
    tid, pid = tour["id"], f"p-{secrets.token_hex(4)}"

    app.goto("/tournaments", "tournaments")
    choose_language(app, lang)
    app.wait_screen("tournaments")
    page.wait_for_selector(f"[data-testid=tournament-item][data-tournament-id='{tid}']")
    check_axe(page, "tournaments")
    page.click(f"[data-tournament-id='{tid}'] a")
    app.wait_screen("tournament")
    assert text_of(app, "[data-testid=tournament-name]") == tour["name"]
    register_through_the_page(app, api, tid, pid, lang)
    check_axe(page, "tournament (registering)")

    started = api.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM)
    assert started.status_code == 200, started.text
    for number in range(1, ROUNDS + 1):
        play_my_round(app, api, tid, pid, number)

    final = wait_for(
        lambda: (b := api.get(f"/v1/tournaments/{tid}").json())["status"] == "finished" and b,
        "the tournament's end",
        timeout=TIMEOUT * 3,
    )
    app.goto(f"/tournaments/{tid}", "tournament")
    page.wait_for_selector("[data-testid=tournament-status][data-status=finished]")
    assert text_of(app, "[data-testid=tournament-status]") == WORDS[lang]["finished"]
    headers = page.eval_on_selector_all(
        "[data-testid=standings] thead th", "els => els.map(e => e.textContent)"
    )
    assert headers[0] == WORDS[lang]["place"], headers
    assert final["rounds_played"] == ROUNDS
    check_standings(app, api, tid, lang)
    check_rounds(app, api, tid, lang)
    assert page.query_selector(f"[data-testid=standings] tr[data-entrant='{pid}'] .badge")
    check_axe(page, "tournament (finished)")
    app.screenshots(f"tournament-{lang}")
    page.set_viewport_size(PHONE)  # nothing scrolls sideways but a wide table's own region
    wide = page.evaluate(WIDER)
    assert wide["width"] <= wide["viewport"] == PHONE["width"], wide


def test_a_player_who_organises_starts_pauses_resumes_and_stops_it_from_the_page(
    app: App, api: httpx.Client
) -> None:
    """A tournament a player created (their JWT): the page offers its organiser, and only
    them, the decisions its status allows; each is the API's status afterwards."""
    page = app.page
    page.on("dialog", lambda dialog: dialog.accept())  # the stop's confirm
    pid, other = f"p-{secrets.token_hex(4)}", f"p-{secrets.token_hex(4)}"
    body = {"name": "Club night", "table_size": 2, "places": 2, "rounds": 3, "bot_level": "random"}
    auth = {"Authorization": f"Bearer {player_token(pid)}"}
    created = api.post("/v1/tournaments", json=body, headers=auth)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    # an entrant who never plays (the default clock: minutes before a bot takes the seat):
    # round 1 stays in play until it is stopped
    entered = api.post(
        f"/v1/tournaments/{tid}/registrations",
        json={},
        headers={"Authorization": f"Bearer {player_token(other)}"},
    )
    assert entered.status_code == 200, entered.text

    app.goto(f"/tournaments/{tid}?token={player_token(other)}", "tournament")
    page.wait_for_selector(f"[data-testid=signed-in-as][data-player-id='{other}']")
    assert page.query_selector("[data-testid=organiser]") is None  # not theirs
    page.click("#sign-out")
    page.fill("#player-token", player_token(pid))
    page.click("#sign-in-submit")
    page.wait_for_selector("[data-testid=organiser]")
    check_axe(page, "tournament (its organiser)")

    def status() -> str:
        return api.get(f"/v1/tournaments/{tid}").json()["status"]

    for button, after in (("start", "running"), ("pause", "paused"), ("resume", "running")):
        page.click(f"#tour-{button}")
        page.wait_for_selector(f"[data-testid=tournament-status][data-status={after}]")
        assert status() == after
    page.click("#tour-stop")
    page.wait_for_selector("[data-testid=tournament-status][data-status=stopped]")
    assert status() == "stopped"
    assert page.query_selector("[data-testid=organiser]") is None  # nothing left to decide


# how the countdown begins in each language (its catalogue): to the start, to round 2
COUNTDOWN = {
    "en": ("Starts by itself in ", "Round 2 starts in "),
    "es": ("Empieza automáticamente dentro de ", "La ronda 2 empieza dentro de "),
}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_page_counts_down_to_the_start_by_itself_and_to_the_next_round(
    app: App, api: httpx.Client, lang: str
) -> None:
    """A tournament that starts itself a few seconds after it was created, with a minute
    between rounds: the page shows both settings and counts down to the start, then (with
    no reload) shows it running and counts down to round 2 (the API's `next_round_at`);
    stopped, the countdown goes."""
    page = app.page
    starts = datetime.now(UTC) + timedelta(seconds=4)
    body = {
        "name": f"On time {secrets.token_hex(3)}", "table_size": 2, "places": 2, "rounds": 2,
        "bot_level": "random", "starts_at": starts.isoformat(), "round_interval": 60,
    }  # fmt: skip
    created = api.post("/v1/tournaments", json=body, headers=PLATFORM)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    app.goto("/tournaments", "tournaments")
    choose_language(app, lang)
    app.goto(f"/tournaments/{tid}", "tournament")
    to_start = "[data-testid=tournament-countdown][data-waits=start]"
    page.wait_for_selector(to_start)
    assert text_of(app, to_start).startswith(COUNTDOWN[lang][0])
    assert "60" in text_of(app, "[data-setting=round_interval] td")
    assert str(starts.year) in text_of(app, "[data-setting=starts_at] td")
    check_axe(page, "tournament (counting down to its start)")
    to_round = "[data-testid=tournament-countdown][data-waits=round]"
    page.wait_for_selector(to_round)  # it started by itself, round 1 was played (bots)
    assert text_of(app, to_round).startswith(COUNTDOWN[lang][1])
    shown = api.get(f"/v1/tournaments/{tid}").json()
    assert (shown["status"], shown["rounds_played"]) == ("running", 1)
    assert shown["next_round_at"] is not None
    assert page.get_attribute("[data-testid=tournament-status]", "data-status") == "running"
    stopped = api.post(f"/v1/tournaments/{tid}/stop", headers=PLATFORM)
    assert stopped.status_code == 200, stopped.text
    page.wait_for_selector("[data-testid=tournament-status][data-status=stopped]")
    assert page.is_hidden("[data-testid=tournament-countdown]")
