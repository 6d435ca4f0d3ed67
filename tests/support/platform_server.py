"""A service process with a platform API key and players' JWTs (HS256), serving the web
client: what tournaments need (tests of the browser tier)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import jwt

from tests.servers import run_server
from tests.support.api import check_serves_client

API_KEY = "platform-key-for-the-browser-tier"
SECRET = "a-test-secret-of-at-least-thirty-two-bytes"
ISSUER, AUDIENCE = "https://platform.example", "ten"
PLATFORM = {"X-API-Key": API_KEY}


@contextlib.contextmanager
def platform_server() -> Iterator[str]:
    """The base URL of such a service, once it serves the client."""
    env = {
        "TEN_API_KEYS": API_KEY,
        "TEN_JWT_SECRET": SECRET,
        "TEN_JWT_ISSUER": ISSUER,
        "TEN_JWT_AUDIENCE": AUDIENCE,
    }
    with run_server(env) as base:
        yield check_serves_client(base)


def player_token(sub: str) -> str:
    """A player's JWT, valid for an hour."""
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": time.time() + 3600}
    return jwt.encode(claims, SECRET, algorithm="HS256")
