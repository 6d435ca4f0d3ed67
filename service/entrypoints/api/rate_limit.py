"""`TEN_RATE_LIMIT`: at most N requests per window per caller, across every replica.

Litestar's `RateLimitMiddleware` and `RateLimitConfig` (its headers, its 429, the preflight
exemption), with two changes:
- the count is one atomic step of a counter (`infra.rate_limit_store`: a Lua script on
  Redis, shared by every replica; in memory for the embedded default) instead of the
  store's GET then SET, which let two replicas count the same request slot twice;
- the caller is who the credentials say, when they hold: the platform by its API key, a
  player by the JWT's `sub`; anyone else (anonymous, a seat token, a credential that does
  not verify and that the handler will refuse) by the client's address. The caller found
  here is handed to the handler's `authenticate` hook (`service.entrypoints.api.auth`), not verified
  twice.
Only exact routes are exempt (`EXEMPT`): the probes, the metrics, the schema and the static
files; a path that merely contains "static" or "health" is counted like any other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from litestar.exceptions import TooManyRequestsException
from litestar.middleware.rate_limit import (
    DURATION_VALUES,
    RateLimitConfig,
    RateLimitMiddleware,
    get_remote_address,
)
from litestar.types import Receive, Scope, Send

from service.core.errors import ServiceError
from service.entrypoints.api.auth import CALLER, scope_caller

# anchored: the paths themselves (Litestar matches these with re.search on the path)
EXEMPT = ["^/health$", "^/ready$", "^/metrics$", "^/schema(/|$)", "^/static/"]


class RateCounter(Protocol):
    async def hit(self, key: str, window: float) -> tuple[int, float]:
        """One more request of `key`: its count in the window and the seconds left."""


async def caller_key(scope: Scope) -> str:
    """Whose requests these are: `platform:<key digest>`, `player:<sub>`, else the address."""
    try:
        caller = await scope_caller(scope)
    except ServiceError:  # refused by the handler's hook anyway: counted by address
        caller = None
    if caller is not None:
        scope[CALLER] = caller  # type: ignore[literal-required]
        if caller.kind == "platform":
            key = next((v for n, v in scope["headers"] if n == b"x-api-key"), b"")
            return f"platform:{hashlib.sha256(key).hexdigest()[:32]}"
        if caller.kind == "player":
            return f"player:{caller.player_id}"
    return f"address:{get_remote_address(scope['litestar_app'].request_class(scope))}"


@dataclass
class AtomicRateLimitConfig(RateLimitConfig):
    counter: Any = field(default=None)  # a RateCounter

    def __post_init__(self) -> None:
        super().__post_init__()
        self.middleware_class = AtomicRateLimitMiddleware


class AtomicRateLimitMiddleware(RateLimitMiddleware):
    config: AtomicRateLimitConfig

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = scope["litestar_app"].request_class(scope)
        if await self.should_check_request(request=request):
            window = DURATION_VALUES[self.unit]
            count, left = await self.config.counter.hit(await caller_key(scope), window)
            headers = self._headers(count, left) if self.config.set_rate_limit_headers else {}
            if count > self.max_requests:
                raise TooManyRequestsException(headers=headers or None)
            if headers:
                send = self._with_headers(send, headers)
        await self.app(scope, receive, send)

    def _headers(self, count: int, left: float) -> dict[str, str]:
        config = self.config
        return {
            config.rate_limit_policy_header_key: f"{self.max_requests}; w={DURATION_VALUES[self.unit]}",
            config.rate_limit_limit_header_key: str(self.max_requests),
            config.rate_limit_remaining_header_key: str(max(0, self.max_requests - count)),
            config.rate_limit_reset_header_key: str(max(1, round(left))),
        }

    def _with_headers(self, send: Send, headers: dict[str, str]) -> Send:
        encoded = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *encoded]
            await send(message)

        return sending
