"""Identity over HTTP, in-process: GET /v1/info in the open and the verified mode, the
security schemes in the OpenAPI document, CORS (preflight and simple requests) as
TEN_CORS_ORIGINS asks, and the caller (service.entrypoints.api.auth's hook): its errors as
problem+json 401/400 with a `WWW-Authenticate` challenge, none asked for by a handler without
it, and no trace of it in the OpenAPI document."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import msgspec
import pytest
from litestar import Litestar, get
from litestar.datastructures import State
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.testing import TestClient

from service.core.settings import (
    ArchiveSettings,
    GameSettings,
    HttpSettings,
    IdentitySettings,
    ObservabilitySettings,
    Settings,
)
from service.entrypoints.api.app import CORS_REQUEST_HEADERS, CORS_RESPONSE_HEADERS, create_app
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN, Identity
from service.entrypoints.api.problems import problem_details_config

ISSUER = "https://platform.example"
AUDIENCE = "ten"
SECRET = "a-secret-of-the-platform-32-bytes-or-more"
API_KEY = "platform-key-0123456789abcdef"
ORIGIN = "https://play.example"
PROBLEM_JSON = "application/problem+json"


def player_jwt(sub: str = "ann", **changes: Any) -> str:
    now = int(time.time())
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": now + 300, **changes}
    return jwt.encode(claims, SECRET, algorithm="HS256")


def verified_settings(
    tmp_path: Path, http: HttpSettings | None = None, games: GameSettings | None = None
) -> Settings:
    return Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3"),
        observability=ObservabilitySettings(log_format="json"),
        identity=IdentitySettings(
            api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer=ISSUER, jwt_audience=AUDIENCE
        ),
        http=http or HttpSettings(),
        games=games or GameSettings(),
    )


@pytest.fixture(autouse=True)
def quiet_httpx() -> Iterator[None]:
    """httpx logs each request at INFO through the app's handler (see tests/contract)."""
    httpx_log = logging.getLogger("httpx")
    level = httpx_log.level
    httpx_log.setLevel(logging.WARNING)
    yield
    httpx_log.setLevel(level)


def client_for(settings: Settings) -> TestClient:
    return TestClient(create_app(settings))


def test_info_on_the_embedded_default_says_open(tmp_path: Path) -> None:
    settings = Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/a.sqlite3")
    )
    with client_for(settings) as client:
        response = client.get("/v1/info")
        assert response.status_code == 200
        body = response.json()
        # no CORS unless configured
        preflight = client.options(
            "/v1/games", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
        )
        assert "access-control-allow-origin" not in preflight.headers
    assert body["service"] == "ten"
    assert body["version"]
    assert body["auth"] == {"mode": "open", "api_keys": False, "jwt": False}
    assert body["limits"] == {
        "max_body_bytes": 65536,
        "max_players": 5,
        "custom_deck": True,
        "rate_limit": None,
        "finished_ttl": 86400,
        "idle_ttl": 604800,
    }


def test_info_when_verified_names_issuer_and_audience_and_no_secret(tmp_path: Path) -> None:
    settings = verified_settings(
        tmp_path, HttpSettings(rate_limit=(600, "minute")), GameSettings(allow_custom_deck=False)
    )
    with client_for(settings) as client:
        response = client.get("/v1/info")
    assert response.status_code == 200
    body = response.json()
    assert body["auth"] == {
        "mode": "verified",
        "api_keys": True,
        "jwt": True,
        "issuer": ISSUER,
        "audience": AUDIENCE,
    }
    assert body["limits"]["rate_limit"] == {"requests": 600, "per": "minute"}
    assert body["limits"]["custom_deck"] is False
    assert SECRET not in response.text
    assert API_KEY not in response.text


def test_the_openapi_document_has_get_info_and_the_security_schemes(tmp_path: Path) -> None:
    with client_for(verified_settings(tmp_path)) as client:
        document = client.get("/schema/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert schemes[PLATFORM_KEY] | {"description": ""} == {
        "type": "apiKey",
        "name": "X-API-Key",
        "in": "header",
        "description": "",
    }
    assert schemes[PLAYER_TOKEN]["scheme"] == "bearer"
    assert schemes[PLAYER_TOKEN]["bearerFormat"] == "JWT"
    assert "seatToken" in schemes
    operation = document["paths"]["/v1/info"]["get"]
    assert operation["operationId"] == "getInfo"
    ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/InfoOut"}
    info = document["components"]["schemas"]["InfoOut"]
    assert set(info["required"]) == {"service", "version", "api_version", "auth", "limits"}
    auth = document["components"]["schemas"]["AuthInfo"]
    assert auth["properties"]["mode"]["enum"] == ["open", "verified"]


def preflight(client: TestClient, origin: str, headers: str) -> Any:
    return client.options(
        "/v1/games",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": headers,
        },
    )


def test_cors_preflight_and_simple_requests_for_a_listed_origin(tmp_path: Path) -> None:
    settings = verified_settings(
        tmp_path, HttpSettings(cors_origins=(ORIGIN,), rate_limit=(5, "minute"))
    )
    sent = ", ".join(h.lower() for h in CORS_REQUEST_HEADERS)
    with client_for(settings) as client:
        allowed = preflight(client, ORIGIN, sent)
        for _ in range(6):  # preflights do not count against the rate limit
            assert preflight(client, ORIGIN, sent).status_code == 204
        other = preflight(client, "https://evil.example", "authorization")
        simple = client.get("/v1/info", headers={"Origin": ORIGIN})
        foreign = client.get("/v1/info", headers={"Origin": "https://evil.example"})
    assert allowed.status_code == 204
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in allowed.headers["access-control-allow-methods"]
    granted = {h.strip() for h in allowed.headers["access-control-allow-headers"].split(",")}
    assert {h.lower() for h in CORS_REQUEST_HEADERS} <= {h.lower() for h in granted}
    assert "Origin" in allowed.headers["vary"]
    assert "access-control-allow-credentials" not in allowed.headers
    assert other.status_code == 400
    assert "access-control-allow-origin" not in other.headers
    assert simple.status_code == 200
    assert simple.headers["access-control-allow-origin"] == ORIGIN
    exposed = {h.strip() for h in simple.headers["access-control-expose-headers"].split(",")}
    assert {"ETag", "Location", "Idempotent-Replayed", "Retry-After"} <= exposed
    assert set(CORS_RESPONSE_HEADERS) == exposed
    assert "access-control-allow-origin" not in foreign.headers


def test_cors_for_every_origin(tmp_path: Path) -> None:
    with client_for(verified_settings(tmp_path, HttpSettings(cors_origins=("*",)))) as client:
        allowed = preflight(client, "https://anywhere.example", "x-api-key, if-match")
        created = client.post(
            "/v1/games",
            json={"players": [{"name": "Ann"}]},
            headers={"Origin": "https://anywhere.example"},
        )
    assert allowed.status_code == 204
    assert allowed.headers["access-control-allow-origin"] == "*"
    assert created.headers["access-control-allow-origin"] == "*"


# ---------------------------------------------------------------- the caller over HTTP


@get("/whoami", before_request=authenticate)
async def whoami(request: AuthenticatedRequest) -> dict[str, Any]:
    return msgspec.structs.asdict(request.user)


@get("/nobody")
async def nobody() -> dict[str, Any]:
    return {}


def whoami_client(settings: Settings) -> TestClient:
    app = Litestar(
        route_handlers=[whoami, nobody],
        plugins=[ProblemDetailsPlugin(problem_details_config())],
        state=State({"identity": Identity.from_settings(settings)}),
    )
    return TestClient(app)


def test_the_caller_reads_both_headers(tmp_path: Path) -> None:
    with whoami_client(verified_settings(tmp_path)) as client:
        player = client.get("/whoami", headers={"Authorization": f"Bearer {player_jwt('bo')}"})
        platform = client.get("/whoami", headers={"X-API-Key": API_KEY})
        anyone = client.get("/whoami")
    assert player.json() == {"kind": "player", "player_id": "bo", "seat_token": None}
    assert platform.json()["kind"] == "platform"
    assert anyone.json()["kind"] == "anonymous"


def test_a_handler_without_a_caller_never_asks_who_calls(tmp_path: Path) -> None:
    """The identity is not consulted for a handler without the hook: bad credentials
    do not matter to it; and the caller is no parameter of the document."""
    with whoami_client(verified_settings(tmp_path)) as client:
        bad = {"Authorization": "Bearer not.a.jwt", "X-API-Key": "wrong-key-0123456789"}
        assert client.get("/nobody", headers=bad).status_code == 200
        assert client.get("/whoami", headers=bad).status_code == 401
        document = client.get("/schema/openapi.json").json()
    assert "parameters" not in document["paths"]["/whoami"]["get"]


def test_the_service_documents_no_caller_parameter(tmp_path: Path) -> None:
    settings = Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/a.sqlite3")
    )
    with client_for(settings) as client:
        document = client.get("/schema/openapi.json").json()
    names = {
        parameter["name"].lower()
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for parameter in operation.get("parameters", [])
    }
    assert "caller" not in names
    assert "request" not in names


@pytest.mark.parametrize(
    ("headers", "status", "code", "challenge"),
    [
        ({"X-API-Key": "wrong-key-0123456789"}, 401, "invalid_api_key", "ApiKey"),
        ({"Authorization": "Bearer not.a.jwt"}, 401, "invalid_token", 'error="invalid_token"'),
        ({"Authorization": "Basic eDp5"}, 401, "unauthorized", "Bearer"),
        (
            {"Authorization": f"Bearer {player_jwt(exp=int(time.time()) - 600)}"},
            401,
            "invalid_token",
            'error="invalid_token"',
        ),
        (
            {"Authorization": f"Bearer {player_jwt()}", "X-API-Key": API_KEY},
            400,
            "conflicting_credentials",
            None,
        ),
    ],
)
def test_caller_errors_are_problems(
    tmp_path: Path, headers: dict[str, str], status: int, code: str, challenge: str | None
) -> None:
    with whoami_client(verified_settings(tmp_path)) as client:
        response = client.get("/whoami", headers=headers)
    assert response.status_code == status
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    assert response.json()["code"] == code
    if challenge is None:
        assert "www-authenticate" not in response.headers
    else:
        assert challenge in response.headers["www-authenticate"]
    for secret in headers.values():
        assert secret.removeprefix("Bearer ") not in response.text
