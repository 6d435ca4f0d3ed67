"""Who is calling: a request's credentials made into a `service.callers.Caller`.

- The platform, server to server: header `X-API-Key` holding one of `TEN_API_KEYS` (several
  at once, so that keys can be rotated). Compared in constant time: the SHA-256 of the sent
  key against the SHA-256 of every configured key, all of them, whatever matches.
- A player: `Authorization: Bearer <jwt>`, signed by the platform (PyJWT) with the HS256
  secret `TEN_JWT_SECRET`, the public key `TEN_JWT_PUBLIC_KEY` (PEM: RSA, EC or EdDSA) or a
  key of the JWKS at `TEN_JWT_JWKS_URL`. The algorithms are pinned by the kind of key (never
  `none`, never an HMAC with a public key); `iss`, `aud`, `exp` and `sub` are required,
  `nbf` and `iat` honoured, with `TEN_JWT_LEEWAY` seconds of clock skew; `sub` is the
  player_id (the schema's `PlayerId`).
- A seat token (`<20 hex>.<seat>.<secret>`) also travels as the bearer credential: it is no
  JWT, and is handed on in `Caller.seat_token` for the use cases to check per game. So is any
  bearer credential when no JWT key is configured.
- An API key and a player JWT together: 400 `conflicting_credentials` (one request, one
  caller). An API key with a seat token is the platform holding a seat's token.

Nothing configured: `Identity.open`, the embedded default. Anyone may call, and a player_id
is whatever the caller says (identities are unverified; said at start and in /v1/info).

No credential is ever logged or put in an error's detail.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import jwt
import msgspec
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from jwt.exceptions import InvalidSubjectError

from domain.errors import Text
from service.api.schemas import PlayerId
from service.callers import ANONYMOUS, Caller
from service.errors import ServiceError

if TYPE_CHECKING:
    from litestar import Request

    from service.settings import Settings

log = logging.getLogger("ten.identity")

# the OpenAPI security schemes of these credentials (declared in service.api.openapi), for a
# route's `security=`
PLATFORM_KEY = "platformKey"
PLAYER_TOKEN = "playerToken"
API_KEY_HEADER = "X-API-Key"
SEAT_TOKEN_SHAPE = re.compile(r"^[0-9a-f]{20}\.([0-9]|host)\.")  # seat and host tokens
PLATFORM = Caller(kind="platform")
MAX_TOKEN_CHARS = 8192  # a JWT of the platform is a few hundred bytes
JWKS_LIFESPAN = 300.0  # seconds the keys of the JWKS are used before they are fetched again
JWKS_TIMEOUT = 5.0
MIN_RSA_BITS = 2048
RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
EC_ALGORITHMS = {"secp256r1": ("ES256",), "secp384r1": ("ES384",), "secp521r1": ("ES512",)}
ASYMMETRIC_ALGORITHMS = (*RSA_ALGORITHMS, "ES256", "ES384", "ES512", "EdDSA")
REQUIRED_CLAIMS = ["exp", "iss", "aud", "sub"]
OPEN_WARNING = (
    "identities are unverified: no TEN_API_KEYS and no JWT key (TEN_JWT_SECRET, "
    "TEN_JWT_PUBLIC_KEY or TEN_JWT_JWKS_URL) are configured, so anyone may create games and "
    "claim any player_id; configure them before stats or the leaderboard matter"
)
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


def _refused(reason: str | Text) -> ServiceError:
    """`invalid_token` saying why: `reason` is a template without parameters, or a Text."""
    why = reason if isinstance(reason, Text) else Text(reason)
    return ServiceError(
        "invalid_token", "The bearer token is not a valid player JWT: {reason}.", reason=why
    )


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class _StaticKey:
    """One key, from the settings: the HS256 secret or a PEM public key."""

    def __init__(self, key: Any, algorithms: tuple[str, ...]) -> None:
        self.key, self.algorithms = key, algorithms

    async def key_for(self, token: str) -> Any:
        return self.key

    @classmethod
    def public(cls, pem: str) -> _StaticKey:
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


class _JwksKeys:
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
            raise _refused("no key id (kid) in its header")
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


class Identity:
    """Credentials -> Caller, as the settings configure (see the module's docstring)."""

    def __init__(
        self,
        api_keys: tuple[str, ...] = (),
        jwt_key: _StaticKey | _JwksKeys | None = None,
        *,
        issuer: str | None = None,
        audience: str | None = None,
        leeway: int = 30,
    ) -> None:
        self._key_digests = tuple(_digest(key.encode()) for key in api_keys)
        self._jwt_key = jwt_key
        self.issuer, self.audience, self.leeway = issuer, audience, leeway

    @classmethod
    def from_settings(cls, settings: Settings) -> Identity:
        """Raises ValueError (at start) for a key that cannot be used."""
        jwt_key: _StaticKey | _JwksKeys | None = None
        if settings.jwt_secret:
            jwt_key = _StaticKey(settings.jwt_secret.encode(), ("HS256",))
        elif settings.jwt_public_key:
            jwt_key = _StaticKey.public(settings.jwt_public_key)
        elif settings.jwt_jwks_url:
            jwt_key = _JwksKeys(settings.jwt_jwks_url)
        return cls(
            settings.api_keys,
            jwt_key,
            issuer=settings.jwt_issuer,
            audience=settings.jwt_audience,
            leeway=settings.jwt_leeway,
        )

    @property
    def api_keys(self) -> bool:
        return bool(self._key_digests)

    @property
    def jwt(self) -> bool:
        return self._jwt_key is not None

    @property
    def open(self) -> bool:
        """Nothing configured: anyone may call, identities are unverified."""
        return not self.api_keys and not self.jwt

    def require_credentials(self, caller: Caller) -> None:
        """For what a verified service keeps to the platform and players (creating a game):
        401 `authentication_required` for an anonymous caller, unless the service is open."""
        if not self.open and caller.kind == "anonymous":
            raise ServiceError("authentication_required")

    def announce(self) -> None:
        """One line at start: an open service says that its identities are unverified."""
        if self.open:
            log.warning(OPEN_WARNING)
        else:
            log.info(
                "identities are verified: API keys %s, player JWTs %s",
                "on" if self.api_keys else "off",
                "on" if self.jwt else "off",
            )

    def is_platform_key(self, sent: bytes) -> bool:
        """Constant time: every configured key is compared, the digests are all as long."""
        sent_digest = _digest(sent)
        found = False
        for digest in self._key_digests:
            found |= hmac.compare_digest(sent_digest, digest)
        return found

    async def caller(self, authorization: bytes | None, api_key: bytes | None) -> Caller:
        """The caller of a request with these `Authorization` and `X-API-Key` header values
        (raw bytes, as the ASGI scope holds them; None when absent). Raises ServiceError."""
        token = None if authorization is None else _bearer(authorization)
        platform = False
        if api_key is not None:
            if not self.is_platform_key(api_key):
                raise ServiceError("invalid_api_key")
            platform = True
        if token is None:
            return PLATFORM if platform else ANONYMOUS
        if self._jwt_key is None or SEAT_TOKEN_SHAPE.match(token):
            return Caller(kind="platform" if platform else "anonymous", seat_token=token)
        if platform:
            raise ServiceError("conflicting_credentials")
        return Caller(kind="player", player_id=await self.player_id(token))

    async def player_id(self, token: str) -> str:
        """The `sub` of a valid player JWT; ServiceError `invalid_token` saying why not."""
        if self._jwt_key is None:
            raise _refused("this service accepts no player JWTs")
        if len(token) > MAX_TOKEN_CHARS:
            raise _refused("malformed")
        try:
            key = await self._jwt_key.key_for(token)
            claims = jwt.decode(
                token,
                key,
                algorithms=list(self._jwt_key.algorithms),
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": REQUIRED_CLAIMS, "enforce_minimum_key_length": True},
            )
        except jwt.PyJWTError as exc:
            raise _refused(_reason(exc)) from None
        try:
            return msgspec.convert(claims["sub"], PlayerId)
        except msgspec.ValidationError:
            raise _refused("sub is not a valid player_id") from None

    def describe(self) -> dict[str, Any]:
        """What /v1/info says about it (no secret)."""
        about: dict[str, Any] = {
            "mode": "open" if self.open else "verified",
            "api_keys": self.api_keys,
            "jwt": self.jwt,
        }
        if self.jwt:
            about |= {"issuer": self.issuer, "audience": self.audience}
        return about


def _reason(exc: Exception) -> Text:
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return Text("no {claim} claim", claim=exc.claim)
    for kind, reason in _REASONS:
        if isinstance(exc, kind):
            return reason
    return Text("not accepted")


def _bearer(authorization: bytes) -> str:
    try:
        scheme, _, token = authorization.decode("ascii").strip().partition(" ")
    except UnicodeDecodeError:
        raise ServiceError("unauthorized", "The Authorization header is not ASCII.") from None
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ServiceError(
            "unauthorized", "Use the header Authorization: Bearer <seat token or player JWT>."
        )
    return token


async def caller_of(request: Request) -> Caller:
    """Who is calling, from the request's `Authorization` and `X-API-Key` headers and the
    app's `Identity` (`app.state.identity`). Read from the ASGI scope (the first of each
    header): no dependency injection on the hot path. Raises ServiceError (401/400/503)."""
    authorization = api_key = None
    for name, value in request.scope["headers"]:
        if name == b"authorization":
            authorization = value if authorization is None else authorization
        elif name == b"x-api-key":
            api_key = value if api_key is None else api_key
    identity: Identity = request.app.state.identity
    return await identity.caller(authorization, api_key)
