"""The committed OpenAPI document (`openapi/`) is the one the code serves, and it says what
clients need: ids for every operation, problem+json errors, links, discriminators; and the
docs page works offline."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from litestar.testing import TestClient

from service.entrypoints import openapi_export

HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
PROBLEM_JSON = "application/problem+json"
ACTIONS = {"draw", "stop", "bid", "pass", "buy", "decline", "resign", "reclaim"}
STALE = f"is stale: run `{openapi_export.EXPORT_COMMAND}` and commit the result"


@pytest.fixture(scope="module")
def served(client: TestClient) -> dict[str, Any]:
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200
    return response.json()


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield method.upper(), path, operation


def operation(document: dict[str, Any], operation_id: str) -> dict[str, Any]:
    [found] = [op for _, _, op in operations(document) if op.get("operationId") == operation_id]
    return found


def test_the_export_is_the_served_document(served: dict[str, Any]) -> None:
    assert openapi_export.build_document() == served


def test_committed_json_is_current(served: dict[str, Any]) -> None:
    path = openapi_export.OUT_DIR / "openapi.json"
    assert path.exists(), f"{path} is missing: run `{openapi_export.EXPORT_COMMAND}`"
    committed = path.read_text(encoding="utf-8")
    assert json.loads(committed) == served, f"{path} {STALE}"
    assert committed == openapi_export.render_json(served), f"{path} {STALE} (formatting)"


def test_committed_yaml_is_current(served: dict[str, Any]) -> None:
    path = openapi_export.OUT_DIR / "openapi.yaml"
    assert path.exists(), f"{path} is missing: run `{openapi_export.EXPORT_COMMAND}`"
    committed = path.read_text(encoding="utf-8")
    assert yaml.safe_load(committed) == served, f"{path} {STALE}"
    assert committed == openapi_export.render_yaml(served), f"{path} {STALE} (formatting)"


def test_check_mode_passes_on_the_committed_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert openapi_export.main(["--check"]) == 0, capsys.readouterr().err


def test_every_operation_has_an_id(served: dict[str, Any]) -> None:
    ids = [op.get("operationId") for _, _, op in operations(served)]
    assert None not in ids, [
        f"{m} {p}" for m, p, op in operations(served) if "operationId" not in op
    ]
    assert len(ids) == len(set(ids)), "operationIds must be unique"


def test_every_error_is_a_documented_problem(served: dict[str, Any]) -> None:
    problem_ref = "#/components/schemas/Problem"
    assert set(served["components"]["schemas"]["Problem"]["required"]) >= {
        "type",
        "title",
        "status",
        "detail",
        "code",
    }
    wrong = []
    for method, path, op in operations(served):
        errors = {status: r for status, r in op["responses"].items() if status[0] in "45"}
        if not {"400", "500"} <= set(errors):
            wrong.append(f"{method} {path}: 400 and 500 undocumented")
        for status, response in errors.items():
            content = response.get("content", {})
            if list(content) != [PROBLEM_JSON]:
                wrong.append(f"{method} {path} {status}: {sorted(content)}")
            elif content[PROBLEM_JSON]["schema"] != {"$ref": problem_ref}:
                wrong.append(f"{method} {path} {status}: not the Problem schema")
    assert wrong == []


def test_statuses_of_the_contract_are_documented(served: dict[str, Any]) -> None:
    act = operation(served, "act")["responses"]
    assert {"200", "400", "401", "403", "404", "409", "412", "413", "429"} <= set(act)
    assert {"201", "400", "413", "429"} <= set(operation(served, "createGame")["responses"])
    assert {"200", "401", "403", "404"} <= set(operation(served, "getGame")["responses"])


def test_create_game_links_to_the_game(served: dict[str, Any]) -> None:
    links = operation(served, "createGame")["responses"]["201"]["links"]
    targets = {link["operationId"] for link in links.values()}
    assert {"getGame", "act", "listEvents"} <= targets
    for link in links.values():
        assert link["parameters"]["game_id"] == "$response.body#/id"
    [act] = [link for link in links.values() if link["operationId"] == "act"]
    assert act["parameters"]["header.Authorization"] == "Bearer {$response.body#/seats/0/token}"


def test_every_link_resolves(served: dict[str, Any]) -> None:
    ids = {op["operationId"] for _, _, op in operations(served)}
    for _, _, op in operations(served):
        for response in op["responses"].values():
            for name, link in response.get("links", {}).items():
                assert link["operationId"] in ids, name


def test_the_action_union_has_a_discriminator(served: dict[str, Any]) -> None:
    body = operation(served, "act")["requestBody"]["content"]["application/json"]["schema"]
    assert body["discriminator"]["propertyName"] == "type"
    mapping = body["discriminator"]["mapping"]
    assert set(mapping) == ACTIONS
    members = {member["$ref"] for member in body.get("oneOf", body.get("anyOf", []))}
    assert set(mapping.values()) == members
    schemas = served["components"]["schemas"]
    for tag, ref in mapping.items():
        tag_schema = schemas[ref.rsplit("/", 1)[-1]]["properties"]["type"]
        assert tag_schema.get("enum", [tag_schema.get("const")]) == [tag], ref


def test_every_reference_resolves(served: dict[str, Any]) -> None:
    schemas = served["components"]["schemas"]
    refs = re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', json.dumps(served))
    assert sorted({ref for ref in refs if ref not in schemas}) == []


def test_docs_page_works_offline(client: TestClient) -> None:
    page = client.get("/schema/swagger")
    assert page.status_code == 200
    assets = re.findall(r'<(?:script|link|img)\b[^>]*?\b(?:src|href)="([^"]*)"', page.text)
    assert assets, "no assets found on the docs page"
    assert [url for url in assets if not url.startswith("/static/")] == []
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page.text), "remote asset"
    for url in assets:
        response = client.get(url)
        assert response.status_code == 200, url
        assert len(response.content) > 1000, url
