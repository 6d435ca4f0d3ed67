"""Who is calling, established once per request for the handlers that need to know: the
Litestar hook `authenticate` (a handler's `before_request=authenticate`) puts the request's
`service.core.callers.Caller` in `scope["user"]`, which the handler reads as `request.user`
(`AuthenticatedRequest`). The caller is made by the app's `service.entrypoints.api.identity.Identity`
(`app.state.identity`) from the `Authorization` and `X-API-Key` headers. A handler without
it (health, static files, the schema, metrics, the rules, the archive, the event log) pays
nothing and never looks at credentials.

A before-request hook, not a middleware, a guard or a dependency: measured under callgrind
on a bare Litestar handler (about 196 K instructions a request), Litestar's
AbstractAuthenticationMiddleware adds 28 K instructions to every request it serves, a
dependency (`Provide`) 38 K and even a plain ASGI middleware 12 K (Litestar then also wraps
the handler in an exception middleware of its own); the hook adds what the handler asking the
identity itself cost. The hot path (an action, then the read of the next seat) would pay it
twice. Being no handler parameter, the caller is no parameter of the OpenAPI document either:
credentials are documented by the security schemes (`service.entrypoints.api.openapi_config`).

A bad credential is refused (ServiceError: 401, 400 or 503, problem+json) before the
handler runs, so before its use case looks at the game or the body."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar import Request

from service.core.callers import Caller

if TYPE_CHECKING:
    from litestar.types import Scope

    from service.entrypoints.api.identity import Identity

# a handler's request, whose `user` is the caller (`before_request=authenticate`)
AuthenticatedRequest = Request[Caller, None, Any]
# where the rate limit (`service.entrypoints.api.rate_limit`), which learns the caller first when it is
# on, leaves it for `authenticate`
CALLER = "ten.caller"


async def scope_caller(scope: Scope) -> Caller:
    """The caller from the first `Authorization` and `X-API-Key` headers, read from the ASGI
    scope as raw bytes (no header parsing of Litestar's). Raises ServiceError."""
    authorization = api_key = None
    for name, value in scope["headers"]:
        if name == b"authorization":
            authorization = value if authorization is None else authorization
        elif name == b"x-api-key":
            api_key = value if api_key is None else api_key
    identity: Identity = scope["litestar_app"].state.identity
    return await identity.caller(authorization, api_key)


async def authenticate(request: Request) -> None:
    """A handler's `before_request=`: the caller in `scope["user"]` (`request.user`)."""
    scope = request.scope
    known = scope.get(CALLER)  # type: ignore[call-overload]
    scope["user"] = known if known is not None else await scope_caller(scope)
