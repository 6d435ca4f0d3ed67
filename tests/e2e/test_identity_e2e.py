"""Identity and CORS on a real uvicorn process, over real HTTP: a browser's preflight, the
open mode said at start, and no API key, JWT, JWT secret or seat token in any line the
process logs (at DEBUG, with the access log on) or in its metrics."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import jwt

from tests.servers import ServiceProcess, free_port

ISSUER = "https://platform.example"
AUDIENCE = "ten"
SECRET = "e2e-secret-of-the-platform-32-bytes-or-more"
KEYS = ("e2e-platform-key-old-0123456789", "e2e-platform-key-new-9876543210")
ORIGIN = "https://play.example"


@contextmanager
def serve(tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    port = free_port()
    log = tmp_path / f"stdout-{port}.log"
    env = {
        "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3",
        "TEN_LOG_FORMAT": "json",
        **env,
    }
    server = ServiceProcess(env, 1, port, log_level="debug", stdout=log, cwd=tmp_path)
    try:
        yield server.base, log
    finally:
        server.stop()


def log_lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def test_the_open_mode_is_said_once_at_start(tmp_path: Path) -> None:
    with serve(tmp_path, {}) as (base, log):
        info = httpx.get(f"{base}/v1/info", timeout=5).json()
    assert info["auth"]["mode"] == "open"
    warnings = [
        line
        for line in log_lines(log)
        if line["logger"] == "ten.identity" and "identities are unverified" in line["message"]
    ]
    assert len(warnings) == 1
    assert warnings[0]["level"] == "WARNING"


def test_preflight_and_no_credential_in_logs_or_metrics(tmp_path: Path) -> None:
    env = {
        "TEN_API_KEYS": ",".join(KEYS),
        "TEN_JWT_SECRET": SECRET,
        "TEN_JWT_ISSUER": ISSUER,
        "TEN_JWT_AUDIENCE": AUDIENCE,
        "TEN_CORS_ORIGINS": ORIGIN,
        "TEN_ACCESS_LOG": "true",
        "TEN_LOG_LEVEL": "DEBUG",
    }
    now = int(time.time())
    token = jwt.encode(
        {"sub": "ann", "iss": ISSUER, "aud": AUDIENCE, "exp": now + 300}, SECRET, "HS256"
    )
    expired = jwt.encode(
        {"sub": "ann", "iss": ISSUER, "aud": AUDIENCE, "exp": now - 600}, SECRET, "HS256"
    )
    with serve(tmp_path, env) as (base, log), httpx.Client(base_url=base, timeout=10) as http:
        preflight = http.options(
            "/v1/games",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, x-api-key, idempotency-key",
            },
        )
        info = http.get("/v1/info", headers={"Origin": ORIGIN, "X-API-Key": KEYS[0]})
        for headers in (
            {"X-API-Key": KEYS[1]},
            {"X-API-Key": "not-" + KEYS[1]},
            {"Authorization": f"Bearer {token}"},
            {"Authorization": f"Bearer {expired}"},
        ):
            http.get("/v1/info", headers=headers)
            http.get("/v1/games/no-such-game", headers=headers)
        created = http.post(
            "/v1/games",
            json={"players": [{"name": "Ann"}, {"name": "Bob"}]},
            headers={"X-API-Key": KEYS[0]},
        )
        assert created.status_code == 201, created.text
        body = created.json()
        seat_token = body["seats"][0]["token"]
        http.get(f"/v1/games/{body['id']}", headers={"Authorization": f"Bearer {seat_token}"})
        metrics = http.get("/metrics").text
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "x-api-key" in preflight.headers["access-control-allow-headers"].lower()
    assert info.headers["access-control-allow-origin"] == ORIGIN
    assert info.json()["auth"]["mode"] == "verified"
    logged = log.read_text()
    assert '"logger":"ten.access"' in logged  # the access log was on: there were lines to check
    secrets = [*KEYS, SECRET, token, expired, seat_token, seat_token.rsplit(".", 1)[1]]
    for secret in secrets:
        assert secret not in logged
        assert secret not in metrics
    # the signatures alone neither (a JWT cut at a line's end)
    for value in (token, expired):
        assert value.rsplit(".", 1)[1] not in logged
