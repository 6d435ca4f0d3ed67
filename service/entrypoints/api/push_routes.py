"""Web Push over HTTP: the service's VAPID key, a player's push subscriptions (create, list,
delete). Thin: the use cases are `service.correspondence.use_cases.Correspondence`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import msgspec
from litestar import Request, Response, delete, get, post
from litestar.params import JSONBody, Parameter

from service.correspondence.records import PushKeys, PushSubscription
from service.correspondence.use_cases import Correspondence
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.parameters import JSON, REPLAYED, IdempotencyKey, player_query
from service.entrypoints.api.problems import problems
from service.entrypoints.api.schemas import PlayerId

_encoder = msgspec.json.Encoder()
WHO = [{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}]
# base64url of the exact sizes (the last character's spare bits zero): an uncompressed P-256
# point (65 bytes, its first 0x04) and a 16-byte secret, padded or not
P256 = Annotated[
    str,
    msgspec.Meta(
        min_length=87, max_length=88, pattern=r"^B[A-P][A-Za-z0-9_-]{84}[AEIMQUYcgkosw048]=?(?!\n)$"
    ),
]
Secret16 = Annotated[
    str, msgspec.Meta(min_length=22, max_length=24, pattern=r"^[A-Za-z0-9_-]{21}[AQgw](==)?(?!\n)$")
]
Endpoint = Annotated[
    str,
    msgspec.Meta(
        min_length=8,
        max_length=1000,
        pattern=r"^https?://[\x21-\x7e]+(?!\n)$",
        description="The push service's URL for this browser (PushSubscription.endpoint): "
        "https; http://127.0.0.1 or localhost only when the operator allows it "
        "(`TEN_PUSH_ALLOW_HTTP_LOOPBACK`, tests and benches).",
    ),
]
SubscriptionId = Annotated[
    str, Parameter(description="The subscription's id.", min_length=1, max_length=64)
]
PlayerQuery = Annotated[
    str | None,
    player_query(
        "Whose subscriptions (the platform, or anyone while the service runs open); a "
        "player's JWT names its own."
    ),
]


class PushKeyOut(msgspec.Struct, frozen=True, kw_only=True):
    public_key: str  # the VAPID application server key: an uncompressed P-256 point, base64url


class PushKeysIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    p256dh: P256  # the browser's P-256 public key
    auth: Secret16  # the browser's 16-byte authentication secret


class PushSubscriptionIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    player_id: PlayerId | None = None  # the platform, or open mode; a player's JWT: its own
    endpoint: Endpoint
    keys: PushKeysIn


class PushSubscriptionOut(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    player_id: str
    endpoint: str
    created_at: datetime


class PushSubscriptionsOut(msgspec.Struct, frozen=True, kw_only=True):
    player_id: str
    subscriptions: list[PushSubscriptionOut]


def correspondence_of(request: Request) -> Correspondence:
    return request.app.state.correspondence


def _out(player_id: str, s: PushSubscription) -> PushSubscriptionOut:
    at = datetime.fromtimestamp(s.created_at, UTC)
    return PushSubscriptionOut(id=s.id, player_id=player_id, endpoint=s.endpoint, created_at=at)


@get(
    "/v1/push/key",
    operation_id="getPushKey",
    summary="The service's Web Push key",
    description="The VAPID application server key a browser subscribes with "
    "(`PushManager.subscribe({applicationServerKey})`). Without `TEN_VAPID_PRIVATE_KEY` the "
    "service makes a key when it starts: subscriptions then do not outlive a restart.",
    tags=["push"],
)
async def get_push_key(request: Request) -> PushKeyOut:
    return PushKeyOut(public_key=request.app.state.push_key)


@post(
    "/v1/push/subscriptions",
    operation_id="createPushSubscription",
    summary="Subscribe a browser to a player's turn notices",
    status_code=201,
    description="A browser's push subscription (`PushSubscription.toJSON()`: `endpoint`, "
    "`keys`) for the player: when a correspondence game waits on the player and they are "
    'not watching it, every subscription gets an encrypted message `{type: "your_turn", '
    "game_id, seat, deadline, url}`. Subscribing an endpoint again is the same subscription "
    "(its keys replaced): a create is idempotent by its endpoint; an `Idempotency-Key` is "
    "honoured as by every create (the first answer again, `Idempotent-Replayed: true`; "
    "another body with the same key: 409 `idempotency_key_reused`). At most "
    "`TEN_MAX_PUSH_SUBSCRIPTIONS` per player (429 `too_many_push_subscriptions`).",
    security=WHO,
    response_headers=[REPLAYED],
    responses=problems(401, 403, 409),
    before_request=authenticate,
    tags=["push"],
)
async def create_push_subscription(
    request: AuthenticatedRequest,
    data: JSONBody[PushSubscriptionIn],
    idempotency_key: IdempotencyKey = None,
) -> Response[PushSubscriptionOut]:
    data = await strictly(request, PushSubscriptionIn)
    keys = PushKeys(p256dh=data.keys.p256dh, auth=data.keys.auth)
    player, made, replayed = await correspondence_of(request).subscribe(
        request.user, data.player_id, data.endpoint, keys, idempotency_key
    )
    body = _encoder.encode(_out(player, made))
    headers = {"Idempotent-Replayed": "true"} if replayed else None
    return Response(body, status_code=201, media_type=JSON, headers=headers)


@get(
    "/v1/push/subscriptions",
    operation_id="listPushSubscriptions",
    summary="A player's push subscriptions",
    security=WHO,
    responses=problems(401, 403),
    before_request=authenticate,
    tags=["push"],
)
async def list_push_subscriptions(
    request: AuthenticatedRequest, player_id: PlayerQuery = None
) -> PushSubscriptionsOut:
    player, held = await correspondence_of(request).subscriptions(request.user, player_id)
    return PushSubscriptionsOut(player_id=player, subscriptions=[_out(player, s) for s in held])


@delete(
    "/v1/push/subscriptions/{subscription_id:str}",
    operation_id="deletePushSubscription",
    summary="Delete a push subscription",
    status_code=204,
    security=WHO,
    responses=problems(401, 403, 404),
    before_request=authenticate,
    tags=["push"],
)
async def delete_push_subscription(
    request: AuthenticatedRequest, subscription_id: SubscriptionId, player_id: PlayerQuery = None
) -> None:
    await correspondence_of(request).unsubscribe(request.user, player_id, subscription_id)


PUSH_ROUTES = [
    get_push_key,
    create_push_subscription,
    list_push_subscriptions,
    delete_push_subscription,
]
