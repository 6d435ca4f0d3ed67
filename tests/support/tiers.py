"""The test tiers: each is one folder of tests/ and one marker named after it, applied in one
place (tests/conftest.py's `pytest_collection_modifyitems`, through `mark_tiers`), never by
a test module itself. `pytest -m unit` selects the tier; tests/unit/test_tiers.py checks the
rule (every test module in a tier folder, the markers declared, none applied by hand).

| tier | what |
|---|---|
| unit | no I/O: the domain, the use cases on in-memory adapters, the repository's own rules |
| contract | the OpenAPI document, Schemathesis, the TypeScript clients, the rules page |
| integration | an adapter against a real Redis / PostgreSQL / process, in the test process |
| e2e | HTTP to a running service process |
| faults | a server killed, restarted or failing under the service |
| scaleout | replicas, Redis Cluster |
| deploy | the Dockerfile, the Helm chart, the set-up scripts, uvicorn's limits |
| browser | the web client in a real headless Chromium |
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

TESTS = Path(__file__).resolve().parents[1]
TIERS = ("unit", "contract", "integration", "e2e", "faults", "scaleout", "deploy", "browser")


class Item(Protocol):
    """What `mark_tiers` reads of a pytest item."""

    nodeid: str
    path: Path

    def iter_markers(self) -> Iterable[object]: ...

    def add_marker(self, marker: str) -> None: ...


def tier_of(path: Path) -> str | None:
    """The tier of a file of tests/ (the first folder under tests/), None if it is in none."""
    try:
        parts = Path(path).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else None


def inside(path: Path) -> bool:
    return Path(path).resolve().is_relative_to(TESTS)


def mark_tiers(items: Iterable[Item]) -> list[str]:
    """Marks each test of tests/ with its folder's tier. What cannot be marked, one line
    each: a test in no tier folder, a test that carries a tier's marker of its own (even
    its folder's: the marker has one source). Tests outside tests/ (a file a test runs in
    a pytest of its own) are left as they are."""
    wrong = []
    for item in items:
        if not inside(item.path):
            continue
        tier = tier_of(item.path)
        own = sorted({getattr(mark, "name", "") for mark in item.iter_markers()} & set(TIERS))
        if tier is None:
            wrong.append(f"{item.nodeid}: in no tier folder of tests/ ({', '.join(TIERS)})")
        elif own:
            wrong.append(f"{item.nodeid}: marks itself {', '.join(own)} (its folder gives {tier})")
        else:
            item.add_marker(tier)
    return wrong
