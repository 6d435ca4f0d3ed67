"""The lobby over HTTP: list open tables and a player's games, join and leave seats, start,
cancel and abort, reissue a seat token. Thin: the use cases are `service.lobby.use_cases.Lobby`."""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec
from litestar import Controller, Response, delete, post
from litestar.params import JSONBody, Parameter

from service.core.model import GameRecord
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.game_views import etag, game_or_table
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.parameters import (
    ETAG,
    JSON,
    LOCATION,
    REPLAYED,
    SEAT_TOKEN,
    GameId,
    IdempotencyKey,
)
from service.entrypoints.api.problems import problems
from service.entrypoints.api.routes import lobby_of
from service.entrypoints.api.schemas import (
    GameOut,
    JoinedOut,
    JoinIn,
    SeatToken,
    TableOut,
)
from service.games.commands import (
    AbortGame,
    CancelTable,
    JoinSeat,
    LeaveSeat,
    ReissueToken,
    StartTable,
)

_encoder = msgspec.json.Encoder()
SeatNumber = Annotated[int, Parameter(ge=0, le=4, description="The seat, 0-based.")]
# who may act for a seat, or host: the platform, a player (JWT), a seat or host token
ANY_CREDENTIAL = [{PLATFORM_KEY: []}, {PLAYER_TOKEN: []}, {SEAT_TOKEN: []}]


def _view(record: GameRecord, status: int = 200) -> Response[bytes]:
    return Response(
        _encoder.encode(game_or_table(record, None)),
        status_code=status,
        media_type=JSON,
        headers={"ETag": etag(record.version)},
    )


class LobbyController(Controller):
    path = "/v1/games/{game_id:str}"
    tags: ClassVar[list[str]] = ["lobby"]

    @post(
        "/seats",
        operation_id="joinGame",
        summary="Join an open table",
        status_code=201,
        description="Takes a seat: the player's reserved seat, else `seat`, else the first open "
        "one. The seat token comes back once. A private table needs its `invite` code. The "
        "game starts when this fills the table.",
        security=[{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}],
        response_headers=[ETAG, LOCATION, REPLAYED],
        responses=problems(401, 403, 404, 409),
        before_request=authenticate,
    )
    async def join(
        self,
        request: AuthenticatedRequest,
        game_id: GameId,
        data: JSONBody[JoinIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[JoinedOut]:
        data = await strictly(request, JoinIn)
        command = JoinSeat(
            caller=request.user,
            game_id=game_id,
            name=data.name,
            seat=data.seat,
            invite=data.invite,
            player_id=data.player_id,
            idempotency_key=idempotency_key,
            entropy=data.entropy or "",
        )
        joined = await lobby_of(request).join(command)
        shown = game_or_table(joined.record, joined.seat)
        body = JoinedOut(
            seat=joined.seat,
            token=joined.token,
            table=shown if isinstance(shown, TableOut) else None,
            game=shown if isinstance(shown, GameOut) else None,
        )
        headers = {"Location": f"/v1/games/{game_id}", "ETag": etag(joined.record.version)}
        if joined.replayed:
            headers["Idempotent-Replayed"] = "true"
        return Response(_encoder.encode(body), status_code=201, media_type=JSON, headers=headers)

    @delete(
        "/seats/{seat:str}",  # read strictly by SeatNumber (a path :int takes "١", "+1")
        operation_id="leaveGame",
        summary="Leave a table before it starts",
        status_code=200,
        description="The seat's player (its token or JWT) or the platform gives the seat back; "
        "it is open (or reserved) again.",
        security=ANY_CREDENTIAL,
        response_headers=[ETAG],
        responses=problems(401, 403, 404, 409),
        before_request=authenticate,
    )
    async def leave(
        self, request: AuthenticatedRequest, game_id: GameId, seat: SeatNumber
    ) -> Response[TableOut]:
        command = LeaveSeat(caller=request.user, game_id=game_id, seat=seat)
        record = await lobby_of(request).leave(command)
        return _view(record)

    @post(
        "/start",
        operation_id="startGame",
        summary="Start a table now",
        status_code=200,
        description="The host or the platform starts the game: empty seats become bots or are "
        "dropped, as chosen at creation (`fill`).",
        security=ANY_CREDENTIAL,
        response_headers=[ETAG],
        responses=problems(401, 403, 404, 409),
        before_request=authenticate,
    )
    async def start(self, request: AuthenticatedRequest, game_id: GameId) -> Response[GameOut]:
        command = StartTable(caller=request.user, game_id=game_id)
        record, _ = await lobby_of(request).start(command)
        return _view(record)

    @post(
        "/cancel",
        operation_id="cancelGame",
        summary="Cancel a table that has not started",
        status_code=200,
        security=ANY_CREDENTIAL,
        response_headers=[ETAG],
        responses=problems(401, 403, 404, 409),
        before_request=authenticate,
    )
    async def cancel(self, request: AuthenticatedRequest, game_id: GameId) -> Response[TableOut]:
        command = CancelTable(caller=request.user, game_id=game_id)
        return _view(await lobby_of(request).cancel(command))

    @post(
        "/abort",
        operation_id="abortGame",
        summary="Abort a live game",
        status_code=200,
        description="The host or the platform stops a live game; it is archived as aborted and "
        "never ranked.",
        security=ANY_CREDENTIAL,
        response_headers=[ETAG],
        responses=problems(401, 403, 404, 409),
        before_request=authenticate,
    )
    async def abort(self, request: AuthenticatedRequest, game_id: GameId) -> Response[GameOut]:
        command = AbortGame(caller=request.user, game_id=game_id)
        return _view(await lobby_of(request).abort(command))

    @post(
        "/seats/{seat:str}/token",  # as leave
        operation_id="reissueSeatToken",
        summary="A fresh seat token",
        status_code=200,
        description="For the seat's player (its current token or JWT) or the platform: a new "
        "seat token; the old one stops working at once. Shown only here.",
        security=ANY_CREDENTIAL,
        responses=problems(401, 403, 404, 409),
        before_request=authenticate,
    )
    async def reissue(
        self, request: AuthenticatedRequest, game_id: GameId, seat: SeatNumber
    ) -> SeatToken:
        command = ReissueToken(caller=request.user, game_id=game_id, seat=seat)
        _, token = await lobby_of(request).reissue(command)
        return SeatToken(seat=seat, token=token)
