"""The domain is a pure core: standard library and msgspec only (import-linter also checks
the forbidden adapters; this test checks the allow-list, which import-linter cannot)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.servers import ROOT

DOMAIN = ROOT / "domain"
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
    assert len(list(DOMAIN.rglob("*.py"))) >= 20


@pytest.mark.parametrize(
    "path", sorted(DOMAIN.rglob("*.py")), ids=lambda p: str(p.relative_to(DOMAIN))
)
def test_domain_imports_only_stdlib_and_msgspec(path: Path) -> None:
    imported = top_level_imports(path)
    assert imported <= ALLOWED, f"{path.name} imports {sorted(imported - ALLOWED)}"
    assert not imported & NO_IO, f"{path.name} imports I/O, clock or global RNG: {imported & NO_IO}"


PRODUCTION = [DOMAIN, DOMAIN.parent / "service", DOMAIN.parent / "infra"]
LONGEST = 60  # lines; a longer function says why in its docstring ("long because ...")


def long_functions(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            length = node.end_lineno - node.lineno + 1
            reason = "long because" in (ast.get_docstring(node) or "").lower()
            if length > LONGEST and not reason:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} {length}")
    return found


@pytest.mark.parametrize("root", PRODUCTION, ids=lambda p: p.name)
def test_no_production_function_is_long_without_a_reason(root: Path) -> None:
    assert long_functions(root) == []


def test_the_length_check_finds_a_long_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(LONGEST))
    (package / "m.py").write_text(
        f"def f():\n{body}\n\n\ndef g():\n    '''Long because.'''\n{body}\n"
    )
    assert long_functions(package) == [f"pkg/m.py:1 f {LONGEST + 1}"]
