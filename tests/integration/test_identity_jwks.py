"""Player JWTs verified with the keys of a JWKS fetched over real HTTP: a local server thread
plays the platform's JWKS endpoint (no internet). The fetch (blocking urllib inside PyJWT)
runs in a worker thread, never on the event loop, and its keys are cached."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.settings import IdentitySettings, Settings
from service.entrypoints.api.identity import Identity
from tests.servers import free_port

ISSUER = "https://platform.example"
AUDIENCE = "ten"
HMAC_SECRET = "a-shared-secret-that-must-never-be-in-a-jwks-32b"


class Jwks:
    """A JWKS endpoint on a loopback port, counting the fetches."""

    def __init__(self, keys: list[dict[str, Any]]) -> None:
        self.document = {"keys": keys}
        self.fetches = 0
        jwks = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                jwks.fetches += 1
                body = json.dumps(jwks.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/.well-known/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def jwk(algorithm: Any, public_key: Any, kid: str, alg: str) -> dict[str, Any]:
    return {**algorithm.to_jwk(public_key, as_dict=True), "kid": kid, "use": "sig", "alg": alg}


@pytest.fixture
def jwks(rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey) -> Iterator[Jwks]:
    oct_key = {"kty": "oct", "kid": "hmac", "alg": "HS256", "use": "sig"}
    oct_key["k"] = jwt.utils.base64url_encode(HMAC_SECRET.encode()).decode()
    server = Jwks(
        [
            jwk(RSAAlgorithm, rsa_key.public_key(), "rsa-1", "RS256"),
            jwk(ECAlgorithm, ec_key.public_key(), "ec-1", "ES256"),
            oct_key,
        ]
    )
    yield server
    server.close()


def identity_for(url: str) -> Identity:
    return Identity.from_settings(
        Settings(
            identity=IdentitySettings(jwt_jwks_url=url, jwt_issuer=ISSUER, jwt_audience=AUDIENCE)
        )
    )


def token(key: Any, algorithm: str, kid: str | None, sub: str = "dana") -> str:
    now = int(time.time())
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": now + 300}
    headers = {"kid": kid} if kid is not None else {}
    return jwt.encode(claims, key, algorithm=algorithm, headers=headers)


def verify(identity: Identity, *tokens: str) -> list[Caller | ServiceError]:
    """Each token's caller (or the error), in one event loop, one after the other."""

    async def all_of() -> list[Caller | ServiceError]:
        found: list[Caller | ServiceError] = []
        for value in tokens:
            try:
                found.append(await identity.caller(f"Bearer {value}".encode(), None))
            except ServiceError as exc:
                found.append(exc)
        return found

    return asyncio.run(all_of())


def code_and_detail(result: Caller | ServiceError) -> tuple[str, str]:
    assert isinstance(result, ServiceError), result
    return result.code, result.detail


def test_tokens_of_the_published_keys_are_verified_and_the_set_is_cached(
    jwks: Jwks, rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey
) -> None:
    identity = identity_for(jwks.url)
    results = verify(
        identity,
        token(rsa_key, "RS256", "rsa-1", sub="dana"),
        token(ec_key, "ES256", "ec-1", sub="eve"),
        token(rsa_key, "RS256", "rsa-1", sub="fay"),
    )
    assert results == [
        Caller(kind="player", player_id="dana"),
        Caller(kind="player", player_id="eve"),
        Caller(kind="player", player_id="fay"),
    ]
    assert jwks.fetches == 1  # one fetch, then the keys from the cache


def test_the_fetch_runs_off_the_event_loop(jwks: Jwks, rsa_key: rsa.RSAPrivateKey) -> None:
    identity = identity_for(jwks.url)
    client = identity.verifier.key.client  # type: ignore[union-attr]
    fetching_threads: list[int] = []
    fetch = client.fetch_data

    def recorded() -> Any:
        fetching_threads.append(threading.get_ident())
        return fetch()

    client.fetch_data = recorded

    async def body() -> tuple[Caller, int]:
        found = await identity.caller(f"Bearer {token(rsa_key, 'RS256', 'rsa-1')}".encode(), None)
        return found, threading.get_ident()

    found, loop_thread = asyncio.run(body())
    assert found.player_id == "dana"
    assert fetching_threads
    assert loop_thread not in fetching_threads


def test_forged_and_unknown_keys_are_refused(
    jwks: Jwks, rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey
) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    results = verify(
        identity_for(jwks.url),
        token(other, "RS256", "rsa-1"),  # another key pair, a published kid
        token(other, "RS256", "rsa-9"),  # a kid the platform does not publish
        token(rsa_key, "RS256", None),  # no kid: which key?
        token(HMAC_SECRET, "HS256", "hmac"),  # an HMAC key in a JWKS is never used
        token(ec_key, "ES256", "rsa-1"),  # the kid of an RSA key on an ES256 token
        jwt.encode({"sub": "x"}, None, algorithm="none", headers={"kid": "rsa-1"}),
    )
    details = [code_and_detail(result) for result in results]
    assert {code for code, _ in details} == {"invalid_token"}
    reasons = [detail.rsplit(": ", 1)[1] for _, detail in details]
    assert reasons[0] == "bad signature."
    assert "does not publish" in reasons[1]
    assert "no key id" in reasons[2]
    assert reasons[3:] == ["algorithm not allowed."] * 3
    # the unknown kid did not refetch within the client's cooldown (a stream of made-up kids
    # costs the platform nothing)
    assert jwks.fetches == 1


def test_an_unreachable_jwks_is_a_503_not_a_refusal(rsa_key: rsa.RSAPrivateKey) -> None:
    url = f"http://127.0.0.1:{free_port()}/jwks.json"  # nothing listens there
    [result] = verify(identity_for(url), token(rsa_key, "RS256", "rsa-1"))
    assert code_and_detail(result)[0] == "identity_unavailable"
