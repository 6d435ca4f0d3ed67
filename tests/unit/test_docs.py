"""The project's own documentation (docs/): every problem code and every rule option is
documented with a link to the rule or decision it enforces, every webhook type and every
job queue is named in the row of docs/configuration.md that configures them, and no link in
README.md or docs/ is dead or points outside the checkout (a clone has no ../shared)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import msgspec
import pytest

from domain.game.errors import RULE_ERROR_CODES
from domain.game.model import Rules
from service.core.errors import SERVICE_ERROR_CODES
from service.entrypoints.api.problems import HTTP_CODES, RULE_STATUS, SERVICE_STATUS
from service.jobs.worker import QUEUES
from service.reactions.webhook_payloads import WEBHOOK_PAYLOADS
from tests.servers import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]

# every code a problem document can carry: the engine's and the use cases' codes, the
# statuses' codes of the HTTP layer, and its fallback for any other status
# (`service.entrypoints.api.problems.from_http_exception`)
CATALOGUE = sorted(
    {
        *RULE_ERROR_CODES,
        *SERVICE_ERROR_CODES,
        *SERVICE_STATUS,
        *RULE_STATUS,
        *HTTP_CODES.values(),
        "http_error",
    }
)
OPTIONS = sorted(field.name for field in msgspec.structs.fields(Rules))

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
EXPLICIT_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def prose(text: str) -> str:
    """The text without code blocks (their brackets are not links)."""
    return FENCE.sub("", text)


def links(text: str) -> list[str]:
    """The targets of the Markdown links of `text` (outside code)."""
    return LINK.findall(INLINE_CODE.sub("``", prose(text)))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation other than `-` and `_`
    dropped, spaces to `-`."""
    text = re.sub(r"[`*_]{1,2}(\S(?:.*?\S)?)[`*_]{1,2}", r"\1", heading)  # emphasis, code
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = prose(path.read_text())
    return set(EXPLICIT_ANCHOR.findall(text)) | {slug(h) for h in HEADING.findall(text)}


def resolve(page: Path, target: str) -> tuple[Path, str] | None:
    """The file and anchor a relative link names (None for an absolute URL or mail)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None
    path, _, fragment = target.partition("#")
    file = (page.parent / unquote(path)).resolve() if path else page
    return file, unquote(fragment)


def dead(page: Path, target: str) -> str | None:
    """Why a link of `page` does not work, or None."""
    found = resolve(page, target)
    if found is None:
        return None
    file, fragment = found
    if not file.is_relative_to(ROOT):
        return f"{target} leaves the checkout"
    if not file.exists():
        return f"{target}: no such file"
    if fragment and file.suffix == ".md" and fragment not in anchors(file):
        return f"{target}: {file.name} has no anchor #{fragment}"
    return None


def rows_naming(name: str) -> list[tuple[Path, str]]:
    """The table rows of docs/ whose first cell is `name`."""
    first_cell = re.compile(rf"^\|\s*`{re.escape(name)}`\s*\|", re.MULTILINE)
    return [
        (page, line)
        for page in sorted(DOCS.glob("*.md"))
        for line in prose(page.read_text()).splitlines()
        if first_cell.match(line)
    ]


def test_the_docs_exist_and_the_catalogue_is_read() -> None:
    assert (DOCS / "rules.md").is_file()
    assert (DOCS / "api.md").is_file()
    assert {"not_your_turn", "game_not_found", "invalid_request"} <= set(CATALOGUE)
    assert "perfect_bonus" in OPTIONS


@pytest.mark.parametrize(
    ("kind", "name"), [("code", c) for c in CATALOGUE] + [("option", o) for o in OPTIONS]
)
def test_documented_with_a_working_link_to_what_it_enforces(kind: str, name: str) -> None:
    rows = rows_naming(name)
    assert rows, f"the {kind} `{name}` has no row in a table of docs/"
    for page, row in rows:
        targets = links(row)
        assert any("#" in t for t in targets), (
            f"{page.name}: the row of `{name}` links no rule or decision: {row}"
        )
        problems = [why for t in targets if (why := dead(page, t))]
        assert not problems, f"{page.name}: the row of `{name}`: {problems}"


def setting_row(name: str) -> str:
    """The row of docs/configuration.md's tables that documents the setting `name`."""
    rows = [
        line
        for line in prose((DOCS / "configuration.md").read_text()).splitlines()
        if line.startswith(f"| `{name}` |")
    ]
    assert len(rows) == 1, f"docs/configuration.md has no row of {name} (or several)"
    return rows[0]


@pytest.mark.parametrize(
    ("setting", "name"),
    [("TEN_WEBHOOK_URLS", kind) for kind in sorted(WEBHOOK_PAYLOADS)]
    + [("TEN_JOB_WORKERS", queue) for queue in QUEUES],
)
def test_every_webhook_type_and_queue_is_named_where_it_is_configured(
    setting: str, name: str
) -> None:
    """Each webhook type, in code font, in the row of TEN_WEBHOOK_URLS; each job queue, as a
    word, in the row of TEN_JOB_WORKERS."""
    named = f"`{name}`" if setting == "TEN_WEBHOOK_URLS" else rf"(?<![\w`-]){name}(?![\w`-])"
    assert re.search(named, setting_row(setting)), f"the {setting} row omits {name}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_dead_link_and_none_outside_the_checkout(page: Path) -> None:
    text = page.read_text()
    assert "../shared" not in text, f"{page.name} points into ../shared, which a clone lacks"
    targets = links(text)
    assert targets, f"{page.name} has no links to check"
    problems = [why for t in targets if (why := dead(page, t))]
    assert not problems, problems


def test_every_decision_is_marked_with_its_own_anchor() -> None:
    text = prose((DOCS / "rules.md").read_text())
    marked = re.findall(r'<a id="(d\d+)"></a>\*\*Decision D(\d+)\b', text)
    assert marked, "docs/rules.md marks no decision"
    assert all(anchor == f"d{number}" for anchor, number in marked), marked
    numbers = [int(n) for _, n in marked]
    assert numbers == list(range(1, len(numbers) + 1)), f"decisions not numbered 1..n: {numbers}"


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("../shared/docs/rules.md", "leaves the checkout"),
        ("docs/missing.md", "no such file"),
        ("docs/rules.md#no-such-rule", "no anchor"),
    ],
)
def test_the_link_check_finds_bad_links(target: str, why: str) -> None:
    problem = dead(ROOT / "README.md", target)
    assert problem is not None
    assert why in problem


def test_the_link_check_accepts_anchors_of_both_kinds() -> None:
    assert dead(ROOT / "README.md", "docs/rules.md#d1") is None  # an explicit <a id>
    assert dead(ROOT / "README.md", "docs/rules.md#34-buy-phase") is None  # a heading
    assert slug("3.4 Buy phase") == "34-buy-phase"
    assert slug("Tables: the lobby") == "tables-the-lobby"
