"""On a 360 px phone no screen is wider than the screen, in any language: nothing to scroll
sideways (a long option, a long word of another language, a row of buttons)."""

from __future__ import annotations

from tests.browser.web import BROWSER_GROUP, PHONE, WIDER, every_screen

pytestmark = BROWSER_GROUP


def test_no_screen_is_wider_than_a_phone(new_context, api) -> None:
    app = new_context(viewport=PHONE)
    wider = {}
    for lang, screen in every_screen(app, api):
        shown = app.page.evaluate(WIDER)
        assert shown["viewport"] == PHONE["width"], shown
        if shown["width"] > shown["viewport"] or shown["past"]:
            wider[lang, screen] = shown
    assert not wider, wider
