"""The domain is a pure core: standard library and msgspec only (import-linter also checks
the forbidden adapters; this test checks the allow-list, which import-linter cannot)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

DOMAIN = Path(__file__).resolve().parents[2] / "domain"
ALLOWED = set(sys.stdlib_module_names) | {"msgspec", "domain", "__future__"}
NO_IO = {"os", "io", "socket", "time", "datetime", "random", "threading", "asyncio", "subprocess"}


def top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_domain_files_exist() -> None:
    assert len(list(DOMAIN.glob("*.py"))) >= 10


@pytest.mark.parametrize("path", sorted(DOMAIN.glob("*.py")), ids=lambda p: p.name)
def test_domain_imports_only_stdlib_and_msgspec(path: Path) -> None:
    imported = top_level_imports(path)
    assert imported <= ALLOWED, f"{path.name} imports {sorted(imported - ALLOWED)}"
    assert not imported & NO_IO, f"{path.name} imports I/O, clock or global RNG: {imported & NO_IO}"
