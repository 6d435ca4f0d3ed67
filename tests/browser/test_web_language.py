"""The language menu: each language changes `html[lang]` and the visible texts, and the
choice survives a reload (localStorage["ten.lang"])."""

from __future__ import annotations

from tests.browser.web import BROWSER_GROUP, App

pytestmark = BROWSER_GROUP

LANGUAGES = ("id", "hy", "es", "gu")
LABELS = [
    "a[data-nav=lobby]",
    "a[data-nav=archive]",
    "a[data-nav=leaderboard]",
    "a[data-nav=rules]",
    "#create-submit",
    "label[for=create-name]",
]


def labels(app: App) -> list[str]:
    return [(app.page.text_content(selector) or "").strip() for selector in LABELS]


def test_switching_language_changes_the_page_and_survives_a_reload(app: App) -> None:
    app.goto("/", "lobby")
    page = app.page
    assert page.get_attribute("html", "lang") == "en"
    english = labels(app)
    assert all(english), english
    texts = {"en": page.inner_text("body")}
    for lang in LANGUAGES:
        page.select_option("#language", lang)
        page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
        app.wait_screen("lobby")
        now = labels(app)
        changed = [new for new, old in zip(now, english, strict=True) if new != old]
        assert len(changed) >= len(LABELS) - 1, f"{lang}: still English: {now}"
        texts[lang] = page.inner_text("body")
        assert texts[lang] not in [t for other, t in texts.items() if other != lang], lang
        assert app.storage("ten.lang") == lang
    app.reload("lobby")
    assert page.get_attribute("html", "lang") == "gu"
    assert page.input_value("#language") == "gu"
    assert labels(app) != english
