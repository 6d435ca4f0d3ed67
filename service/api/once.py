"""`Idempotency-Key` for requests that are not actions (create a game, join a table): a
retry with the same key and body gets the first answer again, byte for byte.

The key is claimed before the request runs (`GameStore.claim_request`), so two copies of one
request sent at once make one game: the second is told the first is still under way (409,
retry). The answer is kept for a day; it holds the credentials the first answer handed out
(seat and host tokens), as the first answer did, for a retry to receive them."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable

import msgspec
from litestar import Request, Response

from service.api.problems import problem
from service.callers import Caller
from service.games import GameService

KEPT_SECONDS = 24 * 3600


class _Outcome(msgspec.Struct, array_like=True, frozen=True):
    fingerprint: str  # the request's body, hashed: the same key with another body is refused
    status: int
    body: bytes
    headers: dict[str, str]


async def once(
    request: Request,
    service: GameService,
    caller: Caller,
    what: str,
    key: str | None,
    answer: Callable[[], Awaitable[Response[bytes]]],
) -> Response[bytes]:
    """`answer()`, or the answer it gave the first request with this key (`what` names the
    operation: keys of different operations and callers never meet)."""
    if key is None:
        return await answer()
    scope = f"{caller.scope}|{what}"
    fingerprint = hashlib.sha256(await request.body()).hexdigest()
    held = await service.store.claim_request(scope, key, KEPT_SECONDS)
    if held is not None:
        if not held:
            raise problem(
                409, "request_in_progress", "The first request with this Idempotency-Key "
                "is still being answered; retry shortly.", {"Retry-After": "1"},
            )  # fmt: skip
        first = msgspec.msgpack.decode(held, type=_Outcome)
        if not hmac.compare_digest(first.fingerprint, fingerprint):
            raise problem(409, "idempotency_key_reused", "This Idempotency-Key was used "
                          "with another request.")  # fmt: skip
        headers = {**first.headers, "Idempotent-Replayed": "true"}
        return Response(first.body, status_code=first.status, headers=headers,
                        media_type="application/json")  # fmt: skip
    try:
        response = await answer()
    except BaseException:
        await service.store.release_request(scope, key)
        raise
    outcome = _Outcome(fingerprint, response.status_code, response.content, dict(response.headers))
    await service.store.keep_outcome(scope, key, msgspec.msgpack.encode(outcome), KEPT_SECONDS)
    return response
