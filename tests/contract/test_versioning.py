"""The API's version (`info.version`) is the one the changelog, the released contracts and the
TypeScript SDK name (docs/versioning.md: releasing a version)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.servers import ROOT
from tests.support.typescript import CLIENT, OPENAPI, run

CHANGELOG = ROOT / "CHANGELOG.md"
RELEASE_HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\S+))?$", re.MULTILINE)


def api_version() -> str:
    return json.loads(OPENAPI.read_text(encoding="utf-8"))["info"]["version"]


def test_the_changelog_has_a_section_for_the_api_version() -> None:
    sections = {
        m["version"]: m["date"]
        for m in RELEASE_HEADING.finditer(CHANGELOG.read_text(encoding="utf-8"))
    }
    version = api_version()
    assert version in sections, f"CHANGELOG.md has no `## [{version}] - <date>` section"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", sections[version] or ""), sections
    assert "Unreleased" in sections, "CHANGELOG.md keeps an `## [Unreleased]` section"
    assert next(iter(sections)) == "Unreleased", "Unreleased comes first"


def test_the_api_version_is_released() -> None:
    version = api_version()
    released = ROOT / "openapi" / "released" / f"{version}.json"
    assert released.exists(), f"copy openapi/openapi.json to {released.relative_to(ROOT)}"


def test_the_sdk_version_is_the_api_version() -> None:
    version = api_version()
    package = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((CLIENT / "package-lock.json").read_text(encoding="utf-8"))
    stale = "clients/ts is stale: run `npm run generate --prefix clients/ts`"
    assert package["version"] == version, stale
    assert lock["version"] == lock["packages"][""]["version"] == version, stale
    assert "info.version" in package["scripts"]["postgenerate"]


def test_generating_the_sdk_takes_the_api_version(tmp_path: Path) -> None:
    """`npm run generate`'s last step, on a copy of the client beside a document of another
    version: package.json and its lock take that version."""
    if shutil.which("npm") is None:
        pytest.fail("npm is not installed: the SDK's generation needs Node 20+ and npm")
    client = tmp_path / "clients" / "ts"
    client.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(CLIENT / name, client)
    document = json.loads(OPENAPI.read_text(encoding="utf-8"))
    document["info"]["version"] = "3.2.1"
    (tmp_path / "openapi").mkdir()
    (tmp_path / "openapi" / "openapi.json").write_text(json.dumps(document), encoding="utf-8")
    result = run(["npm", "run", "--silent", "postgenerate"], cwd=client)
    assert result.returncode == 0, result.stdout + result.stderr
    package = json.loads((client / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((client / "package-lock.json").read_text(encoding="utf-8"))
    assert package["version"] == lock["version"] == lock["packages"][""]["version"] == "3.2.1"
