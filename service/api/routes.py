"""Thin controllers: decode a Struct, call a use case, encode a Struct."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import HeaderParameter, JSONBody, Parameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from domain.cards import MANIFEST, check_copies, deck_size
from domain.errors import RULE_ERROR_CODES
from domain.legal import legal_actions
from domain.model import Action, Event, Rules
from domain.scoring import score_collection
from domain.views import public_view
from service.api.problems import problem
from service.api.schemas import (
    ActedOut,
    CreatedGameOut,
    CreateGameIn,
    EventsOut,
    GameOut,
    Health,
    RuleOption,
    RulesOut,
    ScoreIn,
    ScoreOut,
    SeatToken,
    events_page,
)
from service.errors import SERVICE_ERROR_CODES, ServiceError
from service.games import GameService
from service.history import History
from service.ports import GameRecord

JSON = "application/json"
GameId = Annotated[
    str, Parameter(description="The game's id, as returned by createGame.", max_length=64)
]
AUTHORIZATION_DESCRIPTION = (
    "`Bearer <seat token>`: the credential returned for a seat by createGame."
)
_encoder = msgspec.json.Encoder()
IF_MATCH_DESCRIPTION = (
    'The version the action was chosen on, as the ETag gave it (`"7"`; a bare `7` is accepted '
    "too); 412 if the game moved on. `*` matches any version."
)
IDEMPOTENCY_KEY_DESCRIPTION = "A retry with the same key and body returns the first response."
IDEMPOTENCY_KEY_MAX = 200
_ACT_HEADERS = frozenset((b"authorization", b"if-match", b"idempotency-key"))
# one strong entity tag naming a version (`"7"`; the bare `7` is accepted too) or `*`
IF_MATCH_PATTERN = r'^(\*|[0-9]{1,12}|"[0-9]{1,12}")$'
_IF_MATCH = re.compile(IF_MATCH_PATTERN)


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


def render_acted(record: GameRecord, seat: int | None, events: Sequence[Event]) -> bytes:
    return _encoder.encode(ActedOut(events=list(events), **view_fields(record, seat)))


def parse_if_match(value: str | None) -> int | None:
    """The version an `If-Match` names: our ETags are strong, `"7"`; `*` is any version."""
    if value is None:
        return None
    text = value.strip(" \t")
    if _IF_MATCH.fullmatch(text) is None:
        raise problem(400, "invalid_request", 'If-Match must be a game version such as "7", or *.')
    return None if text == "*" else int(text.strip('"'))


_strict_decoders: dict[Any, msgspec.json.Decoder] = {}


async def strictly(request: Request, body_type: Any) -> Any:
    """The JSON body converted as strictly as the schema reads it.

    Litestar converts the decoded JSON to the handler's type in msgspec's lax mode, where a
    number sent as a string (`"starting_seat": "0"`) passes; the contract answers 400 for values
    that fail the schema, so the handlers convert the body again, strictly. JSON Schema counts
    `4.0` as an integer, and so does this.

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


def act_headers(request: Request) -> tuple[str | None, str | None, str | None]:
    """act's `Authorization`, `If-Match` and `Idempotency-Key` (the first of each), the last
    checked as the OpenAPI document declares it (400 otherwise)."""
    found: dict[bytes, str] = {}
    for key, value in request.scope["headers"]:
        if key in _ACT_HEADERS and key not in found:
            found[key] = value.decode("latin-1")
    key = found.get(b"idempotency-key")
    if key is not None and not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX:
        raise problem(
            400,
            "invalid_request",
            f"Idempotency-Key must have 1 to {IDEMPOTENCY_KEY_MAX} characters.",
            errors=[
                {"message": "too short or too long", "key": "Idempotency-Key", "source": "header"}
            ],
        )
    return found.get(b"authorization"), found.get(b"if-match"), key


def header_value(request: Request, name: bytes) -> str | None:
    """A request header (`name` in lower case, as ASGI gives them), read from the scope.

    For the hottest route (getGame): a declared header parameter made Litestar decode every
    header of every request first, ~10 us of a ~200 us read (bench/breakdown_http.py). The
    OpenAPI document still declares the header (`service.api.openapi`)."""
    for key, value in request.scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


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
    )
    async def get_game(self, request: Request, game_id: GameId) -> Response[GameOut]:
        # the hottest route takes the use cases from the app state, not by injection:
        # resolving two dependencies cost Litestar more than the read itself
        # (bench/breakdown_http.py: ~110 us of ~180 us of framework time per request)
        service = games_of(request)
        history: History = request.app.state.history
        try:
            record = await service.get(game_id)
        except ServiceError as exc:
            # a finished game outlives the live store's expiry in the archive
            view = await history.final_view(game_id) if exc.code == "game_not_found" else None
            if view is None:
                raise
            body = GameOut(
                id=game_id, seat=None, legal_actions=None, **msgspec.structs.asdict(view)
            )
            return Response(body, headers={"ETag": etag(view.version)})
        seat = await service.seat_of(record, header_value(request, b"authorization"))
        return Response(  # encoded here: Litestar's serializer path costs more (see act)
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
    )
    async def act(self, request: Request, game_id: GameId) -> Response[ActedOut]:
        # The body (an Action) and the headers are read here, once: as handler parameters,
        # Litestar decoded the body a first time (~7 us) and every header (~10 us) before the
        # handler ran. The OpenAPI document declares them (`service.api.openapi`).
        service = games_of(request)
        authorization, if_match, idempotency_key = act_headers(request)
        data = await strictly(request, Action)
        fingerprint = ""
        if idempotency_key is not None:  # a retry must send the same body
            fingerprint = hashlib.sha256(await request.body()).hexdigest()
        acted = await service.act(
            game_id,
            authorization,
            data,
            render=render_acted,
            if_match=parse_if_match(if_match),
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
        )
        headers = {"ETag": etag(acted.version)}
        if acted.replayed:
            headers["Idempotent-Replayed"] = "true"
        return Response(acted.body, status_code=acted.status, media_type=JSON, headers=headers)

    @get(
        "/{game_id:str}/events",
        operation_id="listEvents",
        summary="Read the event log",
        description="The game's events with `seq` greater than `after`, oldest first.",
    )
    async def list_events(
        self,
        game_id: GameId,
        request: Request,
        after: Annotated[
            int, Parameter(ge=0, le=10**9, description="Only events after this seq.")
        ] = 0,
        limit: Annotated[
            int, Parameter(ge=1, le=1000, description="At most this many events.")
        ] = 1000,
    ) -> Response[EventsOut]:
        service = games_of(request)
        stored = await service.events(game_id, after, limit + 1)
        return Response(events_page(game_id, stored, after, limit))

    @get(
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
        after: Annotated[
            int, Parameter(ge=0, le=10**9, description="Only events after this seq.")
        ] = 0,
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
        bots=["random", "basic"],
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
