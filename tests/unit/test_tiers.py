"""The test tiers (tests/support/tiers.py): every test module sits in a tier folder, the
markers pyproject.toml declares are the tiers' (and pytest-xdist's group), no module marks
a tier by itself, and every test this session collected carries its folder's marker alone.
And tests/unit mirrors the code: a unit test module sits in tests/unit/<package path>/ (as
tests/unit/service/lobby/ for service/lobby/), or at the top of tests/unit when it checks
the repository as a whole (the layers, the docs, the tests' own rules)."""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.servers import ROOT
from tests.support.tiers import TESTS, TIERS, mark_tiers, tier_of


def test_every_test_module_sits_in_a_tier_folder() -> None:
    modules = sorted(TESTS.rglob("test_*.py"))
    assert len(modules) > 150  # the scan sees the whole tree
    assert [str(path.relative_to(ROOT)) for path in modules if tier_of(path) is None] == []
    assert sorted(path.name for path in TESTS.iterdir() if path.name in TIERS) == sorted(TIERS)


def test_the_markers_declared_are_the_tiers_and_xdist_group() -> None:
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    options = pytest_options["ini_options"]
    declared = [line.split(":")[0].split("(")[0] for line in options["markers"]]
    assert sorted(declared) == sorted([*TIERS, "xdist_group"])
    assert "--strict-markers" in options["addopts"].split()


def marks_of_tiers(source: str) -> list[int]:
    """The lines of a module that name a tier's marker (`pytest.mark.unit`, `mark.e2e`, ...)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr in TIERS
        and isinstance(node.value, ast.Attribute | ast.Name)
        and (node.value.attr if isinstance(node.value, ast.Attribute) else node.value.id) == "mark"
    )


def test_no_module_marks_a_tier_by_itself() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if (lines := marks_of_tiers(path.read_text()))
    }
    assert found == {}


def test_the_scan_sees_every_spelling_of_a_tier_mark() -> None:
    assert marks_of_tiers("import pytest\npytestmark = pytest.mark.unit\n") == [2]
    assert marks_of_tiers("from pytest import mark\n@mark.e2e\ndef test(): pass\n") == [2]
    assert marks_of_tiers("pytestmark = [pytest.mark.xdist_group('x'), pytest.mark.faults]") == [1]
    assert marks_of_tiers("pytestmark = pytest.mark.xdist_group('unit')\nunit = 1\n") == []


def test_every_collected_test_carries_its_folders_tier_alone(
    request: pytest.FixtureRequest,
) -> None:
    items = request.session.items
    assert request.node in items
    for item in items:
        tier = tier_of(item.path)
        if tier is None:  # outside tests/: a pytest a test runs of its own
            assert not item.path.resolve().is_relative_to(TESTS), item.nodeid
            continue
        assert [mark.name for mark in item.iter_markers() if mark.name in TIERS] == [tier]


UNIT = TESTS / "unit"
DATA = frozenset({"golden"})  # folders of data files read by the tests beside them


def misplaced(unit: Path, root: Path) -> list[str]:
    """The unit test modules (and folders) of `unit` that name no package of `root`."""
    found = []
    for folder in sorted(path for path in unit.rglob("*") if path.is_dir()):
        relative = folder.relative_to(unit)
        if folder.name in DATA or folder.name == "__pycache__" or DATA & set(relative.parts):
            continue
        if not (root / relative / "__init__.py").is_file():
            found.append(f"{folder.relative_to(root)}/: no package {relative}")
        elif not (folder / "__init__.py").is_file():
            found.append(f"{folder.relative_to(root)}/: no __init__.py")
    for module in sorted(unit.rglob("test_*.py")):
        if module.parent.name in DATA:
            found.append(f"{module.relative_to(root)}: a test module in a data folder")
    return found


def test_every_unit_test_module_sits_in_a_folder_named_after_a_package() -> None:
    assert len(list(UNIT.rglob("test_*.py"))) > 50
    assert misplaced(UNIT, ROOT) == []


def test_a_unit_folder_that_names_no_package_is_refused(tmp_path: Path) -> None:
    for package in ("domain/game", "service/lobby", "infra"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").touch()
    (tmp_path / "domain" / "__init__.py").touch()
    (tmp_path / "service" / "__init__.py").touch()
    unit = tmp_path / "tests" / "unit"
    for folder in ("domain/game/golden", "service/lobby", "service/lobbies", "infra/stores"):
        (unit / folder).mkdir(parents=True)
    for folder in ("domain", "domain/game", "service", "service/lobby", "service/lobbies"):
        (unit / folder / "__init__.py").touch()
    (unit / "domain" / "game" / "golden" / "test_data.py").touch()
    assert misplaced(unit, tmp_path) == [
        "tests/unit/infra/: no __init__.py",
        "tests/unit/infra/stores/: no package infra/stores",
        "tests/unit/service/lobbies/: no package service/lobbies",
        "tests/unit/domain/game/golden/test_data.py: a test module in a data folder",
    ]


@dataclass
class FakeItem:
    path: Path
    marks: list[str] = field(default_factory=list)

    @property
    def nodeid(self) -> str:
        return str(self.path)

    def iter_markers(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(name=name) for name in self.marks]

    def add_marker(self, marker: str) -> None:
        self.marks.append(marker)


def test_a_test_in_no_tier_folder_or_marked_by_itself_is_refused(tmp_path: Path) -> None:
    good = FakeItem(TESTS / "unit" / "domain" / "game" / "test_a.py", ["xdist_group"])
    e2e = FakeItem(TESTS / "e2e" / "test_b.py")
    loose = FakeItem(TESTS / "test_c.py")
    unknown = FakeItem(TESTS / "support" / "test_d.py")
    other = FakeItem(TESTS / "deploy" / "test_e.py", ["unit"])
    again = FakeItem(TESTS / "faults" / "test_f.py", ["faults"])
    outside = FakeItem(tmp_path / "test_g.py")
    wrong = mark_tiers([good, e2e, loose, unknown, other, again, outside])
    assert good.marks == ["xdist_group", "unit"]
    assert e2e.marks == ["e2e"]
    assert outside.marks == []
    assert [line.split(":")[0] for line in wrong] == [
        loose.nodeid,
        unknown.nodeid,
        other.nodeid,
        again.nodeid,
    ]
    assert "marks itself unit (its folder gives deploy)" in wrong[2]
