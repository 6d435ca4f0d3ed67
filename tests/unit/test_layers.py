"""The import-linter contracts of pyproject.toml hold on this tree, and refuse a tree where the
application core imports an adapter (or where the layers are crossed upwards): each run on a
copy of the packages in a temporary directory, the same `lint-imports` CI runs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.servers import ROOT

LINT = Path(sys.executable).with_name("lint-imports")


def lint(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for package in ("domain", "service", "infra"):
        shutil.copytree(
            ROOT / package,
            tmp_path / package,
            ignore=shutil.ignore_patterns("static", "__pycache__"),
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_import(path: Path, line: str) -> None:
    text = path.read_text()
    head, _, rest = text.partition("from __future__ import annotations\n")
    path.write_text(f"{head}from __future__ import annotations\n{line}\n{rest}")


def test_the_tree_keeps_every_contract(tree: Path) -> None:
    result = lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout
    assert result.stdout.count("KEPT") == 4


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("service/games/use_cases.py", "import redis.asyncio"),
        ("service/reactions/relay.py", "from infra.queues import MemoryQueue"),
        ("service/lobby/use_cases.py", "import litestar"),
        ("service/jobs/worker.py", "import sqlalchemy"),
        ("service/reactions/webhooks.py", "import httpx"),
    ],
)
def test_an_adapter_imported_by_the_core_is_refused(tree: Path, module: str, line: str) -> None:
    add_import(tree / module, line)
    result = lint(tree)
    assert result.returncode != 0
    assert "the application core imports no adapter and no framework BROKEN" in result.stdout


def test_a_layer_that_imports_a_higher_one_is_refused(tree: Path) -> None:
    add_import(tree / "infra/queues.py", "import service.entrypoints.api.problems")
    result = lint(tree)
    assert result.returncode != 0
    assert "layers: entrypoints > composition root > adapters > application > domain BROKEN" in (
        result.stdout
    )


def test_a_new_module_of_a_capability_is_under_the_contracts_without_a_list_to_edit(
    tree: Path,
) -> None:
    (tree / "service/lobby/matchmaking.py").write_text(
        '"""A capability\'s new module."""\n\nimport redis.asyncio  # noqa: F401\n'
    )
    result = lint(tree)
    assert result.returncode != 0
    assert "the application core imports no adapter and no framework BROKEN" in result.stdout


def contract_packages() -> set[str]:
    """Every package or module that a layer of the layers contract names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    named: set[str] = set()
    for contract in config["contracts"]:
        for layer in contract.get("layers", []):
            named.update(part.strip() for part in re.split(r"[:|]", layer))
    return named


def test_every_module_of_the_tree_is_under_a_layer() -> None:
    named = contract_packages()
    outside = []
    for package in ("domain", "service", "infra"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "static" in path.parts:
                continue
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            dotted = dotted.removesuffix(".__init__")
            if dotted in ("service",):  # the root package itself: it holds nothing
                continue
            if not any(dotted == n or dotted.startswith(n + ".") for n in named):
                outside.append(dotted)
    assert outside == [], f"modules under no layer of pyproject.toml's contracts: {outside}"


def test_the_game_rules_importing_a_bot_are_refused(tree: Path) -> None:
    add_import(tree / "domain/game/legal.py", "from domain.bots import expert")
    result = lint(tree)
    assert result.returncode != 0
    assert "domain: bots and analysis | tournament rules > the game BROKEN" in result.stdout
