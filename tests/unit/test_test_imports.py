"""No test module imports another one: what tests share lives in tests/support (and
tests/servers.py), read from the source with `ast` (nothing is imported).

Refused, in any spelling (`import`, `from ... import`, relative): importing a `test_*` module
or a `conftest` (pytest loads those itself; fixtures reach tests through it), and importing a
helper of another tier (tests/<tier>/<helper>.py from outside tests/<tier>/): a helper two
tiers share belongs in the support package."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.servers import ROOT

TESTS = ROOT / "tests"
SHARED = ("tests.support", "tests.servers")  # what every tier may import


def module_name(path: Path, tests: Path) -> str:
    parts = path.relative_to(tests.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(node: ast.Import | ast.ImportFrom, importer: str, package: bool) -> list[str]:
    """The modules (or `module.name`, for a `from` import) a statement names, absolute."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parent = importer.split(".")
        parent = parent if package else parent[:-1]
        parent = parent[: len(parent) - (node.level - 1)]
        base = ".".join([*parent, *([base] if base else [])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def refused(name: str, importer: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "tests":
        return None
    if any(part.startswith("test_") or part == "conftest" for part in parts[1:]):
        return "a test module or conftest"
    if len(parts) > 2 and not name.startswith(SHARED):
        tier = parts[1]
        if importer.split(".")[:2] != ["tests", tier]:
            return f"a helper of the {tier} tier (move it to tests/support)"
    return None


def problems(tests: Path) -> list[str]:
    found = []
    for path in sorted(tests.rglob("*.py")):
        importer = module_name(path, tests)
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in imported(node, importer, path.name == "__init__.py"):
                why = refused(name, importer)
                if why:
                    where = f"{path.relative_to(tests.parent)}:{node.lineno}"
                    found.append(f"{where} imports {name}: {why}")
                    break  # one line per statement
    return sorted(set(found))


def test_no_test_module_imports_another_test_module_or_another_tiers_helper() -> None:
    assert len(list(TESTS.rglob("test_*.py"))) > 50  # the scan sees the whole tree
    assert problems(TESTS) == []


BAD = {
    "unit/test_a.py": "from tests.integration.test_store_contract import new_record\n",
    "unit/test_b.py": "import tests.e2e.test_events_stream\n",
    "unit/test_c.py": "from tests.integration import test_store_contract as contract\n",
    "e2e/test_d.py": "from . import test_events_stream\n",
    "e2e/test_e.py": "from .test_events_stream import Stream\n",
    "e2e/test_f.py": "def f():\n    from tests.conftest import run_server\n",
    "faults/test_g.py": "from tests.scaleout.helpers import replica_env\n",
    "support/helper.py": "from tests.e2e.test_secrets import stored_record\n",
}
GOOD = {
    "unit/test_ok.py": "from tests.support.api import bearer\nfrom tests.servers import ROOT\n",
    "browser/test_ok.py": "from tests.browser.web import App\nfrom .web import wait_for\n",
    "browser/web.py": "import json\nfrom tests.support import api\n",
    "e2e/test_ok.py": "import tests.support.streams\nfrom domain.game.engine import apply\n",
}


def test_the_scan_refuses_every_spelling_of_a_test_module_import(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    for name, source in {**BAD, **GOOD}.items():
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text(source)
    for package in {tests, *((tests / name).parent for name in {**BAD, **GOOD})}:
        (package / "__init__.py").touch()
    found = problems(tests)
    flagged = {line.split(":")[0] for line in found}
    assert flagged == {f"tests/{name}" for name in BAD}, found
    assert any("faults/test_g.py:1 imports tests.scaleout.helpers" in line for line in found)
    assert any("test_events_stream: a test module" in line for line in found), found
