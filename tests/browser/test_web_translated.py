"""Every visible text follows the language: the skip link, the bots' levels and default names
("Bot 2", "bot (expert)"), and cards named in words where a sentence speaks of them (a
purchase's payment says "Red 1", never "R1")."""

from __future__ import annotations

import re

import httpx

from tests.browser.web import (
    BROWSER_GROUP,
    App,
    at_a_buy,
    deck_game,
    every_screen,
    hold_seat,
    play_actions,
    wait_for,
)

pytestmark = BROWSER_GROUP

LANGUAGES = ("id", "hy", "es", "gu")
CODE = re.compile(r"\b[RBOGW][1-9#]\b|\$\d")  # a card's API code in a text
NAMES = {"R1": "Red 1", "R2": "Red 2", "O1": "Orange 1"}


def choose_language(app: App, lang: str, screen: str) -> None:
    app.page.select_option("#language", lang)
    app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
    app.wait_screen(screen)


def bot_texts(app: App) -> list[str]:
    """The bot seats' headings (name and badges) on the table."""
    return app.page.eval_on_selector_all(
        "[data-testid=player]:not([data-seat='0']) h3", "els => els.map(e => e.textContent)"
    )


def test_skip_link_bot_names_and_levels_are_translated(app: App) -> None:
    app.goto("/", "lobby")
    app.create_table("Ann", ["expert", "basic"])
    page = app.page
    skip = "a.skip"
    english = {"skip": page.text_content(skip), "bots": bot_texts(app)}
    assert english["skip"] == "Skip to content"
    assert english["bots"][0].startswith("Bot 2")
    assert "bot (expert)" in english["bots"][0]
    assert english["bots"][1].startswith("Bot 3")
    assert "bot (basic)" in english["bots"][1]
    for lang in LANGUAGES:
        choose_language(app, lang, app.screen())
        shown = {"skip": page.text_content(skip), "bots": bot_texts(app)}
        assert shown["skip"], lang
        assert shown["skip"] != english["skip"], lang
        for text in shown["bots"]:
            assert not re.search(r"\b(expert|basic)\b", text), (lang, text)
        if lang not in {"es", "id"}:  # "Bot 2" is Spanish and Indonesian too
            assert not any(text.startswith("Bot ") for text in shown["bots"]), (lang, shown)


def test_a_payment_names_its_cards_in_words(app: App, api: httpx.Client) -> None:
    game, view = at_a_buy(api)
    buys = [a for a in view["legal_actions"] if a["type"] == "buy" and a["payment"]["cards"]]
    assert [b["card"] for b in buys] == ["B9"], view["legal_actions"]
    spent = buys[0]["payment"]["cards"]
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    control = app.page.locator(""".buys button[data-action*='"card":"B9"']""")
    text = control.text_content() or ""
    for card in spent:
        assert NAMES[card] in text, (card, text)
    assert not CODE.search(text), text
    english = text
    for lang in LANGUAGES:
        choose_language(app, lang, "table")
        shown = wait_for(control.text_content, "the buy control")
        assert not CODE.search(shown), (lang, shown)
        assert shown != english, lang


AUCTIONED = {"en": "Up for auction: Wild card 5", "es": "En subasta: Comodín 5"}


def test_the_auction_names_its_card_in_words(app: App, api: httpx.Client) -> None:
    game = deck_game(api, ["Ann"], ["W5", "R2", "R3"])
    view = play_actions(api, game, [{"type": "draw"}])
    assert view["auction"]["card"] == "W5", view
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    line = app.page.locator("[data-testid=auction-card]")
    for lang, words in AUCTIONED.items():
        choose_language(app, lang, "table")
        assert line.inner_text().startswith(f"{words} "), (lang, line.inner_text())
        assert line.locator(".card").get_attribute("data-card") == "W5"
    for lang in LANGUAGES:
        choose_language(app, lang, "table")
        assert not CODE.search(line.inner_text()), (lang, line.inner_text())


# the texts no language changes: the game's name, a bot's default name where the language
# writes it alike (es, id: "Bot 2"); a player's name is bidi-isolated (FSI ... PDI) and left out
SAME_IN = {"TEN": LANGUAGES, "Bot 2": ("es", "id"), "Bot 3": ("es", "id")}
WORDS = re.compile(r"[A-Za-z]{3,}")


def screen_lines(app: App) -> set[str]:
    """The lines of text the screen shows (the main region and an open dialog)."""
    texts = app.page.eval_on_selector_all("#main, dialog[open]", "els => els.map(e => e.innerText)")
    return {line.strip() for text in texts for line in text.splitlines() if line.strip()}


def english_left(lines: set[str], english: set[str], lang: str) -> list[str]:
    """The lines of `lang`'s screen that are English words as the English screen shows them."""
    return sorted(
        line
        for line in lines & english
        if WORDS.search(line) and "\u2068" not in line and lang not in SAME_IN.get(line, ())
    )


def test_no_screen_keeps_an_english_line(app: App, api: httpx.Client) -> None:
    shown = {(lang, screen): screen_lines(app) for lang, screen in every_screen(app, api)}
    for (lang, screen), lines in shown.items():
        english = shown["en", screen]
        assert english, screen
        if lang != "en":
            assert not english_left(lines, english, lang), (lang, screen)


# a seat's tokens as a list: the language's word before the last item (Chromium's Intl has no
# Armenian list data: English's comma would stand there; the client brings Armenian's "և")
TOKENS = {
    "en": "5 currency tokens, 0 bust tokens",
    "es": "5 fichas de moneda y 0 fichas de busto",
    "hy": "5 արժույթի նշան և 0 կիսանդրի նշան",
}


def test_a_list_is_joined_as_the_language_joins_it(app: App, api: httpx.Client) -> None:
    game = deck_game(api, ["Ann"], ["R2", "R3"])
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    tokens = app.page.locator("[data-testid=player][data-seat='0'] .tokens")
    for lang, text in TOKENS.items():
        choose_language(app, lang, "table")
        assert tokens.inner_text().strip() == f"¤ {text}", (lang, tokens.inner_text())
