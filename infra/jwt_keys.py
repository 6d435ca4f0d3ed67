"""Player JWTs verified with PyJWT: the adapter behind `service.core.callers.TokenVerifier`.

The key is the HS256 secret `TEN_JWT_SECRET`, the public key `TEN_JWT_PUBLIC_KEY` (PEM: RSA,
EC or EdDSA) or a key of the JWKS at `TEN_JWT_JWKS_URL`. The algorithms are pinned by the
kind of key (never `none`, never an HMAC with a public key); `iss`, `aud`, `exp` and `sub`
are required, `nbf` and `iat` honoured, with `TEN_JWT_LEEWAY` seconds of clock skew. What a
valid token's claims make of the caller is `service.entrypoints.api.identity`'s to say.

A refusal is a ServiceError: `invalid_token` saying why (never quoting the token), or
`identity_unavailable` when the JWKS cannot be fetched for a key not cached yet.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from jwt.exceptions import InvalidSubjectError

from domain.game.errors import Text
from service.core.callers import token_refused
from service.core.errors import ServiceError

if TYPE_CHECKING:
    from service.core.settings import Settings

log = logging.getLogger("ten.identity")

MAX_TOKEN_CHARS = 8192  # a JWT of the platform is a few hundred bytes
JWKS_LIFESPAN = 300.0  # seconds the keys of the JWKS are used before they are fetched again
JWKS_TIMEOUT = 5.0
MIN_RSA_BITS = 2048
RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
EC_ALGORITHMS = {"secp256r1": ("ES256",), "secp384r1": ("ES384",), "secp521r1": ("ES512",)}
ASYMMETRIC_ALGORITHMS = (*RSA_ALGORITHMS, "ES256", "ES384", "ES512", "EdDSA")
REQUIRED_CLAIMS = ["exp", "iss", "aud", "sub"]
# why a JWT was refused, most specific class first (InvalidSignatureError is a DecodeError)
_REASONS: tuple[tuple[type[Exception], Text], ...] = (
    (jwt.ExpiredSignatureError, Text("expired (exp)")),
    (jwt.ImmatureSignatureError, Text("not yet valid (nbf or iat in the future)")),
    (jwt.InvalidIssuedAtError, Text("iat is not a time")),
    (jwt.InvalidIssuerError, Text("wrong issuer (iss)")),
    (jwt.InvalidAudienceError, Text("wrong audience (aud)")),
    (jwt.InvalidSignatureError, Text("bad signature")),
    (jwt.InvalidAlgorithmError, Text("algorithm not allowed")),
    (InvalidSubjectError, Text("sub is not a string")),
    (jwt.InvalidKeyError, Text("the signing key is not accepted")),
    (jwt.PyJWKClientError, Text("signed with a key the issuer does not publish (kid)")),
    (jwt.DecodeError, Text("malformed")),
)


class StaticKey:
    """One key, from the settings: the HS256 secret or a PEM public key."""

    def __init__(self, key: Any, algorithms: tuple[str, ...]) -> None:
        self.key, self.algorithms = key, algorithms

    async def key_for(self, token: str) -> Any:
        return self.key

    @classmethod
    def public(cls, pem: str) -> StaticKey:
        """A PEM public key, and the algorithms its kind signs with."""
        try:
            key = load_pem_public_key(pem.encode())
        except ValueError:
            raise ValueError("TEN_JWT_PUBLIC_KEY is not a PEM public key") from None
        if isinstance(key, rsa.RSAPublicKey):
            if key.key_size < MIN_RSA_BITS:
                raise ValueError(f"TEN_JWT_PUBLIC_KEY: an RSA key needs {MIN_RSA_BITS} bits")
            return cls(key, RSA_ALGORITHMS)
        if isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name in EC_ALGORITHMS:
            return cls(key, EC_ALGORITHMS[key.curve.name])
        if isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
            return cls(key, ("EdDSA",))
        raise ValueError("TEN_JWT_PUBLIC_KEY: use an RSA, EC (P-256/384/521) or EdDSA key")


class JwksKeys:
    """The keys of the platform's JWKS, by `kid`. PyJWKClient fetches them with blocking
    urllib: always in a worker thread, never on the event loop. A key found is used for
    `JWKS_LIFESPAN` seconds without leaving the loop; an unknown kid asks the client, which
    refetches the set at most once per cooldown (a stream of made-up kids costs no fetches)."""

    algorithms = ASYMMETRIC_ALGORITHMS  # never an HMAC: a JWKS is public

    def __init__(self, url: str) -> None:
        self.client = jwt.PyJWKClient(
            url, cache_jwk_set=True, lifespan=JWKS_LIFESPAN, timeout=JWKS_TIMEOUT
        )
        self.keys: dict[str, tuple[jwt.PyJWK, float]] = {}

    async def key_for(self, token: str) -> jwt.PyJWK:
        kid = jwt.get_unverified_header(token).get("kid")
        if not isinstance(kid, str) or not kid:
            raise token_refused("no key id (kid) in its header")
        found = self.keys.get(kid)
        now = time.monotonic()
        if found is not None and now - found[1] < JWKS_LIFESPAN:
            return found[0]
        try:
            key = await anyio.to_thread.run_sync(self.client.get_signing_key, kid)
        except (jwt.PyJWKClientConnectionError, jwt.PyJWKSetError) as exc:
            log.warning("the JWKS cannot be fetched: %s", type(exc).__name__)
            raise ServiceError("identity_unavailable") from None
        self.keys[kid] = (key, now)
        return key


class JwtVerifier:
    """A `service.core.callers.TokenVerifier`: the claims of a player JWT signed with `key`, for
    `audience`, by `issuer`."""

    def __init__(
        self, key: StaticKey | JwksKeys, *, issuer: str | None, audience: str | None, leeway: int
    ) -> None:
        self.key = key
        self.issuer, self.audience, self.leeway = issuer, audience, leeway

    @classmethod
    def from_settings(cls, settings: Settings) -> JwtVerifier | None:
        """None when no JWT key is configured; ValueError (at start) for a key that cannot
        be used."""
        key: StaticKey | JwksKeys
        if settings.identity.jwt_secret:
            key = StaticKey(settings.identity.jwt_secret.encode(), ("HS256",))
        elif settings.identity.jwt_public_key:
            key = StaticKey.public(settings.identity.jwt_public_key)
        elif settings.identity.jwt_jwks_url:
            key = JwksKeys(settings.identity.jwt_jwks_url)
        else:
            return None
        return cls(
            key,
            issuer=settings.identity.jwt_issuer,
            audience=settings.identity.jwt_audience,
            leeway=settings.identity.jwt_leeway,
        )

    async def claims(self, token: str) -> dict[str, Any]:
        """The verified claims; ServiceError `invalid_token` saying why not."""
        if len(token) > MAX_TOKEN_CHARS:
            raise token_refused("malformed")
        try:
            key = await self.key.key_for(token)
            return jwt.decode(
                token,
                key,
                algorithms=list(self.key.algorithms),
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": REQUIRED_CLAIMS, "enforce_minimum_key_length": True},
            )
        except jwt.PyJWTError as exc:
            raise token_refused(_reason(exc)) from None


def _reason(exc: Exception) -> Text:
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return Text("no {claim} claim", claim=exc.claim)
    for kind, reason in _REASONS:
        if isinstance(exc, kind):
            return reason
    return Text("not accepted")
