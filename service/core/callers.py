"""Who is calling: what `service.entrypoints.api.identity` makes of a request's credentials, and what the
use cases check; the port that verifies a player's JWT (`TokenVerifier`, the adapter is
`infra.jwt_keys`). No HTTP and no crypto here."""

from __future__ import annotations

from typing import Any, Literal, Protocol

import msgspec

from domain.game.errors import Text
from service.core.errors import ServiceError

CallerKind = Literal["platform", "player", "anonymous"]


class Caller(msgspec.Struct, frozen=True, kw_only=True):
    """The platform (a valid API key), a player (a valid platform-signed JWT: `player_id` is
    its `sub`) or anyone else. A seat token sent as the bearer credential travels in
    `seat_token` (seat tokens are checked per game by the use cases, not here)."""

    kind: CallerKind = "anonymous"
    player_id: str | None = None
    seat_token: str | None = None

    @property
    def platform(self) -> bool:
        return self.kind == "platform"

    def may_claim(self, player_id: str) -> bool:
        """Whether this caller may seat `player_id` verified: the platform for anyone, a
        player for themself."""
        return self.kind == "platform" or (self.kind == "player" and self.player_id == player_id)

    @property
    def scope(self) -> str:
        """Whose Idempotency-Keys these are: one caller's keys never meet another's."""
        if self.kind == "platform":
            return "platform"
        if self.kind == "player":
            return f"player:{self.player_id}"
        return "anonymous"


ANONYMOUS = Caller()
PLATFORM = Caller(kind="platform")


class TokenVerifier(Protocol):
    """Verifies a player's bearer JWT (signature, issuer, audience, times)."""

    issuer: str | None
    audience: str | None

    async def claims(self, token: str) -> dict[str, Any]:
        """The claims of a valid token, `sub` a string. Raises ServiceError: `invalid_token`
        (`token_refused`, saying why) or `identity_unavailable` (its keys cannot be had)."""
        ...


def token_refused(reason: str | Text) -> ServiceError:
    """`invalid_token` saying why: `reason` is a template without parameters, or a Text."""
    why = reason if isinstance(reason, Text) else Text(reason)
    return ServiceError(
        "invalid_token", "The bearer token is not a valid player JWT: {reason}.", reason=why
    )
