"""The contract check (`scripts/contract-check`, run by `scripts/test` with the static checks)
fails on a breaking change to the released contract unless the major version went up, and
passes on an additive one. Each case is the released document with a made-up change."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.servers import ROOT
from tests.support.typescript import CLIENT, TIMEOUT

RELEASED = ROOT / "openapi" / "released"
GAME = "/v1/games/{game_id}"
Document = dict[str, Any]


def released() -> Path:
    """The newest released document (as the check picks it by default)."""
    return max(
        RELEASED.glob("*.json"),
        key=lambda p: tuple(int(n) for n in p.stem.split(".")),
    )


def remove_a_response_field(doc: Document) -> None:
    game = doc["components"]["schemas"]["GameOut"]
    del game["properties"]["id"]
    game["required"].remove("id")


def add_a_required_parameter(doc: Document) -> None:
    doc["paths"][GAME]["get"]["parameters"].append(
        {"in": "query", "name": "view", "required": True, "schema": {"type": "string"}}
    )


def add_optional_things(doc: Document) -> None:
    """A new response field (always there), a new optional parameter, a new route, a new
    field in a webhook's payload."""
    game = doc["components"]["schemas"]["GameOut"]
    game["properties"]["mood"] = {"type": "string"}
    game["required"].append("mood")
    webhook = doc["components"]["schemas"]["GameStartedWebhook"]
    webhook["properties"]["mood"] = {"type": "string"}
    webhook["required"].append("mood")
    read = doc["paths"][GAME]["get"]
    read["parameters"].append(
        {"in": "query", "name": "view", "required": False, "schema": {"type": "string"}}
    )
    doc["paths"][GAME + "/mood"] = {"get": {**copy.deepcopy(read), "operationId": "getMood"}}


def remove_a_webhook_field(doc: Document) -> None:
    """What the platform receives: a field it may read removed."""
    webhook = doc["components"]["schemas"]["GameStartedWebhook"]
    del webhook["properties"]["data"]
    webhook["required"].remove("data")


def restrict_a_request_by_a_rule(doc: Document) -> None:
    """A rule the diff tool cannot classify: a request body's field allowed only with
    another (an `if`/`then`), which may refuse what clients send today."""
    body = doc["components"]["schemas"]["PlayerIn"]
    body["if"] = {"required": ["bot"]}
    body["then"] = {"not": {"required": ["name"]}}


def bump_major(doc: Document) -> None:
    major = int(doc["info"]["version"].split(".")[0])
    doc["info"]["version"] = f"{major + 1}.0.0"


def go_back(doc: Document) -> None:
    doc["info"]["version"] = "0.9.0"


# each case: its changes to the released document, and the check's exit code
CASES: dict[str, tuple[list[Callable[[Document], None]], int]] = {
    "removed_response_field": ([remove_a_response_field], 1),
    "new_required_parameter": ([add_a_required_parameter], 1),
    "removed_webhook_field": ([remove_a_webhook_field], 1),
    "unclassified_request_rule": ([restrict_a_request_by_a_rule], 1),
    "additive_changes": ([add_optional_things], 0),
    "breaking_with_a_new_major_version": (
        [remove_a_response_field, add_a_required_parameter, bump_major],
        0,
    ),
    "version_gone_back": ([go_back], 1),
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    """Every case checked, at once (each comparison takes a second or two of CPU)."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed: the contract check needs Node 20+ and npm")
    if not (CLIENT / "node_modules" / "api-smart-diff").is_dir():
        pytest.fail("clients/ts/node_modules/api-smart-diff is missing: run `bash scripts/setup`")
    folder = tmp_path_factory.mktemp("contract")
    base = json.loads(released().read_text(encoding="utf-8"))

    def check(name: str) -> subprocess.CompletedProcess:
        doc = copy.deepcopy(base)
        for change in CASES[name][0]:
            change(doc)
        current = folder / f"{name}.json"
        current.write_text(json.dumps(doc), encoding="utf-8")
        command = ["bash", str(ROOT / "scripts" / "contract-check"), "--current", str(current)]
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)

    with ThreadPoolExecutor(max_workers=len(CASES)) as pool:
        return dict(zip(CASES, pool.map(check, CASES), strict=True))


@pytest.mark.parametrize("name", list(CASES))
def test_the_check_decides(name: str, outcomes: dict[str, subprocess.CompletedProcess]) -> None:
    result = outcomes[name]
    assert result.returncode == CASES[name][1], result.stdout + result.stderr


def test_a_failure_names_the_breaking_change(
    outcomes: dict[str, subprocess.CompletedProcess],
) -> None:
    removed = outcomes["removed_response_field"]
    assert "BREAKING: [Removed] property `id`" in removed.stdout, removed.stdout
    assert "docs/versioning.md" in removed.stderr
    added = outcomes["new_required_parameter"]
    assert "BREAKING: [Added] required query parameter `view`" in added.stdout, added.stdout
    webhook = outcomes["removed_webhook_field"]
    assert "BREAKING: [Removed] property `data`" in webhook.stdout, webhook.stdout
    assert "/webhooks/game_started" in webhook.stdout, webhook.stdout
    rule = outcomes["unclassified_request_rule"]
    assert "UNCLASSIFIED: " in rule.stdout, rule.stdout


def test_a_new_major_version_lists_what_it_breaks(
    outcomes: dict[str, subprocess.CompletedProcess],
) -> None:
    output = outcomes["breaking_with_a_new_major_version"].stdout
    assert "breaking (new major version): [Removed] property `id`" in output, output
    assert "BREAKING" not in output


def test_the_released_document_is_a_released_version() -> None:
    """The released folder holds each release under its own `info.version`; the current
    document's version is never older than the last release's."""
    for path in RELEASED.glob("*.json"):
        assert json.loads(path.read_text(encoding="utf-8"))["info"]["version"] == path.stem
    current = json.loads((ROOT / "openapi" / "openapi.json").read_text(encoding="utf-8"))
    version = tuple(int(n) for n in current["info"]["version"].split("."))
    assert version >= tuple(int(n) for n in released().stem.split("."))
