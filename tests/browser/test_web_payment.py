"""The player chooses how to pay for a purchase: the buy's dialog preselects the payment the
service offered (its legal action's) and sends the one chosen instead, as chosen; a payment
the service refuses (not minimal) is a clear error that changes nothing."""

from __future__ import annotations

import json

import httpx

from tests.browser.web import BROWSER_GROUP, App, at_a_buy, hold_seat, wait_for

pytestmark = BROWSER_GROUP


def open_buy(app: App, card: str) -> None:
    app.page.locator(f""".buys button[data-action*='"card":"{card}"']""").click()
    app.page.locator("[data-testid=confirm-buy]").wait_for(state="visible")


def preselected(app: App) -> dict:
    page = app.page
    return {
        "currency": int(page.input_value("#pay-currency")),
        "bust": int(page.input_value("#pay-bust")),
        "cards": page.eval_on_selector_all(
            "[data-testid=payment] input[data-card]:checked", "els => els.map(e => e.dataset.card)"
        ),
    }


def test_the_payment_chosen_is_the_one_sent(app: App, api: httpx.Client) -> None:
    game, view = at_a_buy(api)
    offered = next(a for a in view["legal_actions"] if a.get("card") == "B9")
    assert offered["payment"] == {"currency": 5, "bust": 1, "cards": ["O1"]}, offered
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page
    sent: list[dict] = []
    page.on(
        "request",
        lambda r: (
            sent.append(json.loads(r.post_data or "{}"))
            if r.method == "POST" and r.url.endswith("/actions")
            else None
        ),
    )

    open_buy(app, "B9")
    assert preselected(app) == offered["payment"]
    # the same value, paid with R1 instead of O1
    page.uncheck("[data-testid=payment] input[data-card=O1]")
    page.check("[data-testid=payment] input[data-card=R1]")
    assert "Red 1" in (page.text_content("[data-testid=payment-summary]") or "")
    page.click("#buy-confirm")

    wait_for(lambda: app.view(api)["version"] > view["version"], "the purchase applied")
    wait_for(lambda: sent, "the page's request seen", page=page)
    chosen = {"currency": 5, "bust": 1, "cards": ["R1"]}
    assert sent == [{"type": "buy", "card": "B9", "payment": chosen}], sent
    after = app.view(api)
    assert sorted(after["players"][0]["cards"]) == ["B9", "O1", "R2"], after["players"][0]
    assert after["players"][0]["currency"] == 0
    assert after["players"][0]["bust"] == 0


def test_a_payment_the_service_refuses_changes_nothing(app: App, api: httpx.Client) -> None:
    game, view = at_a_buy(api)
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page
    open_buy(app, "B9")
    page.check("[data-testid=payment] input[data-card=R1]")  # one card too many
    page.click("#buy-confirm")
    alert = page.locator("[role=alert]")
    alert.wait_for()
    assert app.view(api)["version"] == view["version"]
    # the page says what the service says of that payment
    refused = api.post(
        f"/v1/games/{game['id']}/actions",
        json={
            "type": "buy",
            "card": "B9",
            "payment": {"currency": 5, "bust": 1, "cards": ["O1", "R1"]},
        },
        headers={"Authorization": f"Bearer {game['seats'][0]['token']}"},
    )
    assert refused.json()["code"] == "payment_not_minimal", refused.text
    assert refused.json()["detail"] in (alert.text_content() or ""), alert.text_content()
    assert page.locator(".buys button").count() == 2  # still offered: B9 and G5


def test_the_buy_dialog_goes_with_its_screen(app: App, api: httpx.Client) -> None:
    """Leaving the table (the browser's Back, a link, a new language) with the dialog open
    takes the dialog away: it neither covers the next screen nor sends a stale purchase."""
    game, view = at_a_buy(api)
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page
    open_buy(app, "B9")
    page.evaluate("location.hash = '#/rules'")  # a route change with the dialog still open
    app.wait_screen("rules")
    assert page.locator("dialog").count() == 0
    page.click("a[data-nav=lobby]")  # the page is usable again (a modal would block it)
    app.wait_screen("lobby")
    app.goto(f"/game/{game['id']}", "table")
    open_buy(app, "B9")
    page.select_option("#language", "es")
    page.wait_for_selector('html[lang="es"]', state="attached")
    app.wait_screen("table")
    assert page.locator("dialog").count() == 0  # not left open in the language before
    assert app.view(api)["version"] == view["version"]  # nothing was bought
