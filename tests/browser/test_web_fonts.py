"""The client brings its own Gujarati and Armenian faces (subsets of Noto Sans, OFL, served
from /static/app/fonts): in this headless Chromium, whatever fonts the machine has, a Gujarati
and an Armenian word are drawn with the bundled face (loaded from this origin, named only by
its bundled family) and not as the fallback's boxes."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.web import BROWSER_GROUP, App

pytestmark = BROWSER_GROUP

WORDS = {"gu": ("TEN Gujarati", "ગુજરાતી"), "hy": ("TEN Armenian", "Հայերեն")}
MEASURE = """async ([family, text]) => {
    const loaded = await document.fonts.load(`32px "${family}"`, text);
    const canvas = document.createElement("canvas").getContext("2d");
    const width = (font, what) => { canvas.font = font; return canvas.measureText(what).width; };
    const bundled = `32px "${family}", monospace`;
    return {
        faces: loaded.map((f) => [f.family.replace(/"/g, ""), f.status]),
        check: document.fonts.check(`32px "${family}"`, text),
        bundled: width(bundled, text),
        fallback: width("32px monospace", text),
        // as many private-use characters: boxes (.notdef) in any font
        boxes: width(bundled, "\\uE000".repeat([...text].length)),
    };
}"""


@pytest.mark.parametrize("lang", sorted(WORDS))
def test_the_bundled_face_draws_the_script(app: App, api: httpx.Client, lang: str) -> None:
    family, word = WORDS[lang]
    fonts: list[str] = []
    app.page.on(
        "requestfinished", lambda r: fonts.append(r.url) if r.resource_type == "font" else None
    )
    app.goto("/", "lobby")
    app.page.select_option("#language", lang)
    app.page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
    app.wait_screen("lobby")
    shown = app.page.evaluate(MEASURE, [family, word])
    print(lang, shown)  # the widths, for the record (-s)
    assert shown["faces"], shown  # the bundled family has a face for the text
    assert all(face == [family, "loaded"] for face in shown["faces"]), shown
    assert shown["check"], shown
    assert shown["bundled"] > 0, shown
    assert shown["bundled"] != shown["fallback"], shown  # not the fallback's rendering
    assert shown["bundled"] != shown["boxes"], shown  # not boxes
    assert any(url.startswith(f"{app.base}/static/app/fonts/") for url in fonts), fonts
    for url in {u for u in fonts if u.startswith(app.base)}:
        response = httpx.get(url)
        assert response.status_code == 200, url
        assert response.headers["content-type"] == "font/woff2", response.headers
