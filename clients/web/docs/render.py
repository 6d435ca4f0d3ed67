"""Renders docs/rules.md (the rules as this service implements them) to one HTML page that the
service serves beside the web client, service/static/docs/rules.html (committed; the client's
rules screen links it, and tests/contract/test_rules_page.py fails when it is stale).

    .venv/bin/python clients/web/docs/render.py [OUTPUT FILE]

CommonMark with tables (markdown-it-py), every heading of levels 1-3 with its GitHub-style
anchor (mdit-py-plugins), so `#3-a-turn` works as it does on the forge; the decisions keep
their own `<a id="d1">` anchors. The page loads nothing but its stylesheet beside it (the
web client's Content-Security-Policy holds for it: no script, no inline style). A link to
another document of docs/ (api.md), which the service does not serve, keeps its text only.
The build needs the dev extras; nothing here runs when the service runs.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "docs" / "rules.md"
OUT = ROOT / "service" / "static" / "docs" / "rules.html"
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>{title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/docs/rules.css">
</head>
<body>
<nav><a href="/#/rules">TEN</a></nav>
<main id="main">
{body}</main>
</body>
</html>
"""


def unlink_other_documents(tokens: list[Token]) -> None:
    """Drops the links that leave the page (their text stays); only `#...` links remain."""
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        kept: list[Token] = []
        dropped: list[bool] = []  # one per open link: whether it was dropped
        for child in token.children:
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                dropped.append(not href.startswith("#"))
                if dropped[-1]:
                    continue
            elif child.type == "link_close" and dropped.pop():
                continue
            kept.append(child)
        token.children = kept


def render(markdown: str) -> str:
    md = MarkdownIt("commonmark").enable("table").use(anchors_plugin, max_level=3)
    tokens = md.parse(markdown)
    unlink_other_documents(tokens)
    titles = [t for i, t in enumerate(tokens[1:]) if tokens[i].type == "heading_open"]
    title = titles[0].content if titles else "TEN"
    return PAGE.format(title=html.escape(title), body=md.renderer.render(tokens, md.options, {}))


def main(out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(SOURCE.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
