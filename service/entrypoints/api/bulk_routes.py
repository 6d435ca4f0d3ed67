"""Bulk pairings over HTTP: create, read, start now, cancel; the platform's. Thin: the use
cases are `service.bulk.use_cases.BulkPairings`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import JSONBody, Parameter

from domain.game.model import BotLevel, Rules, TimeControl
from service.bulk.records import MOST_AHEAD, MOST_TABLES, BulkShown, CreateBulk, TableRequest
from service.bulk.use_cases import BulkPairings
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.identity import PLATFORM_KEY
from service.entrypoints.api.parameters import JSON, REPLAYED, IdempotencyKey, sent_header
from service.entrypoints.api.problems import problems
from service.entrypoints.api.schemas import Name, PlayerId
from service.games.commands import SeatRequest

_IN = {"frozen": True, "kw_only": True, "forbid_unknown_fields": True}
_OUT = {"frozen": True, "kw_only": True}
_encoder = msgspec.json.Encoder()
# a create's body: up to its most tables of five seats, each with its longest name and id
MOST_BODY_BYTES = 4 * 1024 * 1024
BulkId = Annotated[
    str,
    Parameter(
        description="The bulk pairing's id, as createBulkPairing returned it.", max_length=64
    ),
]
WHO = [{PLATFORM_KEY: []}]
LOCATION = sent_header("Location", "The bulk pairing's URL.")


class BulkSeatIn(msgspec.Struct, **_IN):
    """A seat: a player by their platform id (`player_id`, `name`), seated verified, or a bot
    (`bot`, `name` optional)."""

    player_id: PlayerId | None = None
    name: Name | None = None
    bot: BotLevel | None = None


class BulkTableIn(msgspec.Struct, **_IN):
    seats: Annotated[list[BulkSeatIn], msgspec.Meta(min_length=1, max_length=5)]
    rules: Rules | None = None
    clock: TimeControl | None = None  # none: no clock


class BulkPairingIn(msgspec.Struct, **_IN):
    tables: Annotated[list[BulkTableIn], msgspec.Meta(min_length=1, max_length=MOST_TABLES)]
    start_at: Annotated[
        Annotated[datetime, msgspec.Meta(tz=True)] | None,
        msgspec.Meta(
            description="RFC 3339 with its offset: every table's game starts then. At most "
            f"{MOST_AHEAD // 86400:g} days ahead, not in the past (else 400 "
            "`invalid_bulk_pairing`). Absent or null: now (the answer shows the games started).",
        ),
    ] = None


class BulkSeatOut(msgspec.Struct, **_OUT):
    seat: int
    player_id: str | None
    name: str
    bot: str | None
    # the seat's bearer credential in its game: in the create's answer and its idempotent
    # replays only (a bot's seat: none)
    token: str | None = None


class BulkTableOut(msgspec.Struct, **_OUT):
    index: int
    game_id: str
    # its game's status (`open` until its start); `gone`: the game expired
    status: Literal["open", "active", "finished", "cancelled", "aborted", "abandoned", "gone"]
    seats: list[BulkSeatOut]


class BulkPairingOut(msgspec.Struct, **_OUT):
    id: str
    status: Literal["scheduled", "started", "cancelled"]
    start_at: datetime
    created_at: datetime
    tables: list[BulkTableOut]


def bulk_of(request: Request) -> BulkPairings:
    return request.app.state.bulk


def _moment(at: float) -> datetime:
    return datetime.fromtimestamp(at, UTC)


def bulk_out(shown: BulkShown) -> BulkPairingOut:
    record = shown.record
    tables = []
    for table in shown.tables:
        tokens = table.tokens or (None,) * len(table.seats)
        seats = [
            BulkSeatOut(seat=i, player_id=s.player_id, name=s.name, bot=s.bot, token=tokens[i])
            for i, s in enumerate(table.seats)
        ]
        tables.append(
            BulkTableOut(index=table.index, game_id=table.game_id, status=table.status, seats=seats)
        )
    return BulkPairingOut(
        id=record.id, status=shown.status, start_at=_moment(record.start_at),
        created_at=_moment(record.created_at), tables=tables,
    )  # fmt: skip


def _answer(shown: BulkShown, status: int = 200) -> Response[bytes]:
    headers = {"Location": f"/v1/bulk-pairings/{shown.record.id}"}
    if shown.replayed:
        headers["Idempotent-Replayed"] = "true"
    body = _encoder.encode(bulk_out(shown))
    return Response(body, status_code=status, media_type=JSON, headers=headers)


def _table(table: BulkTableIn) -> TableRequest:
    seats = tuple(SeatRequest(name=s.name, bot=s.bot, player_id=s.player_id) for s in table.seats)
    return TableRequest(seats=seats, rules=table.rules, clock=table.clock)


_PLATFORM = {"before_request": authenticate, "security": WHO, "tags": ["bulk pairing"]}


class BulkPairingController(Controller):
    path = "/v1/bulk-pairings"
    tags: ClassVar[list[str]] = ["bulk pairing"]

    @post(
        "/",
        operation_id="createBulkPairing",
        summary="Create games by the hundred, started together",
        status_code=201,
        description="The platform's: up to "
        f"{MOST_TABLES} tables, each a game whose every seat is a player (by `player_id`, "
        "seated verified) or a bot, dealt together at `start_at` (or now). Every table is "
        "checked before anything is made: one refused is 400 `invalid_bulk_pairing` naming "
        "it (`table`, `reason`), and nothing is created. The answer holds each seat's token "
        "(only here and in a replay of this create with the same Idempotency-Key). Each game "
        "sends its webhooks as any game (`game_started`, ...).",
        response_headers=[LOCATION, REPLAYED],
        responses=problems(400, 401, 403, 409, 429),
        request_max_body_size=MOST_BODY_BYTES,
        **_PLATFORM,
    )
    async def create(
        self,
        request: AuthenticatedRequest,
        data: JSONBody[BulkPairingIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[BulkPairingOut]:
        data = await strictly(request, BulkPairingIn)
        command = CreateBulk(
            caller=request.user,
            tables=tuple(_table(t) for t in data.tables),
            start_at=None if data.start_at is None else data.start_at.timestamp(),
            idempotency_key=idempotency_key,
        )
        return _answer(await bulk_of(request).create(command), 201)

    @get(
        "/{bulk_id:str}",
        operation_id="getBulkPairing",
        summary="Read a bulk pairing: its tables and their games' status",
        responses=problems(401, 403, 404),
        **_PLATFORM,
    )
    async def read(self, request: AuthenticatedRequest, bulk_id: BulkId) -> BulkPairingOut:
        return bulk_out(await bulk_of(request).get(request.user, bulk_id))

    @post(
        "/{bulk_id:str}/start",
        operation_id="startBulkPairing",
        summary="Start every table of a bulk pairing now",
        description="Its tables not started are dealt now; a cancelled bulk pairing is 409 "
        "`bulk_pairing_cancelled`.",
        status_code=200,
        responses=problems(401, 403, 404, 409),
        **_PLATFORM,
    )
    async def start(self, request: AuthenticatedRequest, bulk_id: BulkId) -> BulkPairingOut:
        return bulk_out(await bulk_of(request).start(request.user, bulk_id))

    @post(
        "/{bulk_id:str}/cancel",
        operation_id="cancelBulkPairing",
        summary="Cancel a bulk pairing's tables not started",
        description="The bulk pairing is cancelled, and each of its tables not started yet; "
        "the games started already are left as they are (and shown so).",
        status_code=200,
        responses=problems(401, 403, 404),
        **_PLATFORM,
    )
    async def cancel(self, request: AuthenticatedRequest, bulk_id: BulkId) -> BulkPairingOut:
        return bulk_out(await bulk_of(request).cancel(request.user, bulk_id))


BULK_ROUTES = [BulkPairingController]
