"""Deprecations (`service.entrypoints.api.deprecation`): a deprecated operation, and an
operation whose response carries a deprecated field, answer with `Deprecation` (RFC 9745) and
`Sunset` (RFC 8594) and are marked in the document. Today's API deprecates nothing (no alias
or field is kept for older clients), so a test app shows the mechanism; the served document
is held to the same rule."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Annotated, Any

import msgspec
import pytest
from litestar import Litestar, get
from litestar.testing import TestClient

from service.entrypoints import openapi_export
from service.entrypoints.api.deprecation import DEPRECATION, SUNSET, Deprecation
from service.entrypoints.api.openapi_schemas import REF

OLD = Deprecation(since=datetime(2026, 3, 1, tzinfo=UTC), sunset=datetime(2026, 9, 1, tzinfo=UTC))
HTTP_METHODS = {"get", "put", "post", "delete", "patch"}


class Score(msgspec.Struct):
    total: int
    points: Annotated[int | None, OLD.field("The total under its first name; use `total`.")] = None


class Total(msgspec.Struct):
    total: int


@get("/v1/score", operation_id="getScore", response_headers=[*OLD.headers()], sync_to_thread=False)
def score() -> Score:
    return Score(total=7, points=7)


@get(
    "/v1/old-total",
    operation_id="getOldTotal",
    deprecated=True,
    response_headers=[*OLD.headers()],
    sync_to_thread=False,
)
def old_total() -> Total:
    return Total(total=7)


@get("/v1/total", operation_id="getTotal", sync_to_thread=False)
def total() -> Total:
    return Total(total=7)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(Litestar([score, old_total, total])) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def document(client: TestClient) -> dict[str, Any]:
    """The test app's document, its components msgspec's own as the service's are
    (`openapi_schemas.component_schemas`)."""
    doc = client.get("/schema/openapi.json").json()
    _, components = msgspec.json.schema_components([Score, Total], ref_template=REF)
    doc["components"]["schemas"] = json.loads(json.dumps(components))
    return doc


def _deprecated_property(node: Any, schemas: dict[str, Any], seen: set[str]) -> bool:
    """Whether a schema (its references followed, each once) has a deprecated property."""
    if isinstance(node, list):
        return any(_deprecated_property(item, schemas, seen) for item in node)
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            return False
        seen.add(name)
        return _deprecated_property(schemas.get(name), schemas, seen)
    properties = node.get("properties", {})
    if any(isinstance(p, dict) and p.get("deprecated") for p in properties.values()):
        return True
    return any(_deprecated_property(value, schemas, seen) for value in node.values())


def undeclared_deprecations(doc: dict[str, Any]) -> list[str]:
    """Each success response that answers a deprecated operation, or carries a deprecated
    field, and does not document both headers."""
    schemas = doc.get("components", {}).get("schemas", {})
    gaps = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            for status, response in op["responses"].items():
                if not status.startswith("2"):
                    continue
                carries = _deprecated_property(response.get("content", {}), schemas, set())
                if (op.get("deprecated") or carries) and not {DEPRECATION, SUNSET} <= set(
                    response.get("headers", {})
                ):
                    gaps.append(f"{method.upper()} {path} {status}")
    return gaps


def test_a_deprecated_operation_answers_with_both_headers(client: TestClient) -> None:
    response = client.get("/v1/old-total")
    assert response.status_code == 200
    assert response.headers[DEPRECATION] == f"@{int(OLD.since.timestamp())}"
    assert response.headers[DEPRECATION] == "@1772323200"
    assert response.headers[SUNSET] == "Tue, 01 Sep 2026 00:00:00 GMT"
    assert parsedate_to_datetime(response.headers[SUNSET]) == OLD.sunset


def test_a_response_with_a_deprecated_field_answers_with_both_headers(client: TestClient) -> None:
    response = client.get("/v1/score")
    assert response.json() == {"total": 7, "points": 7}
    assert response.headers[DEPRECATION] == OLD.deprecation_value()
    assert response.headers[SUNSET] == OLD.sunset_value()


def test_nothing_else_is_deprecated(client: TestClient) -> None:
    response = client.get("/v1/total")
    assert DEPRECATION not in response.headers
    assert SUNSET not in response.headers


def test_the_document_marks_them(document: dict[str, Any]) -> None:
    assert document["paths"]["/v1/old-total"]["get"]["deprecated"] is True
    assert not document["paths"]["/v1/total"]["get"].get("deprecated")
    assert not document["paths"]["/v1/score"]["get"].get("deprecated")
    points = document["components"]["schemas"]["Score"]["properties"]["points"]
    assert points["deprecated"] is True
    assert "removed after Tue, 01 Sep 2026 00:00:00 GMT" in points["description"]
    assert "deprecated" not in document["components"]["schemas"]["Score"]["properties"]["total"]
    for path in ("/v1/old-total", "/v1/score"):
        headers = document["paths"][path]["get"]["responses"]["200"]["headers"]
        assert {DEPRECATION, SUNSET} <= set(headers), path
        assert headers[DEPRECATION]["required"] is True
    assert not document["paths"]["/v1/total"]["get"]["responses"]["200"].get("headers")
    assert undeclared_deprecations(document) == []


def test_a_deprecation_without_its_headers_is_found(document: dict[str, Any]) -> None:
    doc = json.loads(json.dumps(document))
    del doc["paths"]["/v1/score"]["get"]["responses"]["200"]["headers"]
    doc["paths"]["/v1/total"]["get"]["deprecated"] = True
    assert undeclared_deprecations(doc) == ["GET /v1/score 200", "GET /v1/total 200"]


def test_the_served_document_declares_its_deprecations() -> None:
    served = json.loads((openapi_export.OUT_DIR / "openapi.json").read_text(encoding="utf-8"))
    assert undeclared_deprecations(served) == []


@pytest.mark.parametrize(
    ("since", "sunset"),
    [
        (datetime(2026, 3, 1), datetime(2026, 9, 1, tzinfo=UTC)),  # naive
        (datetime(2026, 9, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)),
    ],
)
def test_a_deprecation_needs_aware_dates_in_order(since: datetime, sunset: datetime) -> None:
    with pytest.raises(ValueError, match="deprecation"):
        Deprecation(since=since, sunset=sunset)
