"""The documentation site (mkdocs.yml: docs/ built by MkDocs into service/static/site, which
the service serves at /static/site/index.html): it builds with every warning an error, its
API reference names every operation of the committed OpenAPI document, it reads nothing
from another origin, and the README stays short and leads to it.

The site is built here into a temporary directory, never into the checkout, by the same
`.venv/bin/mkdocs` that scripts/setup installs (docs/requirements.txt)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).parent / "mkdocs"
OPENAPI = ROOT / "openapi" / "openapi.json"
README = ROOT / "README.md"
SITE_URL = "/static/site/index.html"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `mkdocs build --strict` makes it, in a temporary directory."""
    assert MKDOCS.is_file(), (
        f"{MKDOCS} is missing: bash scripts/setup installs docs/requirements.txt"
    )
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    built = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stdout}{built.stderr}"
    return out


def operation_ids() -> list[str]:
    spec = json.loads(OPENAPI.read_text(encoding="utf-8"))
    items = [*spec["paths"].values(), *spec.get("webhooks", {}).values()]
    return [item[m]["operationId"] for item in items for m in METHODS if m in item]


def test_the_site_builds_with_its_pages(site: Path) -> None:
    for page in ("index.html", "getting-started.html", "rules.html", "api.html"):
        assert (site / page).is_file(), page
    # the service's static router maps no `foo/` to `foo/index.html`: every page is a file
    assert not (site / "rules").exists()
    assert 'href="reference.html"' in (site / "index.html").read_text(encoding="utf-8")


def test_the_api_reference_names_every_operation(site: Path) -> None:
    page = (site / "reference.html").read_text(encoding="utf-8")
    ids = operation_ids()
    assert len(ids) > 30, ids
    missing = [op for op in ids if f'id="{op}"' not in page]
    assert not missing, f"not in the API reference: {missing}"
    spec = json.loads(OPENAPI.read_text(encoding="utf-8"))
    for path in spec["paths"]:
        assert f"{path}</code>" in page, path


def test_no_page_loads_anything_from_another_origin(site: Path) -> None:
    """No web font, no CDN script or style: the pages work offline."""
    loaded = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']([^"']+)""")
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        remote = [url for url in loaded.findall(text) if re.match(r"^(https?:)?//", url)]
        assert not remote, f"{page.relative_to(site)} loads {remote}"
        assert "fonts.googleapis.com" not in text, page


def test_the_readme_is_short_and_leads_to_the_site() -> None:
    data = README.read_bytes()
    assert len(data) < 16_000, f"README.md is {len(data)} bytes: move detail into docs/"
    text = data.decode()
    assert SITE_URL in text
    assert "bash scripts/run" in text
    assert "bash scripts/test" in text
    assert "](docs/index.md)" in text
