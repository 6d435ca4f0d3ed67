"""How the tournament page (`#/tournaments/<id>`) says its standings are counted and ranked,
in English and in Spanish: a bot tournament whose standings count its games' luck-adjusted
results and rank by margin shows so in its settings, a Margin column first among the
standings' figures (signed, one decimal) with the results' own figures in brackets beside
the luck-adjusted ones, all the API's in the API's order, and each round's table its
luck-adjusted scores and points (or why it has none); one ranked by strength shows a Strength
column first instead (signed, two decimals, the results' own beneath) and no Margin column;
a tournament of the default settings shows none of it."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import httpx
import pytest

from tests.browser.axe import check_axe
from tests.browser.web import BROWSER_GROUP, PHONE, TIMEOUT, WIDER, App, wait_for
from tests.support.platform_server import PLATFORM, platform_server

pytestmark = BROWSER_GROUP

# what the page says in each language (its catalogue), to know it is the language shown
WORDS = {
    "en": {
        "luck_margin": "luck-adjusted results, ranked by margin",
        "results_points": "results, ranked by points",
        "luck_help": "Luck-adjusted: each game counts by its result with the luck of the cards",
        "margin_help": "Margin: the sum of a player's game margins",
        "margin": "Margin",
        "by_results": "(results: {n})",
        "order": "Ordered by margin, then points",
        "luck_strength": "luck-adjusted results, ranked by strength",
        "strength_help": (
            "Strength: a player's margin per game with the strength of the players they met "
            "taken out, fitted over every game of the tournament."
        ),
        "strength": "Strength",
        "strength_order": (
            "Ordered by strength, then points, then matchpoints, then Buchholz (the strengths "
            "of the players met), then the total game score."
        ),
        "unadjusted": "Counted by its results: no review.",
        "pending": "Luck-adjusted once its game's review is computed.",
    },
    "es": {
        "luck_margin": "resultados ajustados por suerte, ordenada por margen",
        "results_points": "resultados, ordenada por puntos",
        "luck_help": "Ajustados por suerte: cada partida cuenta por su resultado sin la suerte",
        "margin_help": "Margen: la suma de los márgenes de las partidas de un jugador",
        "margin": "Margen",
        "by_results": "(resultados: {n})",
        "order": "Ordenada por margen, luego puntos",
        "luck_strength": "resultados ajustados por suerte, ordenada por fuerza",
        "strength_help": (
            "Fuerza: el margen por partida de un jugador sin la fuerza de los rivales que "
            "enfrentó, estimada con todas las partidas del torneo."
        ),
        "strength": "Fuerza",
        "strength_order": (
            "Ordenada por fuerza, luego puntos, luego puntos de partida, luego Buchholz (las "
            "fuerzas de los rivales), luego la puntuación total en partidas."
        ),
        "unadjusted": "Cuenta por sus resultados: sin análisis.",
        "pending": "Se ajustará por suerte cuando se calcule el análisis de la partida.",
    },
}
DECIMAL = {"en": ".", "es": ","}
GROUP = {"en": (",", 4), "es": (".", 5)}  # the separator, and from how many digits on
MINUS = "\u2212"
ISOLATES = re.compile("[\u2066-\u2069]")
FIGURES = ["position", "entrant", "margin", "points", "matchpoints", "buchholz", "score"]
# ranked by strength: the strength first, no margin
STRENGTH_FIGURES = ["position", "entrant", "strength", *FIGURES[3:]]


@pytest.fixture
def app_server() -> Iterator[str]:
    """A service with a platform API key: the platform creates the tournaments."""
    with platform_server() as base:
        yield base


def written(value: float, lang: str, digits: int, fixed: bool = False) -> str:
    """`value` (its absolute value) as the page writes it: rounded half away from zero as
    `Intl` does, at most `digits` decimals (exactly, `fixed`), the language's signs."""
    rounded = abs(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
    text = f"{rounded:.{digits}f}"
    if not fixed and digits:
        text = text.rstrip("0").rstrip(".")
    whole, _, fraction = text.partition(".")
    separator, least = GROUP[lang]
    if len(whole) >= least:
        whole = f"{int(whole):,}".replace(",", separator)
    return whole + (DECIMAL[lang] + fraction if fraction else "")


def shown(value: float, lang: str, digits: int = 2) -> str:
    """A figure as `num` writes it: at most `digits` decimals."""
    return ("-" if value < 0 else "") + written(value, lang, digits)


def signed(value: float, lang: str, digits: int = 1) -> str:
    """A margin as the page writes it: +3.5, −1.0, 0.0 (no sign once rounded to zero); a
    strength with `digits` 2: +0.35, −1.20, 0.00."""
    text = written(value, lang, digits, fixed=True)
    if not text.strip("0.,"):
        return text
    return ("+" if value > 0 else MINUS) + text


def text_of(app: App, selector: str) -> str:
    return ISOLATES.sub("", app.page.inner_text(selector)).strip()


def finished_tournament(api: httpx.Client, **settings: Any) -> dict[str, Any]:
    """A bot tournament of tables of two, started at once and played to its end."""
    body = {
        "name": f"Ranking {secrets.token_hex(3)}", "table_size": 2, "places": 2, "rounds": 1,
        "bot_level": "random", **settings,
    }  # fmt: skip
    created = api.post("/v1/tournaments", json=body, headers=PLATFORM)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    started = api.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM)
    assert started.status_code == 200, started.text
    # a luck-adjusted round ends once its games' reviews are computed
    return wait_for(
        lambda: (b := api.get(f"/v1/tournaments/{tid}").json())["status"] == "finished" and b,
        "the tournament's end",
        timeout=TIMEOUT * 6,
    )


def open_tournament(app: App, tid: str, lang: str) -> None:
    app.goto("/tournaments", "tournaments")
    if lang != "en":
        app.set_language(lang)
    app.goto(f"/tournaments/{tid}", "tournament")
    app.page.wait_for_selector("[data-testid=tournament-status][data-status=finished]")


def cells_of(row) -> dict[str, str]:
    """A row's cells by column, each text's lines joined by a space."""
    return {
        c.get_attribute("data-col"): " ".join(ISOLATES.sub("", c.inner_text()).split())
        for c in row.query_selector_all(":scope > [data-col]")
    }


# per ranking figure: the standings' columns, its decimals, what the order note starts with
RANKED = {
    "margin": (FIGURES, 1, "order"),
    "strength": (STRENGTH_FIGURES, 2, "strength_order"),
}


def check_ranked_standings(app: App, api: httpx.Client, tid: str, lang: str, by: str) -> None:
    """The ranking figure `by` (margin or strength) first, signed, the results' own on a line
    beneath it and beside each other luck-adjusted figure; Buchholz the sum of the players
    met's `by`, signed; no column of the other ranking figure."""
    page = app.page
    columns, digits, order = RANKED[by]
    heads = page.eval_on_selector_all(
        "[data-testid=standings] thead th", "els => els.map(e => [e.dataset.col, e.textContent])"
    )
    assert [col for col, _ in heads] == columns, heads
    assert dict(heads)[by] == WORDS[lang][by]
    for other in set(RANKED) - {by}:
        assert page.query_selector(f"[data-testid=standings] [data-col={other}]") is None
    standings = api.get(f"/v1/tournaments/{tid}/standings").json()["standings"]
    rows = page.query_selector_all("[data-testid=standings] tbody tr")
    assert [r.get_attribute("data-entrant") for r in rows] == [s["entrant"] for s in standings]
    beside = WORDS[lang]["by_results"]
    for row, want in zip(rows, standings, strict=True):
        cells = cells_of(row)
        assert cells["position"] == str(want["position"])
        figure = signed(want[by], lang, digits)
        results = signed(want[f"result_{by}"], lang, digits)
        assert cells[by] == f"{figure} {beside.format(n=results)}", cells
        # the results' own on a line of its own, beneath the figure
        cell = row.query_selector(f"[data-col={by}]")
        lines = ISOLATES.sub("", cell.inner_text()).strip().splitlines()
        assert [line.strip() for line in lines] == [figure, beside.format(n=results)], lines
        assert cell.query_selector("[data-results]").get_attribute("data-results") == results
        for col in ("points", "matchpoints"):
            own = beside.format(n=shown(want[f"result_{col}"], lang))
            assert cells[col] == f"{shown(want[col], lang)} {own}", (col, cells)
        assert cells["buchholz"] == signed(want["buchholz"], lang, digits)  # the opponents'
        assert cells["score"] == shown(want["score"], lang, 0)
    figures = [s[by] for s in standings]
    assert figures == sorted(figures, reverse=True)  # the API's order: by the figure first
    assert text_of(app, "[data-testid=standings-order]").startswith(WORDS[lang][order])
    assert page.is_visible("[data-testid=standings-luck]")


def check_luck_tables(app: App, api: httpx.Client, tid: str, lang: str) -> None:
    """Every table's seats: the luck-adjusted score and points the API's review gave."""
    page = app.page
    rounds = api.get(f"/v1/tournaments/{tid}/rounds").json()["rounds"]
    for played in rounds:
        for table in played["tables"]:
            where = f"[data-testid=round-table][data-round='{played['round']}'][data-table='{table['table']}']"
            seats = page.query_selector_all(f"{where} tbody tr")
            result = table["result"]
            luck = result["luck_adjusted"]
            for seat, row in enumerate(seats):
                cells = cells_of(row)
                assert cells["points"] == shown(result["points"][seat], lang)
                if luck:  # else "—": checked in check_tables_without_review
                    assert cells["luck_score"] == shown(luck["scores"][seat], lang, 1)
                    assert cells["luck_points"] == shown(luck["points"][seat], lang)
            note = page.query_selector(f"{where} [data-testid=table-luck]")
            if luck:
                assert note is None
            else:
                assert note is not None, where
                assert note.get_attribute("data-luck") == "unadjusted"


def check_tables_without_review(app: App, tid: str, lang: str) -> None:
    """Round 1 as if its first table's review had failed and its second's were still
    being computed (the API's answer changed on its way): each table says so."""
    page = app.page

    def changed(route) -> None:
        body = route.fetch().json()
        first, second = body["rounds"][0]["tables"][:2]
        first["result"].update(luck_adjusted=None, unadjusted=True)
        second["result"].update(luck_adjusted=None, unadjusted=False)
        route.fulfill(json=body)

    page.route("**/v1/tournaments/*/rounds", changed)
    app.reload("tournament")
    for table, kind in ((0, "unadjusted"), (1, "pending")):
        where = f"[data-testid=round-table][data-round='1'][data-table='{table}']"
        note = page.wait_for_selector(f"{where} [data-testid=table-luck][data-luck={kind}]")
        assert note.inner_text().strip() == WORDS[lang][kind]
        cells = page.query_selector_all(f"{where} tbody [data-col^=luck_]")
        assert [c.inner_text() for c in cells] == ["—"] * 4  # two seats, score and points
    page.unroute("**/v1/tournaments/*/rounds")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_luck_adjusted_tournament_ranked_by_margin_shows_both(
    app: App, api: httpx.Client, lang: str
) -> None:
    tour = finished_tournament(
        api, places=4, rounds=2, standings_by="luck_adjusted", ranked_by="margin"
    )
    tid = tour["id"]
    open_tournament(app, tid, lang)
    assert text_of(app, "[data-testid=tournament-counting]") == WORDS[lang]["luck_margin"]
    setting = text_of(app, "[data-setting=standings] td")
    assert WORDS[lang]["luck_help"] in setting, setting
    assert WORDS[lang]["margin_help"] in setting, setting
    assert WORDS[lang]["strength_help"] not in setting, setting
    check_ranked_standings(app, api, tid, lang, "margin")
    check_luck_tables(app, api, tid, lang)
    check_axe(app.page, "tournament (luck-adjusted, ranked by margin)")
    app.screenshots(f"tournament-ranking-{lang}")
    app.page.set_viewport_size(PHONE)  # the wider standings scroll in their own region only
    wide = app.page.evaluate(WIDER)
    assert wide["width"] <= wide["viewport"] == PHONE["width"], wide
    check_tables_without_review(app, tid, lang)


def test_a_tournament_of_the_default_settings_shows_no_margin(app: App, api: httpx.Client) -> None:
    tour = finished_tournament(api)
    assert (tour["standings_by"], tour["ranked_by"]) == ("results", "points")
    page = app.page
    open_tournament(app, tour["id"], "en")
    assert text_of(app, "[data-testid=tournament-counting]") == WORDS["en"]["results_points"]
    setting = text_of(app, "[data-setting=standings] td")
    assert "Luck-adjusted" not in setting, setting
    assert "Strength" not in setting, setting
    heads = page.eval_on_selector_all(
        "[data-testid=standings] thead th", "els => els.map(e => e.dataset.col)"
    )
    assert heads == [col for col in FIGURES if col != "margin"], heads
    assert page.query_selector("[data-testid=standings] [data-col=margin]") is None
    assert page.query_selector("[data-testid=standings] [data-col=strength]") is None
    assert page.query_selector("[data-testid=standings] [data-results]") is None
    assert page.query_selector("[data-testid=standings-luck]") is None
    assert text_of(app, "[data-testid=standings-order]").startswith("Ordered by points")
    assert page.query_selector("[data-testid=round-table] [data-col=luck_points]") is None
    assert page.query_selector("[data-testid=table-luck]") is None


def test_a_luck_adjusted_tournament_ranked_by_strength_shows_its_strength(
    app: App, api: httpx.Client
) -> None:
    tour = finished_tournament(
        api, places=4, rounds=2, standings_by="luck_adjusted", ranked_by="strength"
    )
    tid = tour["id"]
    for lang in ("en", "es"):  # one tournament, read in both languages
        open_tournament(app, tid, lang)
        assert text_of(app, "[data-testid=tournament-counting]") == WORDS[lang]["luck_strength"]
        setting = text_of(app, "[data-setting=standings] td")
        assert WORDS[lang]["luck_help"] in setting, setting
        assert WORDS[lang]["strength_help"] in setting, setting
        assert WORDS[lang]["margin_help"] not in setting, setting
        check_ranked_standings(app, api, tid, lang, "strength")
        if lang == "en":
            check_axe(app.page, "tournament (luck-adjusted, ranked by strength)")
            app.screenshots("tournament-strength-en")
