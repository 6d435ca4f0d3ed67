"""A finished game's replay shows its post-game review (`GET /v1/games/{id}/review`): each
seat's accuracy, a graph of the seats' winning chances, the biggest value lost (the action
chosen and the best one in words) and the luckiest card, with the API's figures as the page
rounds them, in English and in Spanish; the screen passes axe; a review still being computed
(202) is asked for again after its Retry-After."""

from __future__ import annotations

import math
import random
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import httpx

from tests.browser.axe import check_axe
from tests.browser.web import BROWSER_GROUP, App, deck_game, play_actions, wait_for
from tests.support.api import bearer

pytestmark = BROWSER_GROUP

# a short stacked deck for two people: a few turns, auctions (W4, G#), buys, busts
DECK = ["R1", "R5", "$2", "B3", "W4", "G7", "R8", "B2", "O6", "$4", "G#", "O3", "B7", "R2"]

# the page's words, per language: the texts the checks below look for
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "heading": "Post-game review",
        "percent": "{p}%",
        "chosen": "Chosen: {action} (",
        "best": "Best was: {action}",
        "drew": "Drew {card}: ",
        "draw": "Draw a card",
        "stop.numbers": "Stop and take the number cards",
        "stop.currency": "Stop and take the currency",
        "bid": "Bid {amount}",
        "pass": "Pass",
        "buy": "Buy {card}",
        "decline": "Buy nothing",
        "lost": "value lost {v}",
        "decision.best": "best was: {action}",
        "grades": "best|good|inaccuracy|mistake|blunder",
        "failed": "This game's review could not be computed.",
        "slow": "The review is taking longer than it should.",
    },
    "es": {
        "heading": "Análisis de la partida",
        "percent": "{p} %",
        "chosen": "Elegido: {action} (",
        "best": "Lo mejor era: {action}",
        "drew": "Robó {card}: ",
        "draw": "Robar una carta",
        "stop.numbers": "Detenerse y tomar las cartas de número",
        "stop.currency": "Detenerse y tomar la moneda",
        "bid": "Ofrecer {amount}",
        "pass": "Paso",
        "buy": "Comprar {card}",
        "decline": "No comprar nada",
        "lost": "valor perdido {v}",
        "decision.best": "lo mejor era: {action}",
        "grades": "mejor|buena|imprecisión|error|error grave",
        "failed": "No se pudo calcular el análisis de esta partida.",
        "slow": "El análisis está tardando más de lo debido.",
    },
}
COLORS = {"en": {"R": "Red", "B": "Blue", "O": "Orange", "G": "Green"}}
COLORS["es"] = {"R": "Rojo", "B": "Azul", "O": "Naranja", "G": "Verde"}
CARDS = {"en": ("Currency {n}", "Wild card {n}", "{color} wild card", "Full wild card")}
CARDS["es"] = ("Moneda {n}", "Comodín {n}", "Comodín {color}", "Comodín total")


GRADES = ("best", "good", "inaccuracy", "mistake", "blunder")


def grade_words(grade: str, lang: str) -> str:
    return dict(zip(GRADES, WORDS[lang]["grades"].split("|"), strict=True))[grade]


def shown_number(value: float, lang: str) -> str:
    """`value` as the page writes it: at most one decimal (half away from zero), none when
    it is whole, the language's decimal sign."""
    rounded = Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    text = str(rounded).removesuffix(".0")
    return text.replace(".", ",") if lang == "es" else text


def card_words(code: str, lang: str) -> str:
    currency, number_wild, color_wild, full_wild = CARDS[lang]
    head, tail = code[0], code[1:]
    if head == "$":
        return currency.format(n=tail)
    if head == "W":
        return full_wild if tail == "#" else number_wild.format(n=tail)
    color = COLORS[lang][head]
    return color_wild.format(color=color) if tail == "#" else f"{color} {tail}"


def action_words(action: dict[str, Any], lang: str) -> str:
    words = WORDS[lang]
    kind = action["type"]
    if kind == "stop":
        return words[f"stop.{action['take']}"]
    if kind == "bid":
        return words["bid"].format(amount=action["amount"])
    if kind == "buy":
        return words["buy"].format(card=card_words(action["card"], lang))
    return words[kind]


def finished_game(api: httpx.Client, seed: int = 7) -> str:
    """Two people playing `DECK` to its end through the API, each move a seeded random
    choice among the legal ones; returns the game's id once it is in the archive."""
    game = deck_game(api, ["Ann", "Bob"], DECK)
    rng = random.Random(seed)
    view: dict[str, Any] = {"status": "active", "to_act": game["to_act"]}
    while view["status"] == "active":
        seat = view["to_act"]
        mine = api.get(f"/v1/games/{game['id']}", headers=bearer(game["seats"][seat]["token"]))
        action = rng.choice(mine.json()["legal_actions"])
        view = play_actions(api, game, [action], seat=seat)
    assert view["status"] == "finished", view
    wait_for(
        lambda: api.get(f"/v1/archive/games/{game['id']}").status_code == 200,
        "the finished game reaching the archive",
    )
    return game["id"]


def api_review(api: httpx.Client, game_id: str) -> dict[str, Any]:
    """The review through the API, asked again after each 202's Retry-After."""

    def ready() -> dict[str, Any] | None:
        answer = api.get(f"/v1/games/{game_id}/review")
        if answer.status_code == 202:
            assert int(answer.headers["Retry-After"]) >= 1, answer.headers
            return None
        assert answer.status_code == 200, answer.text
        return answer.json()

    return wait_for(ready, "the review computed", step=0.5)


def expected(review: dict[str, Any]) -> dict[str, Any]:
    """The moments the page must name: the decision that lost the most (the first of equals)
    and the card luckiest for its drawer (the first of equals)."""
    loss = None
    for d in review["decisions"]:
        if d["lost"] > (loss["lost"] if loss else 0):
            loss = d
    lucky = None
    for c in review["cards"]:
        if lucky is None or c["luck"][c["seat"]] > lucky["luck"][lucky["seat"]]:
            lucky = c
    assert loss is not None, review["decisions"]
    assert lucky is not None, review["cards"]
    assert lucky["luck"][lucky["seat"]] > 0, review["cards"]
    return {"loss": loss, "lucky": lucky}


def check_review(app: App, review: dict[str, Any], lang: str) -> None:
    page = app.page
    words = WORDS[lang]
    section = page.locator("[data-testid=review][data-state=ready]")
    section.wait_for(state="attached")
    assert page.text_content("#review-heading") == words["heading"]
    # accuracy per seat, rounded as displayed
    for seat in review["seats"]:
        row = section.locator(f"[data-testid=review-seat][data-seat='{seat['seat']}']")
        want = words["percent"].format(p=shown_number(seat["accuracy"], lang))
        assert row.locator("[data-testid=accuracy]").text_content() == want, (lang, seat)
        # the performance on the rating scale, rounded to a whole number as the page does
        rating = str(math.floor(seat["performance"] + 0.5))
        assert row.locator("[data-testid=performance]").text_content() == rating, (lang, seat)
        assert ["Ann", "Bob"][seat["seat"]] in (row.text_content() or "")
    # the graph: one line per seat, one point per position the API gives chances of
    chart = section.locator("svg[data-testid=chances][role=img]")
    assert chart.locator("title").text_content()
    assert chart.locator("desc").text_content()
    lines = chart.locator("polyline.seat-line")
    assert lines.count() == len(review["seats"])
    for i in range(lines.count()):
        points = (lines.nth(i).get_attribute("points") or "").split()
        assert len(points) == len(review["chances"]), (lang, i)
    moments = expected(review)
    # the biggest value lost: its decision, the points lost, what was chosen and what was best
    loss = moments["loss"]
    lost = section.locator("[data-testid=moment-lost]")
    assert lost.get_attribute("data-version") == str(loss["version"])
    assert lost.get_attribute("data-seat") == str(loss["seat"])
    chosen = action_words(loss["actions"][loss["chosen"]]["action"], lang)
    best = action_words(loss["actions"][loss["best"]]["action"], lang)
    chosen_text = lost.locator("[data-testid=chosen]").text_content() or ""
    assert chosen_text.startswith(words["chosen"].format(action=chosen)), (lang, chosen_text)
    assert shown_number(loss["lost"], lang) in chosen_text, (lang, chosen_text, loss["lost"])
    assert lost.locator("[data-testid=best]").text_content() == words["best"].format(action=best)
    # the luckiest card: which, when, and its luck as shown
    lucky = moments["lucky"]
    card = section.locator("[data-testid=moment-lucky]")
    assert card.get_attribute("data-card") == lucky["card"]
    assert card.get_attribute("data-version") == str(lucky["version"])
    drew = card.locator("[data-testid=drew]").text_content() or ""
    luck = shown_number(lucky["luck"][lucky["seat"]], lang)
    assert drew.startswith(words["drew"].format(card=card_words(lucky["card"], lang)) + "+" + luck)
    check_decisions(app, review, lang)


def check_decisions(app: App, review: dict[str, Any], lang: str) -> None:
    """Every decision, per seat in order: the action chosen and its grade in words; unless it
    was the best, the value lost (no unit named) and the best action in words."""
    words = WORDS[lang]
    section = app.page.locator("[data-testid=review][data-state=ready]")
    graded = dict.fromkeys(GRADES, 0)
    for seat in review["seats"]:
        listed = section.locator(f"[data-testid=review-decisions][data-seat='{seat['seat']}']")
        listed.locator("summary").click()  # unfolded: the list is read as it is shown
        items = listed.locator("[data-testid=decision]")
        items.first.wait_for(state="visible")
        mine = [d for d in review["decisions"] if d["seat"] == seat["seat"]]
        assert items.count() == len(mine) == seat["decisions"], (lang, seat["seat"])
        for i, d in enumerate(mine):
            item = items.nth(i)
            assert item.get_attribute("data-version") == str(d["version"])
            assert item.get_attribute("data-grade") == d["grade"]
            assert item.locator("[data-testid=grade]").text_content() == grade_words(
                d["grade"], lang
            )
            chosen = action_words(d["actions"][d["chosen"]]["action"], lang)
            assert chosen in (item.text_content() or ""), (lang, d)
            graded[d["grade"]] += 1
            if d["grade"] == "best":
                assert item.locator("[data-testid=lost]").count() == 0
                continue
            lost = words["lost"].format(v=shown_number(d["lost"], lang))
            assert item.locator("[data-testid=lost]").text_content() == lost, (lang, d)
            best = action_words(d["actions"][d["best"]]["action"], lang)
            want = words["decision.best"].format(action=best)
            assert item.locator("[data-testid=best]").text_content() == want, (lang, d)
        listed.locator("summary").click()  # folded again, as the page starts
    assert graded["best"], graded  # both kinds shown: best ones, and ones that lost value
    assert sum(graded.values()) > graded["best"], graded


def choose_language(app: App, lang: str) -> None:
    app.page.select_option("#language", lang)
    app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
    app.wait_screen("replay")


def test_the_review_shows_the_apis_figures_in_english_and_spanish(
    app: App, api: httpx.Client
) -> None:
    game_id = finished_game(api)
    review = api_review(api, game_id)
    assert len(review["seats"]) == 2, review["seats"]
    app.goto(f"/replay/{game_id}", "replay")
    check_review(app, review, "en")
    check_axe(app.page, "replay with its review")
    first = app.page.locator("[data-testid=review-decisions] summary").first
    first.click()
    check_axe(app.page, "replay with a player's decisions unfolded")
    first.click()
    # the moment's button shows its step on the replay's board
    loss = expected(review)["loss"]
    app.page.click("[data-testid=moment-lost] button")
    board = app.page.locator("[data-testid=board]")
    assert board.get_attribute("data-version") == str(loss["version"])
    choose_language(app, "es")
    check_review(app, review, "es")


def test_a_review_being_computed_is_asked_for_again_after_its_retry_after(
    app: App, api: httpx.Client
) -> None:
    """The page's answers are 202 (as the service answers while it computes) until the test
    lets the service's own through: the page says the review is being computed, asks again
    after each Retry-After, then shows the review."""
    game_id = finished_game(api, seed=3)
    review = api_review(api, game_id)
    asked: list[str] = []
    held = {"back": True}

    def answer(route) -> None:
        asked.append(route.request.url)
        if held["back"]:
            body = {"game_id": game_id, "status": "pending", "retry_after": 1}
            route.fulfill(status=202, json=body, headers={"Retry-After": "1"})
        else:
            route.continue_()

    app.page.route("**/v1/games/*/review", answer)
    app.goto(f"/replay/{game_id}", "replay")
    # (the route's handler runs while Playwright is called: each check calls it once)
    asking = lambda: app.page.evaluate("true") and len(asked) >= 2  # noqa: E731
    wait_for(asking, "the page asking again after the Retry-After")
    pending = app.page.locator("[data-testid=review]")
    assert pending.get_attribute("data-state") == "pending"
    assert "Computing the review" in (pending.text_content() or "")
    held["back"] = False
    check_review(app, review, "en")


def test_the_results_link_to_the_review(app: App, api: httpx.Client) -> None:
    """The end of a game (the results screen) links to its review on the replay."""
    game_id = finished_game(api, seed=5)
    review = api_review(api, game_id)
    app.goto(f"/game/{game_id}", "results")
    app.page.click("[data-testid=to-review]")
    app.wait_screen("replay")
    assert app.page.evaluate("location.hash") == f"#/replay/{game_id}?review"
    check_review(app, review, "en")


def held_review(app: App, status: int, body: dict[str, Any], headers: dict[str, str]) -> list[str]:
    """The page's fake clock installed and every review it asks for answered `status` with
    `body`: the URLs it asked for, as it asks."""
    asked: list[str] = []

    def answer(route) -> None:
        asked.append(route.request.url)
        route.fulfill(status=status, json=body, headers=headers)

    app.page.clock.install()
    app.page.route("**/v1/games/*/review", answer)
    return asked


def settled(app: App) -> None:
    """Playwright called twice: a request the page made meanwhile reached its route."""
    app.page.evaluate("true")
    app.page.evaluate("true")


def test_a_review_the_service_failed_to_compute_is_said_and_not_asked_again(
    app: App, api: httpx.Client
) -> None:
    """500 `review_failed` (a review set aside by the service's queue) ends the asking: the
    page says so in its language, offers no retry, and asks no more however long it waits."""
    game_id = finished_game(api, seed=11)
    problem = {
        "type": "https://ten.example/problems/review_failed",
        "title": "Internal Server Error",
        "status": 500,
        "detail": "(the service's own words, which the page does not show)",
        "code": "review_failed",
    }
    asked = held_review(app, 500, problem, {"Content-Type": "application/problem+json"})
    for lang in ("en", "es"):
        if lang != "en":
            choose_language(app, lang)
        else:
            app.goto(f"/replay/{game_id}", "replay")
        section = app.page.locator("[data-testid=review][data-state=failed]")
        section.wait_for(state="attached")
        assert WORDS[lang]["failed"] in (section.text_content() or ""), lang
        assert section.locator("[data-testid=review-retry]").count() == 0
        once = len(asked)
        app.page.clock.run_for("30:00")  # half an hour later
        settled(app)
        assert len(asked) == once, asked


def test_a_review_never_ready_is_asked_for_less_often_then_no_more_with_a_retry(
    app: App, api: httpx.Client
) -> None:
    """202 for ever: the page asks again less and less often, then stops (review.ts
    POLLING.MOST_ASKS: 12 asks) with a message and a retry button; the button asks again,
    and the review comes."""
    game_id = finished_game(api, seed=13)
    review = api_review(api, game_id)
    pending = {"game_id": game_id, "status": "pending", "retry_after": 1}
    asked = held_review(app, 202, pending, {"Retry-After": "1"})
    app.goto(f"/replay/{game_id}", "replay")
    section = app.page.locator("[data-testid=review]")
    wait_for(lambda: app.page.evaluate("true") and len(asked) == 1, "the first ask")

    def stalled() -> bool:
        app.page.clock.run_for("00:31")  # the longest wait between two asks, and a second
        return section.get_attribute("data-state") == "stalled"

    wait_for(stalled, "the page giving up")
    assert len(asked) == 12, asked
    assert WORDS["en"]["slow"] in (section.text_content() or "")
    app.page.clock.run_for("30:00")
    settled(app)
    assert len(asked) == 12, asked  # no more asks
    app.page.unroute("**/v1/games/*/review")
    section.locator("[data-testid=review-retry]").click()
    check_review(app, review, "en")
