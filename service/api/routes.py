"""Thin controllers: decode a Struct, call a use case, encode a Struct."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.enums import ParamType
from litestar.openapi.spec import OpenAPIType, Operation, Schema
from litestar.openapi.spec import Parameter as OpenAPIParameter
from litestar.params import HeaderParameter, JSONBody, Parameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from domain.cards import MANIFEST, check_copies, deck_size
from domain.errors import RULE_ERROR_CODES
from domain.legal import legal_actions
from domain.model import BOT_LEVELS, Action, Rules
from domain.scoring import score_collection
from domain.views import public_view
from service.api.paging import After, events_handler
from service.api.problems import get_game_part, problem, problems
from service.api.schemas import (
    ActedOut,
    CreatedGameOut,
    CreateGameIn,
    GameOut,
    Health,
    RuleOption,
    RulesOut,
    ScoreIn,
    ScoreOut,
    SeatToken,
)
from service.errors import SERVICE_ERROR_CODES, ServiceError
from service.games import Acted, GameService
from service.history import History
from service.ports import GameRecord, RenderedResponse

JSON = "application/json"
GameId = Annotated[
    str, Parameter(description="The game's id, as returned by createGame.", max_length=64)
]
AUTHORIZATION_DESCRIPTION = (
    "`Bearer <seat token>`: the credential returned for a seat by createGame."
)
# the seat token; `act` takes it as optional to answer 401 itself (not a generic 400)
RequiredAuthorization = Annotated[
    str | None,
    HeaderParameter(name="Authorization", required=True, description=AUTHORIZATION_DESCRIPTION),
]
IfMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-Match",
        required=False,
        # one strong entity tag naming a version (`"7"`; the bare `7` is accepted too) or `*`
        pattern=r'^(\*|[0-9]{1,12}|"[0-9]{1,12}")$',
        description='The version the action was chosen on, as the ETag gave it (`"7"`; a bare '
        "`7` is accepted too); 412 if the game moved on. `*` matches any version.",
    ),
]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description="A retry with the same key and body returns the first response.",
    ),
]


def sent_header(name: str, description: str, *, always: bool = True) -> ResponseHeader:
    """A response header the handler sets itself, documented (as a string: `value=""`)."""
    return ResponseHeader(
        name=name, description=description, documentation_only=True, value="", required=always
    )


ETAG = sent_header("ETag", 'The game version, quoted: `"7"`.')
LOCATION = sent_header("Location", "The new game's URL.")
REPLAYED = sent_header(
    "Idempotent-Replayed",
    "`true` when this is the first response to an earlier request with the same "
    "`Idempotency-Key`, sent again (the action was not applied again).",
    always=False,
)
SEAT_TOKEN = "seatToken"  # the security scheme of the seat tokens (service.api.openapi)
_encoder = msgspec.json.Encoder()


def etag(version: int) -> str:
    return f'"{version}"'


def view_fields(record: GameRecord, seat: int | None) -> dict:
    view = public_view(record.state)
    legal = None if seat is None else legal_actions(view, seat)
    return {
        "id": record.id,
        "seat": seat,
        "legal_actions": legal,
        **msgspec.structs.asdict(view),
    }


def render_acted(acted: Acted) -> bytes:
    """An action's answer; a replayed one renders to the bytes of the first."""
    return _encoder.encode(ActedOut(events=acted.events, **view_fields(acted.record, acted.seat)))


def bearer_token(authorization: str | None) -> str | None:
    """The seat token of an `Authorization: Bearer <token>` header (None without one)."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise problem(401, "unauthorized", "Use the header Authorization: Bearer <seat token>.")
    return token


def parse_if_match(value: str | None) -> int | None:
    """The version an `If-Match` names (its pattern checked already): `"7"` or 7; `*`, any."""
    if value is None:
        return None
    text = value.strip(" \t")
    return None if text == "*" else int(text.strip('"'))


_strict_decoders: dict[Any, msgspec.json.Decoder] = {}


async def strictly(request: Request, body_type: Any) -> Any:
    """The JSON body converted as strictly as the schema reads it.

    Litestar converts the decoded JSON to the handler's `data` type in msgspec's lax mode,
    where a number sent as a string (`"starting_seat": "0"`) passes; the contract answers 400
    for values that fail the schema, so the handlers convert the body again, strictly. JSON
    Schema counts `4.0` as an integer, and so does this.

    First with a decoder built once per type (strict, about 1 us for an action); a body it
    refuses takes the slower path below, which also accepts `4.0` as 4 and words the error."""
    body = await request.body()
    decoder = _strict_decoders.get(body_type)
    if decoder is None:
        decoder = _strict_decoders[body_type] = msgspec.json.Decoder(body_type)
    try:
        return decoder.decode(body)
    except msgspec.DecodeError:
        pass
    try:
        value = _integral_floats_as_ints(msgspec.json.decode(body))
        return msgspec.convert(value, type=body_type, strict=True)
    except msgspec.DecodeError as exc:  # ValidationError included
        raise problem(
            400, "invalid_request", str(exc), errors=[{"message": str(exc), "source": "body"}]
        ) from None


def _integral_floats_as_ints(value: Any) -> Any:
    """The API has no fractional fields: `4.0` is the integer 4 (as in JSON Schema).

    Recursive, but only ever given bodies Litestar already converted to the handler's type,
    so as deep as those types (a few levels), never as deep as a hostile body."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral_floats_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item) for key, item in value.items()}
    return value


def authorization_of(request: Request) -> str | None:
    """getGame's optional `Authorization` header, read from the ASGI scope (documented by
    `ReadsAuthorization`). Declared as a header parameter it cost 8-12 us of a ~180 us read
    in-process, 4-7% (bench/breakdown_http.py and an A/B of the two handlers, medians of 30
    rounds); act's declared headers and body cost ~5 us of 300-450 us, so act declares them."""
    for key, value in request.scope["headers"]:
        if key == b"authorization":
            return value.decode("latin-1")
    return None


@dataclass
class ReadsAuthorization(Operation):
    """getGame's operation, with the `Authorization` header its handler reads itself."""

    def __post_init__(self) -> None:
        header = OpenAPIParameter(
            name="Authorization",
            param_in=ParamType.HEADER,
            required=False,
            description=AUTHORIZATION_DESCRIPTION,
            schema=Schema(type=OpenAPIType.STRING, description=AUTHORIZATION_DESCRIPTION),
        )
        self.parameters = [*(self.parameters or []), header]


def games_of(request: Request) -> GameService:
    """The game use cases, from the app state. Not dependency injection: Litestar resolving
    a dependency cost more than a whole game read (bench/breakdown_http.py)."""
    return request.app.state.service


class GamesController(Controller):
    path = "/v1/games"
    tags: ClassVar[list[str]] = ["games"]

    @post(
        "/",
        operation_id="createGame",
        summary="Create a game",
        status_code=201,
        description="Creates a game. The seat tokens of the human seats are in `seats`, shown "
        "only here. Bot seats move by themselves; a game of bots only is played to its end.",
        response_headers=[ETAG, LOCATION],
        responses=problems(409, 413),
    )
    async def create_game(
        self, request: Request, data: JSONBody[CreateGameIn]
    ) -> Response[CreatedGameOut]:
        service = games_of(request)
        data = await strictly(request, CreateGameIn)
        created = await service.create(
            [(p.name, p.bot) for p in data.players],
            player_ids=[p.player_id for p in data.players],
            starting_seat=data.starting_seat,
            deck=data.deck,
            rules=data.rules,
        )
        record = created.record
        body = CreatedGameOut(
            seats=[SeatToken(seat=seat, token=token) for seat, token in created.tokens],
            **view_fields(record, None),
        )
        return Response(
            body,
            status_code=201,
            headers={"Location": f"/v1/games/{record.id}", "ETag": etag(record.version)},
        )

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="Read a game",
        description="The public state of a game. With a seat token, also the legal actions of "
        "that seat (empty when it is not that seat's decision).",
        security=[{}, {SEAT_TOKEN: []}],
        response_headers=[ETAG],
        responses=problems(401, 403, 404),
        operation_class=ReadsAuthorization,
    )
    async def get_game(self, request: Request, game_id: GameId) -> Response[GameOut]:
        service = games_of(request)
        try:
            record = await service.get(game_id)
        except ServiceError as exc:
            # a finished game outlives the live store's expiry in the archive
            history: History = request.app.state.history
            view = await history.final_view(game_id) if exc.code == "game_not_found" else None
            if view is None:
                raise
            body = GameOut(
                id=game_id, seat=None, legal_actions=None, **msgspec.structs.asdict(view)
            )
            return Response(body, headers={"ETag": etag(view.version)})
        seat = await service.seat_of(record, bearer_token(authorization_of(request)))
        return Response(  # encoded here: Litestar's serializer path costs more
            _encoder.encode(GameOut(**view_fields(record, seat))),
            media_type=JSON,
            headers={"ETag": etag(record.version)},
        )

    @post(
        "/{game_id:str}/actions",
        operation_id="act",
        summary="Act in a game",
        status_code=200,
        description="Applies one action for the token's seat, then every bot move it hands the "
        "turn to. Returns the new state and the events produced.",
        security=[{SEAT_TOKEN: []}],
        response_headers=[ETAG, REPLAYED],
        responses=problems(401, 403, 404, 409, 412, 413),
    )
    async def act(
        self,
        request: Request,
        game_id: GameId,
        data: JSONBody[Action],
        authorization: RequiredAuthorization = None,
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[ActedOut]:
        service = games_of(request)
        data = await strictly(request, Action)
        fingerprint = ""
        if idempotency_key is not None:  # a retry must send the same body
            fingerprint = hashlib.sha256(await request.body()).hexdigest()
        acted = await service.act(
            game_id,
            bearer_token(authorization),
            data,
            expected_version=parse_if_match(if_match),
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
        )
        if isinstance(acted, RenderedResponse):  # remembered by an older release, as it answered
            return Response(
                acted.body,
                status_code=acted.status,
                media_type=JSON,
                headers={"ETag": etag(acted.version), "Idempotent-Replayed": "true"},
            )
        headers = {"ETag": etag(acted.record.version)}
        if acted.replayed:
            headers["Idempotent-Replayed"] = "true"
        return Response(render_acted(acted), media_type=JSON, headers=headers)

    list_events = events_handler(
        GameId,
        lambda request: games_of(request).events,
        operation_id="listEvents",
        summary="Read the event log",
        description="The game's events with `seq` greater than `after`, oldest first.",
    )

    @get_game_part(
        "/{game_id:str}/events/stream",
        operation_id="streamEvents",
        summary="Follow the event log (server-sent events)",
        description="A text/event-stream of the game's events: `id` is the event's seq, `event` "
        "its type, `data` the event JSON. Resume with `Last-Event-ID` (or `after`). Comment lines "
        "keep the connection alive. The stream ends after `game_finished`.",
        media_type="text/event-stream",
    )
    async def stream_events(
        self,
        request: Request,
        game_id: GameId,
        after: After = 0,
        last_event_id: Annotated[
            str | None,
            HeaderParameter(
                name="Last-Event-ID",
                required=False,
                max_length=20,
                description="The `id` of the last event received: the stream resumes after it.",
            ),
        ] = None,
    ) -> ServerSentEvent:
        service = games_of(request)
        await service.get(game_id)
        start = after
        if last_event_id is not None and last_event_id.strip().isdigit():
            start = int(last_event_id.strip())
        keepalive = service.settings.sse_keepalive
        return ServerSentEvent(follow(service, game_id, start, keepalive, request))


async def follow(
    service: GameService, game_id: str, after: int, keepalive: float, request: Request
) -> AsyncIterator[ServerSentEventMessage]:
    # comments carry no `data:` line, so an EventSource dispatches nothing for them
    yield ServerSentEventMessage(data=None, comment="ten event stream", retry=2000)
    idle = False
    while True:
        found = await service.store.events(game_id, after, 1000)
        if not found:
            record = await service.store.load(game_id)
            if record is None:
                return  # expired
            if record.state.phase == "finished":
                if record.state.last_seq > after:
                    # the final save landed between the two reads: its events are there now
                    continue
                # finished with nothing after `after`: a reconnecting client (EventSource
                # does that) gets an ended stream, not keep-alives for a day
                return
            if idle:
                yield ServerSentEventMessage(data=None, comment="keep-alive")
            found = await service.store.wait_events(game_id, after, keepalive)
            idle = not found
            if not found:
                continue
        idle = False
        for event in found:
            after = event.seq
            kind = msgspec.json.decode(event.data, type=_EventType).type
            yield ServerSentEventMessage(data=event.data.decode(), id=event.seq, event=kind)
            if kind == "game_finished":
                return
        await asyncio.sleep(0)


class _EventType(msgspec.Struct):
    type: str


@post(
    "/v1/scores",
    operation_id="scoreCollection",
    summary="Score a collection",
    status_code=200,
    tags=["rules"],
    responses=problems(413),
)
async def score(request: Request, data: JSONBody[ScoreIn]) -> ScoreOut:
    data = await strictly(request, ScoreIn)
    rules = data.rules or Rules()
    check_copies(data.cards)
    result = score_collection(data.cards, rules.perfect_bonus)
    return ScoreOut(total=result.total, colors=result.colors)


@get(
    "/v1/rules",
    operation_id="getRules",
    summary="The deck manifest and rule options",
    tags=["rules"],
)
async def rules() -> RulesOut:
    return RulesOut(
        manifest=list(MANIFEST),
        deck_sizes={str(n): deck_size(n) for n in range(1, 6)},
        options={
            "perfect_bonus": RuleOption(
                default=Rules().perfect_bonus,
                minimum=0,
                maximum=100,
                description="Points added for a colour whose run is 1-9.",
            )
        },
        bots=list(BOT_LEVELS),
        error_codes={**RULE_ERROR_CODES, **SERVICE_ERROR_CODES},
    )


@get("/health", operation_id="health", summary="Liveness", tags=["operations"])
async def health() -> Health:
    return Health(status="ok")


@get(
    "/ready", operation_id="ready", summary="Readiness: the game store answers", tags=["operations"]
)
async def ready(request: Request) -> Health:
    service = games_of(request)
    await service.store.ping()
    return Health(status="ready")
