"""service.entrypoints.api.identity: API keys, player JWTs and seat tokens made into a Caller, and every way
a forged, stale or misdirected credential is refused (ServiceError, a 4xx), with real keys
(cryptography) and real tokens (PyJWT). The JWKS, fetched over HTTP, is tested in
tests/integration/test_identity_jwks.py."""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import re
import time
from typing import Any

import jwt
import msgspec
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from infra.memory_store import MemoryGameStore
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.settings import IdentitySettings, Settings
from service.entrypoints.api import identity as identity_module
from service.entrypoints.api.identity import Identity
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby

ISSUER = "https://platform.example"
AUDIENCE = "ten"
SECRET = "a-secret-of-the-platform-32-bytes-or-more"
KEY_A = "platform-key-A-0123456789"
KEY_B = "platform-key-B-9876543210"
SEAT_TOKEN = "0123456789abcdef0123.2.s3cr3t-part-of-the-seat-token"


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def pem(public_key: Any) -> str:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture(scope="module")
def ed_key() -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


class FromNow(int):
    """A time claim given as seconds from when the token is made (not from when the test
    module was collected)."""


def claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {"sub": "player-1", "iss": ISSUER, "aud": AUDIENCE, "exp": now + 600, "iat": now}
    base.update({k: now + v if isinstance(v, FromNow) else v for k, v in changes.items()})
    return {k: v for k, v in base.items() if v is not None}


def hs256(**changes: Any) -> str:
    return jwt.encode(claims(**changes), SECRET, algorithm="HS256")


def settings(**fields: Any) -> Settings:
    return Settings(identity=IdentitySettings(**fields))


def verified(**fields: Any) -> Identity:
    """Keys A and B and the HS256 secret, unless `fields` say otherwise."""
    values: dict[str, Any] = {
        "api_keys": (KEY_A, KEY_B),
        "jwt_secret": SECRET,
        "jwt_issuer": ISSUER,
        "jwt_audience": AUDIENCE,
    }
    values.update(fields)
    return Identity.from_settings(settings(**values))


def caller(
    identity: Identity, token: str | None = None, api_key: str | bytes | None = None
) -> Caller:
    authorization = None if token is None else f"Bearer {token}".encode()
    key = api_key.encode() if isinstance(api_key, str) else api_key
    return run(identity.caller(authorization, key))


def refused(identity: Identity, token: str | None = None, api_key: Any = None) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        caller(identity, token, api_key)
    return caught.value


def token_refusal(identity: Identity, token: str) -> str:
    error = refused(identity, token)
    assert error.code == "invalid_token"
    assert token not in error.detail
    return error.detail


# ---------------------------------------------------------------- open (nothing configured)


def test_nothing_configured_is_open_and_everyone_anonymous() -> None:
    identity = Identity.from_settings(Settings())
    assert identity.open
    assert identity.describe() == {"mode": "open", "api_keys": False, "jwt": False}
    assert caller(identity) == Caller()
    # a seat (or host) token is handed on for the use cases to check per game
    assert caller(identity, SEAT_TOKEN) == Caller(seat_token=SEAT_TOKEN)
    host_token = "0123456789abcdef0123.host.s3cr3t"
    assert caller(identity, host_token) == Caller(seat_token=host_token)
    # an API key where none is configured is a mistake the caller should hear of
    assert refused(identity, api_key=KEY_A).code == "invalid_api_key"


@pytest.mark.parametrize("fields", [{}, {"api_keys": (KEY_A,)}], ids=["open", "keys only"])
@pytest.mark.parametrize(
    "token",
    ["garbage", hs256(), "0123456789abcdef0123.x.s3cr3t"],
    ids=["garbage", "a jwt", "seat-shaped"],  # the JWT's own text changes by the second
)
def test_without_a_jwt_key_a_bearer_that_is_no_seat_token_is_401(
    fields: dict[str, Any], token: str
) -> None:
    """A credential the service cannot verify is refused as such (401), everywhere and before
    any use case: never handed on as a seat token that the lobby took for another seat's
    (403). Defect fixed (issue 22)."""
    identity = Identity.from_settings(settings(**fields))
    for api_key in (None, *fields.get("api_keys", ())):
        error = refused(identity, token, api_key)
        assert (error.code, error.detail) == ("unauthorized", "This is not a seat token.")
        assert token not in error.detail


def test_the_open_mode_says_so_at_start(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="ten.identity"):
        Identity.from_settings(Settings()).announce()
        verified().announce()
    [open_line, verified_line] = caplog.records
    assert open_line.levelname == "WARNING"
    assert "identities are unverified" in open_line.getMessage()
    assert verified_line.levelname == "INFO"
    assert "verified" in verified_line.getMessage()


def lobby_of(identity: Identity) -> Lobby:
    """The lobby as the composition root builds it: open when the identity is."""
    return Lobby(GameService(MemoryGameStore(), Settings()), identities_open=identity.open)


def test_a_verified_service_can_require_credentials() -> None:
    lobby_of(Identity.from_settings(Settings())).require_credentials(Caller())  # open: anyone
    identity = verified()
    lobby = lobby_of(identity)
    lobby.require_credentials(caller(identity, api_key=KEY_A))
    lobby.require_credentials(caller(identity, hs256()))
    for anonymous in (Caller(), caller(identity, SEAT_TOKEN)):
        with pytest.raises(ServiceError) as caught:
            lobby.require_credentials(anonymous)
        assert caught.value.code == "authentication_required"


# ---------------------------------------------------------------- API keys


def test_a_configured_key_makes_the_platform() -> None:
    identity = verified()
    assert not identity.open
    assert caller(identity, api_key=KEY_A) == Caller(kind="platform")
    assert caller(identity, api_key=KEY_B).platform  # both keys of a rotation work


@pytest.mark.parametrize(
    "sent",
    [
        "wrong-key-0123456789abcdef",
        KEY_A[:-1],  # a prefix
        KEY_A + "x",
        KEY_A.lower(),
        "",
        b"\xff\xfe-not-ascii",  # compared as bytes: no TypeError, no 500
        f"{KEY_A},{KEY_B}",  # the variable's value itself is no key
    ],
)
def test_a_wrong_api_key_is_refused(sent: str | bytes) -> None:
    error = refused(verified(), api_key=sent)
    assert error.code == "invalid_api_key"
    assert KEY_A not in error.detail


def test_a_rotated_out_key_stops_working() -> None:
    before = verified(api_keys=(KEY_A, KEY_B))
    after = verified(api_keys=(KEY_B,))
    assert caller(before, api_key=KEY_A).platform
    assert refused(after, api_key=KEY_A).code == "invalid_api_key"
    assert caller(after, api_key=KEY_B).platform


def test_every_configured_key_is_compared_whichever_matches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No early exit that would time which key (or whether the first) matched."""
    calls: list[tuple[int, int]] = []
    compare = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((len(a), len(b)))
        return compare(a, b)

    monkeypatch.setattr(identity_module.hmac, "compare_digest", counting)
    identity = verified(api_keys=(KEY_A, KEY_B, "platform-key-C-5555555555"))
    for sent in (KEY_A, "no-such-key-at-all-000", KEY_B + "-longer-than-any"):
        calls.clear()
        identity.is_platform_key(sent.encode())
        # digests of one length: the comparison time does not depend on the sent key's length
        assert calls == [(32, 32)] * 3


# ---------------------------------------------------------------- player JWTs (HS256)


def test_a_valid_jwt_makes_the_player_of_its_sub() -> None:
    assert caller(verified(), hs256(sub="ann@platform:42")) == Caller(
        kind="player", player_id="ann@platform:42"
    )
    # an audience list naming this service is fine (RFC 7519 4.1.3)
    assert caller(verified(), hs256(aud=["other", AUDIENCE])).player_id == "player-1"


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"exp": FromNow(-120)}, "expired"),
        ({"nbf": FromNow(120)}, "not yet valid"),
        ({"iat": FromNow(120)}, "not yet valid"),
        ({"iss": "https://evil.example"}, "wrong issuer"),
        ({"aud": "another-service"}, "wrong audience"),
        ({"sub": None}, "no sub claim"),
        ({"exp": None}, "no exp claim"),
        ({"iss": None}, "no iss claim"),
        ({"aud": None}, "no aud claim"),
        ({"sub": "ann smith"}, "sub is not a valid player_id"),
        ({"sub": "a/b"}, "sub is not a valid player_id"),
        ({"sub": ""}, "sub is not a valid player_id"),
        ({"sub": "p" * 101}, "sub is not a valid player_id"),
        ({"sub": 42}, "sub is not a string"),
    ],
)
def test_a_jwt_with_wrong_claims_is_refused(changes: dict[str, Any], reason: str) -> None:
    assert reason in token_refusal(verified(), hs256(**changes))


def test_the_longest_player_id_is_accepted() -> None:
    assert caller(verified(), hs256(sub="p" * 100)).player_id == "p" * 100


def test_the_leeway_absorbs_clock_skew_and_no_more() -> None:
    now = int(time.time())
    identity = verified(jwt_leeway=30)
    assert caller(identity, hs256(exp=now - 10)).kind == "player"  # expired 10 s ago
    assert caller(identity, hs256(nbf=now + 10)).kind == "player"  # valid in 10 s
    assert "expired" in token_refusal(identity, hs256(exp=now - 60))
    assert "not yet valid" in token_refusal(identity, hs256(nbf=now + 60))
    strict = verified(jwt_leeway=0)
    assert "expired" in token_refusal(strict, hs256(exp=now - 10))


def test_alg_none_is_refused() -> None:
    unsigned = jwt.encode(claims(), None, algorithm="none")
    assert "algorithm not allowed" in token_refusal(verified(), unsigned)
    # also hand-made, with an empty signature
    header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(json.dumps(claims()).encode()).rstrip(b"=").decode()
    token_refusal(verified(), f"{header}.{body}.")


def test_a_jwt_signed_with_another_secret_is_refused() -> None:
    forged = jwt.encode(claims(), "another-secret-of-32-bytes-or-more!!", algorithm="HS256")
    assert "bad signature" in token_refusal(verified(), forged)


def test_a_tampered_payload_is_refused() -> None:
    header, _, signature = hs256(sub="ann").split(".")
    body = base64.urlsafe_b64encode(json.dumps(claims(sub="bob")).encode()).rstrip(b"=")
    assert "bad signature" in token_refusal(verified(), f"{header}.{body.decode()}.{signature}")


@pytest.mark.parametrize("token", ["not-a-jwt", "a.b.c", "x" * 9000, "a.b", "a.b.c.d", "Bearer"])
def test_a_malformed_token_is_refused(token: str) -> None:
    assert "malformed" in token_refusal(verified(), token)


class FakeVerifier:
    """Any `TokenVerifier`: the identity's rules do not depend on PyJWT."""

    issuer, audience = "https://fake.example", "fake"

    def __init__(self, claims: dict[str, Any] | ServiceError) -> None:
        self.answer, self.tokens = claims, []

    async def claims(self, token: str) -> dict[str, Any]:
        self.tokens.append(token)
        if isinstance(self.answer, ServiceError):
            raise self.answer
        return self.answer


def test_the_rules_of_a_caller_use_the_verifier_port() -> None:
    verifier = FakeVerifier({"sub": "dee"})
    identity = Identity((KEY_A,), verifier)
    assert caller(identity, "opaque-jwt") == Caller(kind="player", player_id="dee")
    assert verifier.tokens == ["opaque-jwt"]
    # a seat token never reaches the verifier; an API key with a JWT is refused before it
    assert caller(identity, SEAT_TOKEN) == Caller(seat_token=SEAT_TOKEN)
    assert refused(identity, "opaque-jwt", KEY_A).code == "conflicting_credentials"
    assert verifier.tokens == ["opaque-jwt"]
    assert identity.describe()["issuer"] == "https://fake.example"
    # the verifier's refusal is the caller's; a `sub` that is no player_id is refused here
    unavailable = Identity((), FakeVerifier(ServiceError("identity_unavailable")))
    assert refused(unavailable, "opaque-jwt").code == "identity_unavailable"
    assert "not a valid player_id" in token_refusal(
        Identity((), FakeVerifier({"sub": "a b"})), "opaque-jwt"
    )


def test_a_seat_token_is_handed_on_not_verified() -> None:
    assert caller(verified(), SEAT_TOKEN) == Caller(seat_token=SEAT_TOKEN)
    # with the platform's key: the platform holding a seat's token
    assert caller(verified(), SEAT_TOKEN, KEY_A) == Caller(kind="platform", seat_token=SEAT_TOKEN)


def test_an_api_key_and_a_jwt_together_are_refused() -> None:
    assert refused(verified(), hs256(), KEY_A).code == "conflicting_credentials"
    # a wrong key is refused as such first
    assert refused(verified(), hs256(), "wrong-key-0123456789").code == "invalid_api_key"


@pytest.mark.parametrize("header", [b"Basic dXNlcjpwdw==", b"Bearer", b"Bearer  ", b"\xffBearer x"])
def test_an_authorization_that_is_not_bearer_is_refused(header: bytes) -> None:
    with pytest.raises(ServiceError) as caught:
        run(verified().caller(header, None))
    assert caught.value.code == "unauthorized"


# ---------------------------------------------------------------- public keys


def test_rsa_ec_and_eddsa_public_keys(
    rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey, ed_key: Any
) -> None:
    for private, algorithm in ((rsa_key, "RS256"), (ec_key, "ES256"), (ed_key, "EdDSA")):
        identity = verified(jwt_secret=None, jwt_public_key=pem(private.public_key()))
        token = jwt.encode(claims(sub="carol"), private, algorithm=algorithm)
        assert caller(identity, token) == Caller(kind="player", player_id="carol")


def test_alg_confusion_an_hs256_token_keyed_with_the_public_key_is_refused(
    rsa_key: rsa.RSAPrivateKey,
) -> None:
    """The classic attack: the public key (public!) used as an HMAC secret."""
    public_pem = pem(rsa_key.public_key())
    identity = verified(jwt_secret=None, jwt_public_key=public_pem)
    signing_input = ".".join(
        base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()
        for part in ({"alg": "HS256", "typ": "JWT"}, claims(sub="mallory"))
    )
    signature = hmac.digest(public_pem.encode(), signing_input.encode(), "sha256")
    forged = f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"
    assert "algorithm not allowed" in token_refusal(identity, forged)
    # and a token of the HS256 secret is no good for a public-key service either
    assert "algorithm not allowed" in token_refusal(identity, hs256())


def test_a_token_of_another_key_pair_is_refused(ec_key: ec.EllipticCurvePrivateKey) -> None:
    identity = verified(jwt_secret=None, jwt_public_key=pem(ec_key.public_key()))
    other = ec.generate_private_key(ec.SECP256R1())
    assert "bad signature" in token_refusal(identity, jwt.encode(claims(), other, "ES256"))
    # an EC key verifies ES256 only: an RS256 token is refused by its algorithm
    rsa_other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token_refusal(identity, jwt.encode(claims(), rsa_other, "RS256"))


def test_unusable_public_keys_fail_at_start() -> None:
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    for value, message in (
        ("not a key", "not a PEM public key"),
        (pem(weak.public_key()), "2048 bits"),
        (pem(ec.generate_private_key(ec.SECP256K1()).public_key()), "EC (P-256/384/521)"),
    ):
        with pytest.raises(ValueError, match=re.escape(message)) as caught:
            verified(jwt_secret=None, jwt_public_key=value)
        assert value not in str(caught.value)


# ---------------------------------------------------------------- settings


def env(**values: str) -> dict[str, str]:
    return {f"TEN_{k}": v for k, v in values.items()}


def test_settings_read_the_identity_variables(ec_key: ec.EllipticCurvePrivateKey) -> None:
    one_line_pem = pem(ec_key.public_key()).replace("\n", "\\n")
    read = Settings.from_env(
        env(
            API_KEYS=f" {KEY_A} , {KEY_B},,{KEY_A}",
            JWT_PUBLIC_KEY=one_line_pem,
            JWT_ISSUER=ISSUER,
            JWT_AUDIENCE=AUDIENCE,
            JWT_LEEWAY="5",
            CORS_ORIGINS="https://a.example, http://localhost:5173",
        )
    )
    assert read.identity.api_keys == (KEY_A, KEY_B)
    assert read.identity.jwt_public_key == pem(ec_key.public_key())  # a PEM, whole again
    assert read.identity.jwt_leeway == 5
    assert read.http.cors_origins == ("https://a.example", "http://localhost:5173")
    assert Identity.from_settings(read).describe() == {
        "mode": "verified",
        "api_keys": True,
        "jwt": True,
        "issuer": ISSUER,
        "audience": AUDIENCE,
    }
    defaults = Settings.from_env({})
    assert (
        defaults.identity.api_keys,
        defaults.identity.jwt_leeway,
        defaults.http.cors_origins,
    ) == ((), 30, ())


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"JWT_SECRET": SECRET}, "needs TEN_JWT_ISSUER and TEN_JWT_AUDIENCE"),
        ({"JWT_SECRET": SECRET, "JWT_ISSUER": ISSUER}, "needs TEN_JWT_ISSUER and"),
        ({"JWT_ISSUER": ISSUER, "JWT_AUDIENCE": AUDIENCE}, "no JWT key is"),
        (
            {
                "JWT_SECRET": SECRET,
                "JWT_JWKS_URL": "https://p.example/jwks.json",
                "JWT_ISSUER": ISSUER,
                "JWT_AUDIENCE": AUDIENCE,
            },
            "set only one of TEN_JWT_SECRET, TEN_JWT_JWKS_URL",
        ),
        (
            {"JWT_SECRET": "too-short", "JWT_ISSUER": ISSUER, "JWT_AUDIENCE": AUDIENCE},
            "at least 32 bytes",
        ),
        (
            {"JWT_JWKS_URL": "file:///etc/keys", "JWT_ISSUER": ISSUER, "JWT_AUDIENCE": AUDIENCE},
            "http:// or https:// URL",
        ),
        ({"API_KEYS": "short"}, "at least 16 characters"),
        ({"API_KEYS": f"{KEY_A} {KEY_B}"}, "holds a space"),
        ({"JWT_LEEWAY": "-1"}, "whole number"),
        ({"JWT_LEEWAY": "3600"}, "at most 300"),
        ({"CORS_ORIGINS": "https://a.example/app"}, "is not an origin"),
        ({"CORS_ORIGINS": "*, https://a.example"}, "list no others"),
    ],
)
def test_settings_that_cannot_work_fail_at_start(values: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        Settings.from_env(env(**values))
    for secret in (SECRET, "too-short", "short", KEY_A):
        assert secret not in str(caught.value)


def test_settings_built_directly_are_checked_too() -> None:
    with pytest.raises(ValueError, match="needs TEN_JWT_ISSUER"):
        Settings(identity=IdentitySettings(jwt_secret=SECRET))
    # and msgspec structs can be copied with a change
    http = msgspec.structs.replace(Settings().http, cors_origins=("*",))
    assert msgspec.structs.replace(Settings(), http=http).http.cors_origins == ("*",)
