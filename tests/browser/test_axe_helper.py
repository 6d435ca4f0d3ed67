"""The axe helper can fail: a page with serious and critical violations is refused, each one
named with its elements; a clean page passes; moderate ones alone do not block."""

from __future__ import annotations

import pytest

from tests.browser.axe import axe_violations, check_axe
from tests.browser.web import BROWSER_GROUP

pytestmark = BROWSER_GROUP

BAD = """<!doctype html><html lang="en"><head><title>bad</title></head><body><main>
<h1>Bad</h1><img src="data:,"><button></button>
<p style="color:#777;background:#888">low contrast</p></main></body></html>"""
GOOD = """<!doctype html><html lang="en"><head><title>good</title></head><body><main>
<h1>Good</h1><img src="data:," alt="a card"><button>Draw</button><p>fine</p></main></body></html>"""
MODERATE = """<!doctype html><html lang="en"><head><title>m</title></head><body>
<div><p>no landmark, no heading</p></div></body></html>"""


def test_axe_refuses_serious_and_critical_violations_and_lists_them(browser) -> None:
    page = browser.new_page()
    try:
        page.set_content(BAD)
        with pytest.raises(AssertionError) as failed:
            check_axe(page, "bad")
        text = str(failed.value)
        for rule in ("image-alt (critical)", "button-name (critical)", "color-contrast (serious)"):
            assert rule in text, text
        assert "<button></button>" in text

        page.set_content(GOOD)
        check_axe(page, "good")

        page.set_content(MODERATE)
        assert axe_violations(page, ("moderate",)), "axe found nothing moderate to ignore"
        check_axe(page, "moderate only")
    finally:
        page.close()
