"""On a 360 px phone no screen is wider than the screen, in any language: nothing to scroll
sideways (a long option, a long word of another language, a row of buttons)."""

from __future__ import annotations

from tests.browser.web import BROWSER_TIER, PHONE, every_screen

pytestmark = BROWSER_TIER

WIDER = """() => ({
    width: document.documentElement.scrollWidth,
    viewport: innerWidth,
    // the innermost elements that reach past the right edge (+1: sub-pixel rounding)
    past: [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
        .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > innerWidth + 1))
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}: ${(e.textContent || "").trim().slice(0, 50)}`),
})"""


def test_no_screen_is_wider_than_a_phone(new_context, api) -> None:
    app = new_context(viewport=PHONE)
    wider = {}
    for lang, screen in every_screen(app, api):
        shown = app.page.evaluate(WIDER)
        assert shown["viewport"] == PHONE["width"], shown
        if shown["width"] > shown["viewport"] or shown["past"]:
            wider[lang, screen] = shown
    assert not wider, wider
