"""The lobby's "Notify me when it's my turn": the page asks for permission, registers the
service worker, subscribes and registers the subscription with the service; the worker shows
a "your turn" push message in the page's language, and its link opens the game.

The browser's push service is the one part left out: headless Chromium has none (its
`PushManager.subscribe` fails, "Registration failed - permission denied"), so here it answers
with a subscription of a made-up https endpoint (an init script); the service is asked for its
key and keeps the subscription as it would any.
The message itself reaches the worker through the browser's developer protocol
(`ServiceWorker.deliverPushMessage`), as the push service would hand it over.
"""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

import httpx
import pytest

from tests.browser.web import BROWSER_GROUP, App, deck_game, hold_seat, wait_for

pytestmark = BROWSER_GROUP

ENDPOINT = "https://push.example.test/send/"
# what the browser's push service would answer: a subscription of its own endpoint, the keys
# the service encrypts with (a P-256 point and 16 bytes, base64url)
FAKE_PUSH_SERVICE = """
(() => {
  const endpoint = ENDPOINT + crypto.randomUUID();
  const p256dh = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM";
  const auth = "tBHItJI5svbpez7KI4CCXg";
  let subscribed = null;
  const subscription = {
    endpoint, expirationTime: null, options: { userVisibleOnly: true },
    getKey: () => null,
    toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }),
    unsubscribe: async () => { subscribed = null; return true; },
  };
  PushManager.prototype.subscribe = async function (options) {
    if (!options || options.userVisibleOnly !== true || !options.applicationServerKey) {
      throw new DOMException("userVisibleOnly and applicationServerKey are required", "NotAllowedError");
    }
    window.__tenServerKey = Array.from(new Uint8Array(options.applicationServerKey));
    subscribed = subscription;
    return subscription;
  };
  PushManager.prototype.getSubscription = async function () { return subscribed; };
})();
""".replace("ENDPOINT", json.dumps(ENDPOINT))
NOTIFICATIONS = """async () => (await self.registration.getNotifications()).map(
    (n) => ({ title: n.title, body: n.body, lang: n.lang, tag: n.tag, data: n.data }))"""
# the language of the words the page kept for the worker (push-words.ts), or null
KEPT_LANGUAGE = """async () => {
    const kept = await (await caches.open("ten-push-words")).match("/sw/words");
    return kept ? (await kept.json()).lang : null;
}"""


def notifying_app(app: App) -> None:
    """The lobby with notifications allowed and the push service stood in for."""
    app.page.context.grant_permissions(["notifications"], origin=app.base)
    app.page.add_init_script(FAKE_PUSH_SERVICE)
    app.goto("/", "lobby")


def turn_notices_on(app: App) -> str:
    """Presses "Notify me when it's my turn"; returns the subscription's id the page kept."""
    app.page.click("#push-enable")
    app.page.wait_for_selector("[data-testid=notify-state][data-on='1']")
    return wait_for(lambda: app.storage("ten.push"), "the subscription's id kept")


class Worker:
    """The client's service worker as the browser's developer protocol sees it."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.cdp = app.page.context.new_cdp_session(app.page)
        self.registrations: dict[str, dict[str, Any]] = {}
        self.versions: dict[str, dict[str, Any]] = {}
        self.cdp.on("ServiceWorker.workerRegistrationUpdated", self.updated)
        self.cdp.on("ServiceWorker.workerVersionUpdated", self.versioned)
        self.cdp.send("ServiceWorker.enable")
        # the browser's own record of each push: "Push event dispatched" (with its payload),
        # then "Push event completed" (with its status) once the worker's handler is done
        self.pushes: list[dict[str, Any]] = []
        self.sent = 0
        self.cdp.on("BackgroundService.backgroundServiceEventReceived", self.logged)
        self.cdp.send("BackgroundService.startObserving", {"service": "pushMessaging"})
        self.cdp.send(
            "BackgroundService.setRecording", {"shouldRecord": True, "service": "pushMessaging"}
        )

    def logged(self, event: dict[str, Any]) -> None:
        found = event["backgroundServiceEvent"]
        self.pushes.append(
            {
                "event": found["eventName"],
                **{m["key"]: m["value"] for m in found.get("eventMetadata", [])},
            }
        )

    def updated(self, event: dict[str, Any]) -> None:
        for registration in event["registrations"]:
            self.registrations[registration["registrationId"]] = registration

    def versioned(self, event: dict[str, Any]) -> None:
        for version in event["versions"]:
            self.versions[version["versionId"]] = version

    def registration_id(self) -> str:
        scope = f"{self.app.base}/"

        def found() -> str | None:
            live = [
                r
                for r in self.registrations.values()
                if r["scopeURL"] == scope and not r["isDeleted"]
            ]
            # a push reaches an activated worker only: one still installing drops it
            active = {
                v["registrationId"] for v in self.versions.values() if v["status"] == "activated"
            }
            ready = [r["registrationId"] for r in live if r["registrationId"] in active]
            return ready[0] if ready else None

        return wait_for(
            found, f"a service worker registered and activated for {scope}", page=self.app.page
        )

    def push(self, payload: dict[str, Any]) -> None:
        """Delivers `payload` as the push service would, then waits for the browser's record
        that the worker's push handler is done with it (status Success), so that no push is
        delivered while the browser still handles another, and a test's next step reads what
        the push did. A push never completed fails here, with the browser's record of each."""
        self.cdp.send(
            "ServiceWorker.deliverPushMessage",
            {
                "origin": self.app.base,
                "registrationId": self.registration_id(),
                "data": json.dumps(payload),
            },
        )
        self.sent += 1

        def done() -> list[dict[str, Any]]:
            return [p for p in self.pushes if p["event"] == "Push event completed"][self.sent - 1 :]

        try:
            completed = wait_for(done, f"push {self.sent} completed", page=self.app.page)
        except AssertionError as failed:
            raise AssertionError(f"{failed}; the browser's pushes: {self.pushes}") from None
        assert completed[0].get("Status") == "Success", self.pushes

    def notifications(self) -> list[dict[str, Any]]:
        workers = [w for w in self.app.page.context.service_workers if w.url.endswith("/sw.js")]
        return workers[0].evaluate(NOTIFICATIONS) if workers else []

    def notification(self, game_id: str) -> dict[str, Any]:
        seen: list[dict[str, Any]] = []

        def shown() -> dict[str, Any] | None:
            seen[:] = self.notifications()
            return next((n for n in seen if n["tag"] == f"turn-{game_id}"), None)

        try:
            return wait_for(shown, f"a notification of {game_id}")
        except AssertionError as failed:
            workers = [w.url for w in self.app.page.context.service_workers]
            versions = [
                {k: v.get(k) for k in ("versionId", "status", "runningStatus", "registrationId")}
                for v in self.versions.values()
            ]
            raise AssertionError(
                f"{failed}; shown: {seen}; workers: {workers}; versions: {versions}; "
                f"pushes: {self.pushes}"
            ) from None


def kept_words_in(app: App, lang: str) -> None:
    """Waits until the page kept its words for the worker in `lang`: it keeps them after a
    language switch has drawn the page again, so a push before that would be told in the
    language before."""
    wait_for(
        lambda: app.page.evaluate(KEPT_LANGUAGE) == lang,
        f"the worker's words kept in {lang}",
        page=app.page,
    )


def your_turn(game_id: str, deadline: str | None = None) -> dict[str, Any]:
    return {
        "type": "your_turn",
        "game_id": game_id,
        "seat": 0,
        "deadline": deadline,
        "url": f"/app/#/games/{game_id}",
    }


@pytest.mark.parametrize("app_server", ["embedded", "redis"], indirect=True)
def test_turning_notices_on_registers_this_browser_subscription_with_the_service(
    app: App, api: httpx.Client
) -> None:
    notifying_app(app)
    player = app.storage("ten.player")
    subscription_id = turn_notices_on(app)
    listed = api.get("/v1/push/subscriptions", params={"player_id": player})
    assert listed.status_code == 200, listed.text
    mine = [s for s in listed.json()["subscriptions"] if s["id"] == subscription_id]
    assert len(mine) == 1, listed.json()
    assert mine[0]["endpoint"].startswith(ENDPOINT), mine
    assert mine[0]["player_id"] == player
    # the page subscribed with the service's own application server key
    key = api.get("/v1/push/key").json()["public_key"]
    padded = key.replace("-", "+").replace("_", "/") + "=" * (-len(key) % 4)
    assert app.page.evaluate("window.__tenServerKey") == list(base64.b64decode(padded))
    # and turned off: gone from the service and from the page
    app.page.click("#push-disable")
    app.page.wait_for_selector("#push-enable")
    assert not app.storage("ten.push")
    again = api.get("/v1/push/subscriptions", params={"player_id": player}).json()
    assert subscription_id not in [s["id"] for s in again["subscriptions"]]


def test_the_worker_shows_a_your_turn_push_in_the_page_language(app: App) -> None:
    notifying_app(app)
    app.set_language("es")
    turn_notices_on(app)
    kept_words_in(app, "es")
    worker = Worker(app)
    game_id = "g" + secrets.token_hex(6)
    worker.push(your_turn(game_id, "2030-01-02T15:04:00Z"))
    shown = worker.notification(game_id)
    assert shown["title"] == "Te toca"
    assert shown["lang"] == "es"
    assert shown["body"].startswith("Una partida de TEN espera tu jugada, hasta el ")
    assert "2030" in shown["body"], shown  # the deadline, written as Spanish writes dates
    assert shown["data"]["url"] == f"{app.base}/app/#/games/{game_id}"
    # the page's language changed: the next notice follows it
    app.set_language("en")
    kept_words_in(app, "en")
    other = "g" + secrets.token_hex(6)
    worker.push(your_turn(other))
    shown = worker.notification(other)
    assert (shown["title"], shown["body"], shown["lang"]) == (
        "Your turn",
        "A game of TEN is waiting for your move.",
        "en",
    )


def test_a_push_that_is_no_turn_notice_shows_nothing_and_a_link_elsewhere_stays_here(
    app: App,
) -> None:
    notifying_app(app)
    turn_notices_on(app)
    worker = Worker(app)
    worker.push({"type": "something_else", "game_id": "gx"})
    game_id = "g" + secrets.token_hex(6)
    worker.push({**your_turn(game_id), "url": "https://elsewhere.example/steal"})
    shown = worker.notification(game_id)
    assert shown["data"]["url"] == f"{app.base}/app/#/games/{game_id}"
    assert [n["tag"] for n in worker.notifications()] == [f"turn-{game_id}"]


def test_the_notice_link_opens_the_game_at_its_seat(app: App, api: httpx.Client) -> None:
    """What a click on the notice opens: with no window of the client open, its `url` (the
    client at /app/, the game's route); with one open, that window, told by the worker. (The
    developer protocol has no way to click a notification: the worker's message to the
    window, what its click handler sends, is sent from the worker here.)"""
    game = deck_game(api, ["Ann", "Bob"], ["R1", "R2", "B9", "G5", "O1", "O2", "O3"])
    hold_seat(app, game)
    app.page.goto(f"{app.base}/app/#/games/{game['id']}")
    app.wait_screen("table")
    assert app.page.locator("[data-testid=player][data-seat='0']").count() == 1
    app.goto("/", "lobby")
    app.page.evaluate(
        "async () => { await navigator.serviceWorker.register('/sw.js', { scope: '/' }); await navigator.serviceWorker.ready; }"
    )
    worker = next(w for w in app.page.context.service_workers if w.url.endswith("/sw.js"))
    worker.evaluate(
        """async (hash) => {
            for (const window of await self.clients.matchAll({ type: "window", includeUncontrolled: true })) {
                window.postMessage({ type: "ten.open", hash });
            }
        }""",
        f"#/games/{game['id']}",
    )
    app.wait_screen("table")
    assert app.page.url.endswith(f"#/games/{game['id']}")


def test_a_game_played_by_the_day_offers_turn_notices_at_its_seat(
    app: App, api: httpx.Client
) -> None:
    by_the_day = api.post(
        "/v1/games",
        json={
            "players": [{"name": "Ann"}, {"name": "Bob"}],
            "clock": {"type": "deadline", "hours": 24},
        },
    )
    assert by_the_day.status_code == 201, by_the_day.text
    live = deck_game(api, ["Ann", "Bob"], ["R1", "R2", "B9", "G5", "O1", "O2", "O3"])
    notifying_app(app)
    for game in (by_the_day.json(), live):
        hold_seat(app, game)
    app.goto(f"/game/{by_the_day.json()['id']}", "table")
    assert app.page.locator("[data-testid=notify-panel] #push-enable").is_visible()
    app.goto(f"/game/{live['id']}", "table")
    assert app.page.locator("[data-testid=notify-panel]").count() == 0
