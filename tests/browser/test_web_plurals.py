"""Counted nouns follow the language's plural rules (`Intl.PluralRules`): "1 card" and
"2 cards" in English, "1 carta" and "2 cartas" in Spanish, on the rules page (the deck per
number of players, from the API) and on a table whose draw pile goes from 2 cards to 1."""

from __future__ import annotations

import re

import httpx

from tests.browser.web import BROWSER_GROUP, App, deck_game, hold_seat, wait_for

pytestmark = BROWSER_GROUP

# every counted noun of the English texts: the plural "s" iff the count is not 1
ENGLISH_COUNTED = re.compile(r"\b(\d+) (card|player|point|currency token|bust token|seat)(s?)\b")
FORMS = {
    "en": {"player": ("player", "players"), "card": ("card", "cards")},
    "es": {"player": ("jugador", "jugadores"), "card": ("carta", "cartas")},
}


def counted(lang: str, noun: str, n: int) -> str:
    one, other = FORMS[lang][noun]
    return f"{n} {one if n == 1 else other}"


def english_agrees(text: str) -> list[str]:
    """The counted nouns of `text` in the wrong form ("1 cards", "2 card")."""
    return [m[0] for m in ENGLISH_COUNTED.finditer(text) if (m[1] == "1") == bool(m[3])]


def choose_language(app: App, lang: str) -> None:
    app.page.select_option("#language", lang)
    app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")


def test_the_deck_sizes_say_1_player_and_2_players(app: App, api: httpx.Client) -> None:
    sizes = {int(k): v for k, v in api.get("/v1/rules").json()["deck_sizes"].items()}
    assert {1, 2} <= sizes.keys(), sizes
    app.goto("/rules", "rules")
    for lang in ("en", "es"):
        choose_language(app, lang)
        app.wait_screen("rules")
        items = app.page.eval_on_selector_all("ul.plain li", "els => els.map(e => e.textContent)")
        for players in (1, 2):
            want = f"{counted(lang, 'player', players)}: {counted(lang, 'card', sizes[players])}"
            assert want in items, (lang, want, items)
        if lang == "en":
            assert not english_agrees(" ".join(items)), items


def test_the_draw_pile_counts_2_cards_then_1_card(app: App, api: httpx.Client) -> None:
    game = deck_game(api, ["Ann"], ["R2", "R3", "R4"])
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    page = app.page
    pile = "[data-testid=draw-pile] strong"
    for lang in ("en", "es"):
        choose_language(app, lang)
        app.wait_screen("table")
        assert page.text_content(pile) == counted(lang, "card", 3)
    choose_language(app, "en")
    app.wait_screen("table")
    for left in (2, 1):
        page.click('[data-action=\'{"type":"draw"}\']')
        wait_for(lambda n=left: page.text_content(pile) == counted("en", "card", n), f"{left} left")
        assert not english_agrees(page.inner_text("body")), page.inner_text("body")
    choose_language(app, "es")
    app.wait_screen("table")
    assert page.text_content(pile) == counted("es", "card", 1)
    assert "Pila de descartes: 0 cartas" in page.inner_text("body")
