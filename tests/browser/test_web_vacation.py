"""The lobby's vacation panel: a player starts a vacation in the page and the service has it
on; the allowance left, which the page counts down while the vacation is on, is what the
service says once it is ended from the page; a vacation the allowance ends (the service
closes it where the days off run out) is told as such, and no new one is offered; the
player signed in with a JWT is the one named; every text of the panel in the five
languages, with no serious accessibility violation."""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from collections.abc import Iterator

import httpx
import msgspec
import pytest
import redis

from infra.redis_push import RedisPlayerStore
from service.correspondence.records import Away, PlayerRecord
from service.correspondence.vacation import DAY, year_start
from tests.browser.axe import check_axe
from tests.browser.web import BROWSER_GROUP, TIMEOUT, App, PageErrors, wait_for
from tests.servers import run_server
from tests.support.api import bearer, check_serves_client
from tests.support.platform_server import PLATFORM, platform_server, player_token

pytestmark = BROWSER_GROUP

STATE = "[data-testid=vacation-state]"
LEFT = "[data-testid=vacation-left]"
OTHER_LANGUAGES = ("es", "gu", "hy", "id")
# what the allowance-spent test leaves of a one-day allowance when it writes the player's
# record: seconds the page counts down before the service ends the vacation
LAST_SECONDS = 15
ROUNDED = 0.0001 * DAY / 2  # how far off the service's days_left is (4 decimals of a day)


def vacation(api: httpx.Client, player: str, **headers: str) -> dict:
    answer = api.get(f"/v1/players/{player}/vacation", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


def shown(app: App) -> dict:
    """What the panel shows: on or not, since when, the allowance left (the service's
    `days_left`, the seconds counted from it) and its texts."""
    return app.page.evaluate(
        """([state, left]) => {
            const s = document.querySelector(state), l = document.querySelector(left);
            if (!s || !l) return null;
            return {on: s.dataset.on === "1", since: s.dataset.since || null,
                    state: s.textContent, days_left: Number(l.dataset.daysLeft),
                    seconds: Number(l.dataset.secondsLeft), left: l.textContent,
                    heading: document.querySelector("#vacation-heading").textContent}
        }""",
        [STATE, LEFT],
    )


def panel_on(app: App, on: bool, timeout: float = TIMEOUT) -> dict:
    return wait_for(
        lambda: (s := shown(app)) and s["on"] is on and s,
        f"the panel showing the vacation {'on' if on else 'off'}",
        timeout=timeout,
        page=app.page,
    )


def left_text(days_left: float) -> str:
    """The English text of the allowance left for the service's `days_left`."""
    seconds = round(days_left * DAY)
    days, rest = divmod(seconds, int(DAY))
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    time_ = f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
    return f"Left this year: {days} {'day' if days == 1 else 'days'} and {time_}"


@pytest.mark.parametrize("app_server", ["embedded", "redis"], indirect=True)
def test_a_player_starts_a_vacation_in_the_page_sees_the_allowance_counted_down_and_ends_it(
    app: App, api: httpx.Client
) -> None:
    app.goto("/", "lobby")
    player = app.storage("ten.player")  # an open service: this browser's player id
    assert player
    before = panel_on(app, False)
    served = vacation(api, player)
    assert (served["on"], served["since"]) == (False, None)
    assert before["days_left"] == served["days_left"] == served["allowance"]
    assert before["left"] == left_text(served["days_left"])
    assert before["state"] == "You are not on vacation."

    app.page.click("#vacation-start")
    started = panel_on(app, True)
    served = vacation(api, player)
    assert served["on"] is True
    assert started["since"] == served["since"]
    assert started["state"].startswith("You are on vacation since ")
    assert app.page.locator("#vacation-start").count() == 0
    check_axe(app.page, "lobby with a vacation on")
    # the page counts the allowance down while the vacation is on...
    wait_for(
        lambda: shown(app)["seconds"] < started["seconds"],
        "the allowance counted down",
        page=app.page,
    )
    # ...as the service does (its days_left, rounded, moves every few seconds)
    wait_for(
        lambda: vacation(api, player)["days_left"] < served["allowance"],
        "the service counting the vacation",
        page=app.page,
    )

    app.page.click("#vacation-end")
    ended = panel_on(app, False)
    served = vacation(api, player)
    assert (served["on"], served["since"]) == (False, None)
    assert ended["days_left"] == served["days_left"] < served["allowance"]
    assert ended["seconds"] == round(served["days_left"] * DAY)
    assert ended["left"] == left_text(served["days_left"])
    assert app.page.locator("#vacation-start").is_enabled()  # the rest of the year's left

    english = ended
    for lang in OTHER_LANGUAGES:
        app.set_language(lang)
        there = panel_on(app, False)
        assert there["days_left"] == served["days_left"], lang
        for text in ("heading", "state", "left"):
            assert there[text], (lang, text)
            assert there[text] != english[text], (lang, text)
        start = app.page.text_content("#vacation-start")
        assert start
        assert start != "Start my vacation", lang


@contextlib.contextmanager
def one_day_allowance(redis_url: str) -> Iterator[str]:
    """A service on Redis whose players have one day off a year (the test writes a player's
    record there, as the service keeps it)."""
    with run_server({"TEN_REDIS_URL": redis_url, "TEN_VACATION_DAYS": "1"}) as base:
        yield check_serves_client(base)


@contextlib.contextmanager
def opened(browser, base: str, kept: dict[str, str]) -> Iterator[App]:
    """A browser context on the service at `base` whose localStorage holds `kept` (as the
    client keeps its values: JSON) before the page runs, at the lobby; its page's uncaught
    errors fail the test."""
    errors = PageErrors()
    context = browser.new_context(base_url=base)
    context.set_default_timeout(TIMEOUT * 1000)
    try:
        page = context.new_page()
        errors.watch(page)
        entries = json.dumps(kept)
        page.add_init_script(
            f"for (const [k, v] of Object.entries({entries})) "
            "localStorage.setItem(k, JSON.stringify(v));"
        )
        app = App(page, base)
        app.goto("/", "lobby")
        yield app
    finally:
        context.close()
    errors.check()


def test_a_vacation_the_allowance_ends_is_told_as_spent_and_none_is_offered_again(
    browser, redis_url: str
) -> None:
    now = time.time()
    if now - year_start(now) < DAY + 60:
        pytest.skip("the first day of a year: no one-day allowance can be nearly spent yet")
    player = f"web-{secrets.token_hex(6)}"
    raw = redis.Redis.from_url(redis_url)
    key = RedisPlayerStore(raw).key(player)
    try:
        with one_day_allowance(redis_url) as base, httpx.Client(base_url=base, timeout=10) as api:
            # on vacation since a day ago but LAST_SECONDS: the allowance runs out then
            away = (Away(time.time() - DAY + LAST_SECONDS),)
            record = PlayerRecord(player_id=player, version=1, away=away)
            raw.hset(key, mapping={"v": 1, "d": msgspec.msgpack.encode(record)})
            served = vacation(api, player)
            assert served["on"] is True
            assert served["allowance"] == 1
            with opened(browser, base, {"ten.player": player}) as app:
                on = panel_on(app, True)
                assert on["since"] == served["since"]
                assert 0 < on["seconds"] <= LAST_SECONDS + ROUNDED
                assert app.page.locator("#vacation-end").is_visible()
                # the page's count runs out; it asks the service, which ended the vacation
                spent = panel_on(app, False, timeout=LAST_SECONDS + TIMEOUT)
                assert spent["state"] == "This year's days off are spent."
                assert spent["days_left"] == 0
                assert spent["left"] == left_text(0)
                assert app.page.locator("#vacation-start, #vacation-end").count() == 0
                served = vacation(api, player)
                assert (served["on"], served["days_left"]) == (False, 0)
                refused = api.put(f"/v1/players/{player}/vacation", json={"on": True})
                assert refused.status_code == 409
                assert refused.json()["code"] == "vacation_allowance_spent"
    finally:
        raw.delete(key)
        raw.close()


def test_with_identities_the_panel_names_the_signed_in_players_jwt_and_nobody_without_one(
    browser,
) -> None:
    player = f"vac-{secrets.token_hex(4)}"
    token = player_token(player)
    with platform_server() as base, httpx.Client(base_url=base, timeout=10) as api:
        with opened(browser, base, {}) as app:
            app.page.wait_for_selector("[data-testid=vacation-signin]")
            assert app.page.locator("#vacation-start, #vacation-end").count() == 0
        with opened(browser, base, {"ten.playerToken": token}) as app:
            panel_on(app, False)
            app.page.click("#vacation-start")
            started = panel_on(app, True)
            mine = vacation(api, player, **bearer(token))
            assert mine["on"] is True
            assert mine["since"] == started["since"]
            assert vacation(api, player, **PLATFORM)["on"] is True
            app.page.click("#vacation-end")
            panel_on(app, False)
            assert vacation(api, player, **bearer(token))["on"] is False
