"""Who is calling: a request's credentials made into a `service.core.callers.Caller`. The one
place that says what a caller is; `service.entrypoints.api.auth` hands it a request's headers (once, for
the handlers that need the caller), `infra.jwt_keys` verifies JWTs behind the
`service.core.callers.TokenVerifier` port.

- The platform, server to server: header `X-API-Key` holding one of `TEN_API_KEYS` (several
  at once, so that keys can be rotated). Compared in constant time: the SHA-256 of the sent
  key against the SHA-256 of every configured key, all of them, whatever matches.
- A player: `Authorization: Bearer <jwt>`, a JWT the verifier accepts (signed by the
  platform, see `infra.jwt_keys`); its `sub` is the player_id (the schema's `PlayerId`).
- A seat or host token (`<20 hex>.<seat or host>.<secret>`) also travels as the bearer
  credential: it is no JWT, and is handed on in `Caller.seat_token` for the use cases to
  check per game; so does a matchmaking ticket's token (`<ticket id>.ticket.<secret>`),
  checked by the matchmaking's use cases. Any other bearer credential is a JWT to verify, and where no JWT key is
  configured it is refused at once (401 `unauthorized`): a credential the service cannot
  verify is never taken for one that merely does not allow the operation (403).
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
from typing import TYPE_CHECKING, Any

import msgspec

from infra.jwt_keys import JwtVerifier
from service.core.callers import ANONYMOUS, PLATFORM, Caller, TokenVerifier, token_refused
from service.core.errors import ServiceError
from service.entrypoints.api.schemas import PlayerId

if TYPE_CHECKING:
    from service.core.settings import Settings

log = logging.getLogger("ten.identity")

# the OpenAPI security schemes of these credentials (declared in service.entrypoints.api.openapi_config), for a
# route's `security=`
PLATFORM_KEY = "platformKey"
PLAYER_TOKEN = "playerToken"
API_KEY_HEADER = "X-API-Key"
SEAT_TOKEN_SHAPE = re.compile(r"^[0-9a-f]{20}\.([0-9]|host)\.")  # seat and host tokens
# a matchmaking ticket's token (`service.matchmaking.use_cases`): handed on as a seat token is
TICKET_TOKEN_SHAPE = re.compile(r"^[lc][0-9a-f]{19}\.ticket\.")
OPEN_WARNING = (
    "identities are unverified: no TEN_API_KEYS and no JWT key (TEN_JWT_SECRET, "
    "TEN_JWT_PUBLIC_KEY or TEN_JWT_JWKS_URL) are configured, so anyone may create games and "
    "claim any player_id; configure them before stats or the leaderboard matter"
)


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class Identity:
    """Credentials -> Caller, as the settings configure (see the module's docstring)."""

    def __init__(
        self, api_keys: tuple[str, ...] = (), verifier: TokenVerifier | None = None
    ) -> None:
        self._key_digests = tuple(_digest(key.encode()) for key in api_keys)
        self.verifier = verifier

    @classmethod
    def from_settings(cls, settings: Settings) -> Identity:
        """Raises ValueError (at start) for a key that cannot be used."""
        return cls(settings.identity.api_keys, JwtVerifier.from_settings(settings))

    @property
    def api_keys(self) -> bool:
        return bool(self._key_digests)

    @property
    def jwt(self) -> bool:
        return self.verifier is not None

    @property
    def open(self) -> bool:
        """Nothing configured: anyone may call, identities are unverified."""
        return not self.api_keys and not self.jwt

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
        if SEAT_TOKEN_SHAPE.match(token) or TICKET_TOKEN_SHAPE.match(token):
            return Caller(kind="platform" if platform else "anonymous", seat_token=token)
        if self.verifier is None:
            raise ServiceError("unauthorized", "This is not a seat token.")
        if platform:
            raise ServiceError("conflicting_credentials")
        return Caller(kind="player", player_id=await self.player_id(token))

    async def player_id(self, token: str) -> str:
        """The `sub` of a valid player JWT; ServiceError `invalid_token` saying why not."""
        if self.verifier is None:
            raise token_refused("this service accepts no player JWTs")
        claims = await self.verifier.claims(token)
        try:
            return msgspec.convert(claims["sub"], PlayerId)
        except msgspec.ValidationError:
            raise token_refused("sub is not a valid player_id") from None

    def describe(self) -> dict[str, Any]:
        """What /v1/info says about it (no secret)."""
        about: dict[str, Any] = {
            "mode": "open" if self.open else "verified",
            "api_keys": self.api_keys,
            "jwt": self.jwt,
        }
        if self.verifier is not None:
            about |= {"issuer": self.verifier.issuer, "audience": self.verifier.audience}
        return about


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
