"""What the browser tests share: the app in one browser context, driven through the DOM
contract of the web client (data-testid, data-screen, data-action; see the README's web
client section), and checked against the service's own API.

Every wait is bounded (`TIMEOUT`); none of them is an assertion on speed.
"""

from __future__ import annotations

import json
import random
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.api import README_DECK, README_GAME, bearer
from tests.support.checkout import outside

# every browser module's xdist group, one for the tier (see conftest.py); the tier's marker
# comes from its folder (tests/support/tiers.py)
BROWSER_GROUP = pytest.mark.xdist_group("browser")
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = outside("screenshots")  # kept between runs, outside the checkout
SIZES = {"phone": {"width": 360, "height": 740}, "desktop": {"width": 1280, "height": 800}}
TIMEOUT = 20.0
SEAT_ACTIONS = frozenset({"resign", "reclaim"})  # sent whoever's turn it is
# how wide the page is, and the innermost elements past the screen's right edge
WIDER = """() => ({
    width: document.documentElement.scrollWidth,
    viewport: innerWidth,
    // the innermost elements that reach past the right edge (+1: sub-pixel rounding)
    past: [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
        .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > innerWidth + 1))
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}: ${(e.textContent || "").trim().slice(0, 50)}`),
})"""

GAME_ROUTE = re.compile(r"#/(?:game|join)/([0-9a-zA-Z_-]+)")


def canonical(action: Mapping[str, Any]) -> str:
    """One spelling per action, to compare the page's `data-action` with the API's."""
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


def wait_for(
    check: Callable[[], Any],
    what: str,
    timeout: float = TIMEOUT,
    step: float = 0.05,
    page: Any = None,
):
    """Polls `check` until it returns something truthy (returned); fails after `timeout`.

    A check that reads what a page's handlers (`page.on("request", ...)`) collected needs
    `page`: Playwright's sync API hands its events to their handlers only within its own
    calls, so a poll that sleeps in Python would never see a request made after the last one.
    With `page`, each pause is the page's own wait, in which the events come in."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s (last: {value!r})")
        if page is None:
            time.sleep(step)
        else:
            page.wait_for_timeout(step * 1000)


class PageErrors:
    """Uncaught JavaScript errors of the pages watched: reported at the end of the test."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def watch(self, page) -> None:
        page.on("pageerror", lambda exc: self.errors.append(f"{page.url}: {exc}"))

    def check(self) -> None:
        assert not self.errors, "uncaught errors in the page:\n" + "\n".join(self.errors)


class App:
    """The web client in one browser context (one player: its own localStorage)."""

    def __init__(self, page, base: str) -> None:
        self.page = page
        self.base = base

    # ------------------------------------------------------------ navigation

    def goto(self, route: str, screen: str | None = None) -> None:
        """Opens `#<route>` (a full load) and waits for `screen` to be ready."""
        self.page.goto(f"{self.base}/#{route}")
        if screen:
            self.wait_screen(screen)

    def wait_screen(self, *screens: str) -> str:
        """Waits until one of `screens` finished its first render; returns which."""
        selector = ", ".join(f'body[data-screen="{s}"][data-ready="1"]' for s in screens)
        self.page.wait_for_selector(selector, state="attached", timeout=TIMEOUT * 1000)
        return self.screen()

    def screen(self) -> str:
        return self.page.evaluate("document.body.dataset.screen || ''")

    def set_language(self, lang: str) -> None:
        """Switches the page's language and waits until the screen shown drew itself again
        in it (the switch redraws the page: a navigation started before that redraw ends
        could see the redraw land after it)."""
        shown = self.screen()
        self.page.select_option("#language", lang)
        self.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
        if shown:
            self.wait_screen(shown)

    def reload(self, screen: str | None = None) -> None:
        self.page.reload()
        if screen:
            self.wait_screen(screen)

    @property
    def game_id(self) -> str:
        match = GAME_ROUTE.search(self.page.url)
        assert match, f"not on a table's route: {self.page.url}"
        return match.group(1)

    # ------------------------------------------------------------ storage

    def storage(self, key: str) -> Any:
        raw = self.page.evaluate("(k) => localStorage.getItem(k)", key)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw  # a plain string

    def seat(self, game_id: str) -> dict[str, Any]:
        seats = self.storage("ten.seats") or {}
        assert game_id in seats, f"no seat of {game_id} in localStorage['ten.seats']: {seats}"
        return seats[game_id]

    # ------------------------------------------------------------ lobby

    def create_table(
        self,
        name: str,
        seats: Iterable[str],
        *,
        clock: str = "none",
        private: bool = False,
    ) -> str:
        """Fills the lobby's form: seat 0 is this player, `seats` the others (`open`,
        `basic`, `random`); returns the new game's id once its screen is ready."""
        seats = list(seats)
        page = self.page
        page.fill("#create-name", name)
        page.select_option("#create-players", str(len(seats) + 1))
        for i, kind in enumerate(seats, start=1):
            page.select_option(f"#create-seat-{i}", kind)
        page.select_option("#create-clock", clock)
        page.set_checked("#create-private", private)
        page.click("#create-submit")
        self.wait_screen("table", "waiting", "results")
        return self.game_id

    # ------------------------------------------------------------ the table

    def offered(self) -> list[dict[str, Any]]:
        """Every action a control on the page would send (`[data-action]`, anywhere)."""
        raw = self.page.eval_on_selector_all(
            "[data-action]", "els => els.map(e => e.getAttribute('data-action'))"
        )
        actions = []
        for text in raw:
            try:
                actions.append(json.loads(text))
            except (TypeError, ValueError) as exc:
                raise AssertionError(f"a data-action that is not JSON: {text!r}") from exc
        return actions

    def view(self, api: httpx.Client, game_id: str | None = None) -> dict[str, Any]:
        """The seat's view through the API, with the token this browser holds."""
        game_id = game_id or self.game_id
        token = self.seat(game_id)["token"]
        response = api.get(f"/v1/games/{game_id}", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text
        return response.json()

    def check_offered(self, view: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The page offers nothing the view does not allow; off turn, nothing but the seat's
        own actions (resign, reclaim). Returns the offered turn decisions."""
        allowed = {canonical(a) for a in (view.get("legal_actions") or [])}
        seat_actions = {canonical(a) for a in (view.get("seat_actions") or [])}
        offered = self.offered()
        illegal = [a for a in offered if canonical(a) not in allowed | seat_actions]
        assert not illegal, (
            f"controls for actions the view does not allow (version {view['version']}, "
            f"to_act {view['to_act']}, seat {view['seat']}): {illegal}"
        )
        decisions = [a for a in offered if a["type"] not in SEAT_ACTIONS]
        if view["to_act"] != view["seat"]:
            assert not decisions, f"controls offered off turn: {decisions}"
        return decisions

    def synced(self, api: httpx.Client, game_id: str | None = None) -> dict[str, Any]:
        """Waits until the page shows the seat's current view: the draw pile's count and the
        turn's decisions offered are the API's; checks what is offered; returns the view."""
        game_id = game_id or self.game_id
        state: dict[str, Any] = {}

        def caught_up() -> bool:
            view = self.view(api, game_id)
            state["view"] = view
            if view["status"] == "finished":
                return self.screen() == "results"
            if self.screen() != "table":
                return False
            pile = self.page.text_content("[data-testid=draw-pile]") or ""
            if str(view["draw_pile_size"]) not in re.findall(r"\d+", pile):
                return False
            want = {canonical(a) for a in (view.get("legal_actions") or [])}
            have = {canonical(a) for a in self.offered() if a["type"] not in SEAT_ACTIONS}
            return want == have

        try:
            wait_for(caught_up, "the page showing the seat's current view")
        except AssertionError:
            view = state.get("view", {})
            raise AssertionError(
                f"the page did not catch up with version {view.get('version')}: screen "
                f"{self.screen()!r}, pile {self.page.text_content('[data-testid=draw-pile]')!r} "
                f"(API {view.get('draw_pile_size')}), offered {self.offered()}, legal "
                f"{view.get('legal_actions')}"
            ) from None
        view = state["view"]
        if view["status"] != "finished":
            self.check_offered(view)
        assert self.fold_mismatches() == 0, "the table folded from the events was not the API's"
        return view

    def choose_pace(self, pace: str) -> None:
        """Chooses how the other seats' moves are shown, as a player would (the table's pace
        control: `normal`, `fast`, `instant`); the browser remembers it."""
        self.page.select_option("#pace", pace)
        assert self.storage("ten.pace") == pace

    def fold_mismatches(self) -> int:
        """How often the page found the table it folded from the events unlike the service's
        view of the same version (it then shows the service's: `data-fold-mismatches`)."""
        return int(self.page.evaluate("document.body.dataset.foldMismatches || '0'"))

    def shown_table(self) -> dict[str, Any]:
        """The table as the page shows it, in the terms of `api_table`."""
        return self.page.evaluate(SHOWN_TABLE)

    def record_steps(self) -> None:
        """From now on the page keeps each change of what it shows (the event log's length,
        the table's version) with its time (`performance.now()`, ms): `recorded_steps`."""
        self.page.evaluate(RECORD_STEPS)

    def recorded_steps(self) -> list[dict[str, Any]]:
        return self.page.evaluate("window.__tenSteps")

    def act(self, action: Mapping[str, Any]) -> None:
        """Sends `action` through the control that carries it (a bid: its option in the bid
        select, then the submit button; a buy: the card, then the confirmation). Controls
        are found by locators, found again if the page redraws meanwhile (an event of the
        stream may redraw the table between two steps)."""
        page = self.page
        want = canonical(action)
        raw = [
            text
            for text in page.eval_on_selector_all(
                "[data-action]", "els => els.map(e => e.getAttribute('data-action'))"
            )
            if canonical(json.loads(text)) == want
        ]
        assert raw, f"no control for {action}"
        escaped = raw[0].replace("\\", "\\\\").replace('"', '\\"')
        control = page.locator(f'[data-action="{escaped}"]').first
        if action["type"] == "bid":
            value = control.get_attribute("value")
            assert value is not None, f"the bid option of {action} has no value"
            page.locator("#bid-amount").select_option(value)
            assert (
                canonical(
                    json.loads(
                        page.eval_on_selector(
                            "#bid-amount",
                            "s => s.selectedOptions[0].getAttribute('data-action')",
                        )
                    )
                )
                == want
            ), "the bid selected is not the one chosen"
            page.locator("#bid-submit").click()
        else:
            control.click()
            if action["type"] == "buy":
                page.locator("[data-testid=confirm-buy]").wait_for(state="visible")
                page.locator("#buy-confirm").click()

    def play_turn(
        self, api: httpx.Client, rng: random.Random, view: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """One decision of this seat, chosen at random among the controls offered (`view`:
        the seat's view the page was last seen in sync with, else waited for)."""
        view = view or self.synced(api)
        assert view["to_act"] == view["seat"], view
        decisions = self.check_offered(view)
        assert decisions, f"nothing offered on the seat's turn: {view['legal_actions']}"
        action = rng.choice(sorted(decisions, key=canonical))
        before = view["version"]
        self.act(action)
        wait_for(lambda: self.view(api)["version"] > before, f"the service applying {action} (UI)")
        return action

    def log_texts(self) -> list[str]:
        """The event log's entries as shown (newest last)."""
        return self.page.eval_on_selector_all(
            "[data-testid=event-log] li", "els => els.map(e => e.textContent)"
        )

    def mark_document(self) -> None:
        """Marks the loaded document: `same_document()` is false after any reload."""
        self.page.evaluate("window.__tenTestMark = 1")

    def same_document(self) -> bool:
        return self.page.evaluate("window.__tenTestMark === 1")

    # ------------------------------------------------------------ evidence

    def screenshots(self, name: str) -> list[Path]:
        """The current screen at phone and desktop sizes (full page), in `SCREENSHOTS`."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page = self.page
        original = page.viewport_size
        paths = []
        try:
            for size, viewport in SIZES.items():
                page.set_viewport_size(viewport)
                path = SCREENSHOTS / f"{name}-{size}.png"
                page.screenshot(path=str(path), full_page=True)
                paths.append(path)
        finally:
            if original:
                page.set_viewport_size(original)
        return paths


SHOWN_TABLE = """() => {
  const cards = (el, selector) => [...el.querySelectorAll(selector)].map((c) => c.dataset.card);
  const board = document.querySelector("[data-testid=board]");
  const pile = document.querySelector("[data-testid=draw-pile] strong")?.textContent ?? "";
  const counts = document.querySelector("[data-testid=discard-supply]");
  return {
    version: Number(board.dataset.version),
    draw_pile_size: Number((pile.match(/\\d+/) ?? ["-1"])[0]),
    tableau: cards(board, "[data-testid=tableau] .card"),
    market: cards(board, "[data-testid=market] .card"),
    auction: board.querySelector("[data-testid=auction] .card")?.dataset.card ?? null,
    discard: Number(counts.dataset.discard),
    supply: { currency: Number(counts.dataset.supplyCurrency), bust: Number(counts.dataset.supplyBust) },
    to_act: [...document.querySelectorAll("[data-testid=player].acting")].map((p) => Number(p.dataset.seat)),
    players: [...document.querySelectorAll("[data-testid=player]")].map((p) => ({
      seat: Number(p.dataset.seat),
      currency: Number(p.dataset.currency),
      bust: Number(p.dataset.bust),
      cards: cards(p, ".collection .card").sort(),
    })),
    results: [...document.querySelectorAll("[data-testid=results] [data-testid=result]")]
      .map((r) => [Number(r.dataset.seat), Number(r.dataset.rank)])
      .sort((a, b) => a[0] - b[0]),
  };
}"""

RECORD_STEPS = """() => {
  const steps = (window.__tenSteps = []);
  const note = () => {
    const board = document.querySelector("[data-testid=board]");
    const step = {
      t: performance.now(),
      n: document.querySelectorAll("[data-testid=event-log] li").length,
      v: board ? Number(board.dataset.version) : -1,
      tableau: board ? [...board.querySelectorAll("[data-testid=tableau] .card")].map((c) => c.dataset.card) : [],
      said: document.querySelector("[data-testid=announcer]")?.textContent ?? "",
    };
    const last = steps[steps.length - 1];
    if (!last || last.n !== step.n || last.v !== step.v) steps.push(step);
  };
  note();
  new MutationObserver(note).observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
}"""


def api_table(view: Mapping[str, Any]) -> dict[str, Any]:
    """A view of the API in the terms of `App.shown_table`: what the page must show of it."""
    active = view["status"] == "active"
    return {
        "version": view["version"],
        "draw_pile_size": view["draw_pile_size"],
        "tableau": list(view["tableau"]),
        "market": list(view["market"]),
        "auction": view["auction"]["card"] if view["auction"] else None,
        "discard": len(view["discard"]),
        "supply": dict(view["supply"]),
        "to_act": [view["to_act"]] if active and view["to_act"] is not None else [],
        "players": [
            {
                "seat": p["seat"],
                "currency": p["currency"],
                "bust": p["bust"],
                "cards": sorted(p["cards"]),
            }
            for p in view["players"]
        ],
        "results": sorted([r["seat"], r["rank"]] for r in view["results"] or []),
    }


def deck_game(api: httpx.Client, names: Iterable[str], deck: Iterable[str]) -> dict[str, Any]:
    """A game created through the API with a stacked deck (`deck`: the draw pile, top first);
    `names` are the seats, all people. Returns the created game's body (its seats' tokens)."""
    created = api.post(
        "/v1/games",
        json={"players": [{"name": name} for name in names], "deck": list(deck)},
    )
    assert created.status_code == 201, created.text
    return created.json()


def hold_seat(app: App, game: Mapping[str, Any], seat: int = 0) -> None:
    """Gives this browser the seat `seat` of `game` (a `deck_game`), as the lobby would
    (localStorage["ten.seats"]), without loading any screen."""
    app.page.goto(f"{app.base}/health")  # any page of the origin: its localStorage
    app.page.evaluate(
        """([id, seat, token]) => {
            const seats = JSON.parse(localStorage.getItem("ten.seats") || "{}");
            seats[id] = { seat, token };
            localStorage.setItem("ten.seats", JSON.stringify(seats));
        }""",
        [game["id"], seat, game["seats"][seat]["token"]],
    )


# one seat: R1 R2 stopped (collection), B9 G5 bust into the market (a bust token), O1
# stopped: the buy phase, where B9 costs more than the seat's tokens: a card pays the rest
BUY_DECK = ["R1", "R2", "B9", "G5", "O1", "O2", "O3"]
TO_THE_BUY = [
    {"type": "draw"},
    {"type": "draw"},
    {"type": "stop", "take": "numbers"},
    {"type": "decline"},
    {"type": "draw"},
    {"type": "draw"},
    {"type": "draw"},
    {"type": "stop", "take": "numbers"},
]


def play_actions(
    api: httpx.Client, game: Mapping[str, Any], actions: Iterable[Mapping[str, Any]], seat: int = 0
) -> dict[str, Any]:
    """Sends `actions` through the API as seat `seat` of `game` (a `deck_game`), each one
    accepted; returns the view after the last."""
    view: dict[str, Any] = {}
    for action in actions:
        acted = api.post(
            f"/v1/games/{game['id']}/actions",
            json=action,
            headers=bearer(game["seats"][seat]["token"]),
        )
        assert acted.status_code == 200, (action, acted.text)
        view = acted.json()
    return view


def at_a_buy(api: httpx.Client) -> tuple[dict[str, Any], dict[str, Any]]:
    """A one-seat `deck_game` played through the API to a buy phase (`BUY_DECK`): the game
    created and the seat's view there."""
    game = deck_game(api, ["Ann"], BUY_DECK)
    return game, play_actions(api, game, TO_THE_BUY)


def archived_game(api: httpx.Client, player_id: str) -> str:
    """The README's nine-action game, played through the API, once it is in the archive."""
    created = api.post(
        "/v1/games",
        json={"players": [{"name": "Ann", "player_id": player_id}], "deck": README_DECK},
    )
    assert created.status_code == 201, created.text
    game = created.json()
    token = game["seats"][0]["token"]
    for action in README_GAME:
        acted = api.post(f"/v1/games/{game['id']}/actions", json=action, headers=bearer(token))
        assert acted.status_code == 200, acted.text
    assert acted.json()["status"] == "finished"
    wait_for(
        lambda: api.get(f"/v1/archive/games/{game['id']}").status_code == 200,
        "the finished game reaching the archive",
    )
    return game["id"]


PHONE = {"width": 360, "height": 740}  # a phone's viewport (CSS pixels)


LANGUAGES = ("en", "id", "hy", "es", "gu")  # the client's, English first


def every_screen(app: App, api: httpx.Client) -> Iterator[tuple[str, str]]:
    """Brings `app` to every screen of the client in every language in turn, English first,
    and yields `(language, screen)` there: the lobby with held games, a waiting room, a table
    with the buy dialog open, the results, the archive, a replay, a player's stats, the
    leaderboard, the rules and the tournaments' list."""
    player_id = f"web-{secrets.token_hex(4)}"
    archived = archived_game(api, player_id)
    finished = deck_game(api, ["Ann"], README_DECK)
    play_actions(api, finished, README_GAME)
    buying, _ = at_a_buy(api)
    hold_seat(app, finished)
    hold_seat(app, buying)
    app.goto("/", "lobby")
    waiting = app.create_table("Ann", ["open", "expert"])

    def open_buy() -> None:
        app.page.click(""".buys button[data-action*='"card":"B9"']""")
        app.page.locator("[data-testid=confirm-buy]").wait_for(state="visible")

    screens: dict[str, tuple[str, Callable[[], None] | None]] = {
        "lobby": ("/", None),
        "waiting": (f"/game/{waiting}", None),
        "table": (f"/game/{buying['id']}", open_buy),
        "results": (f"/game/{finished['id']}", None),
        "archive": ("/archive", None),
        "replay": (f"/replay/{archived}", None),
        "stats": (f"/players/{player_id}", None),
        "leaderboard": ("/leaderboard", None),
        "rules": ("/rules", None),
        "tournaments": ("/tournaments", None),
    }
    for lang in LANGUAGES:
        app.goto("/", "lobby")
        app.page.select_option("#language", lang)
        app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
        for screen, (route, prepare) in screens.items():
            app.goto(route, screen)  # in the language chosen (the page's, remembered)
            if prepare:
                prepare()
            yield lang, screen
