"""Dates are written in the page's language, not the browser's locale: on an English (en-US)
browser a Spanish page says when a past game ended as Spanish writes it ("2 de diciembre de
2026, 10:01"), never "12/2/2026, 10:01:43 AM"; an Armenian page, where Chromium's `Intl`
has no Armenian, writes the day as digits rather than in English."""

from __future__ import annotations

import re
import secrets

import httpx

from tests.browser.web import BROWSER_GROUP, App, archived_game

pytestmark = BROWSER_GROUP

MONTHS = {
    "en": "January February March April May June July August September October November December",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
}
US_NUMERIC = re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b")  # en-US's numeric date: the browser's locale
TWELVE_HOUR = re.compile(r"\b\d{1,2}:\d{2}\s?[AP]M\b")


def local_parts(app: App, iso: str) -> dict[str, int]:
    """The moment's date and time of day in the browser's time zone (no formatting)."""
    return app.page.evaluate(
        """(iso) => { const d = new Date(iso);
            return { y: d.getFullYear(), m: d.getMonth(), d: d.getDate(),
                     h: d.getHours(), min: d.getMinutes() }; }""",
        iso,
    )


def ended(app: App, game_id: str) -> str:
    return app.page.text_content(f"[data-game-id='{game_id}'] time") or ""


def test_the_archive_writes_the_end_of_a_game_in_the_pages_language(
    app: App, api: httpx.Client
) -> None:
    game_id = archived_game(api, f"web-{secrets.token_hex(4)}")
    finished_at = api.get(f"/v1/archive/games/{game_id}").json()["finished_at"]
    app.goto("/archive", "archive")
    assert app.page.evaluate("navigator.language") == "en-US"
    at = local_parts(app, finished_at)
    month = {lang: names.split()[at["m"]] for lang, names in MONTHS.items()}

    english = ended(app, game_id)
    assert f"{month['en']} {at['d']}, {at['y']}" in english, english
    assert TWELVE_HOUR.search(english), english

    shown = {"en": english}
    for lang in ("es", "gu", "hy", "id"):
        app.page.select_option("#language", lang)
        app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
        app.wait_screen("archive")
        shown[lang] = ended(app, game_id)
        assert not US_NUMERIC.search(shown[lang]), (lang, shown[lang])
        assert month["en"] not in shown[lang], (lang, shown[lang])
        assert str(at["y"]) in shown[lang], (lang, shown[lang])
    spanish = shown["es"]
    assert f"{at['d']} de {month['es']} de {at['y']}" in spanish, spanish
    assert f"{at['h']}:{at['min']:02d}" in spanish, spanish  # 24-hour clock
    assert not TWELVE_HOUR.search(spanish), spanish
    assert len(set(shown.values())) == len(shown), shown
