"""The full rules as a page of the web client: service/static/docs/rules.html is what
clients/web/docs/render.py makes of docs/rules.md (drift), it keeps every anchor its links
and the decisions' `#d1`.. name, it loads nothing but its own stylesheet from this origin
(nothing the web client's Content-Security-Policy refuses: no script, no inline style), and
the service serves it."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from litestar.testing import TestClient

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "clients" / "web" / "docs" / "render.py"
STATIC = ROOT / "service" / "static"
PAGE = STATIC / "docs" / "rules.html"
STYLES = STATIC / "docs" / "rules.css"
SOURCE = ROOT / "docs" / "rules.md"


class Elements(HTMLParser):
    """Every start tag of a page with its attributes, and every id."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    @property
    def ids(self) -> list[str]:
        return [a["id"] for _, a in self.tags if "id" in a]


def test_the_committed_page_is_rendered_from_the_rules(tmp_path: Path) -> None:
    fresh = tmp_path / "rules.html"
    result = subprocess.run(
        [sys.executable, str(RENDER), str(fresh)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    stale = "service/static/docs/rules.html is stale: run clients/web/docs/render.py and commit it"
    assert fresh.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8"), stale


def test_every_anchor_is_there_and_every_link_stays_on_the_page() -> None:
    page = Elements(PAGE.read_text(encoding="utf-8"))
    ids = page.ids
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    decisions = sorted(set(re.findall(r'<a id="(d\d+)">', SOURCE.read_text(encoding="utf-8"))))
    assert len(decisions) >= 20, decisions
    assert set(decisions) <= set(ids)
    headings = [a.get("id") for tag, a in page.tags if tag in {"h1", "h2", "h3"}]
    assert headings
    assert all(headings), headings
    assert {"3-a-turn", "35-auction", "error-codes", "rule-options"} <= set(headings)
    links = [a["href"] for tag, a in page.tags if tag == "a" and "href" in a]
    inside = [h.removeprefix("#") for h in links if h.startswith("#")]
    assert "d1" in inside
    assert set(inside) <= set(ids), sorted(set(inside) - set(ids))
    # the one link away leads back to the web client's rules screen
    assert [h for h in links if not h.startswith("#")] == ["/#/rules"]


def test_the_page_loads_nothing_the_policy_refuses() -> None:
    page = Elements(PAGE.read_text(encoding="utf-8"))
    tags = [tag for tag, _ in page.tags]
    for refused in ("script", "style", "iframe", "object", "embed", "img", "base", "form"):
        assert refused not in tags, refused
    for tag, attrs in page.tags:
        assert "style" not in attrs, (tag, attrs)
        assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
    loaded = [a["href"] for tag, a in page.tags if tag == "link"]
    assert loaded == ["data:,", "/static/docs/rules.css"], loaded
    css = STYLES.read_text(encoding="utf-8")
    assert "@import" not in css
    assert "url(" not in css


def test_the_service_serves_the_page_and_its_stylesheet() -> None:
    from service.entrypoints.api.app import create_app

    with TestClient(create_app()) as client:
        page = client.get("/static/docs/rules.html")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert page.text == PAGE.read_text(encoding="utf-8")
        styles = client.get("/static/docs/rules.css")
        assert styles.status_code == 200
        assert styles.headers["content-type"].startswith("text/css")
