"""Thin controllers: decode a Struct, call a use case, encode a Struct."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from litestar.params import Parameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from domain.cards import MANIFEST, deck_size
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
)
from service.errors import SERVICE_ERROR_CODES
from service.games import GameService
from service.ports import GameRecord

JSON = "application/json"
GameId = Annotated[
    str, Parameter(description="The game's id, as returned by createGame.", max_length=64)
]
Authorization = Annotated[
    str | None,
    Parameter(
        header="Authorization",
        required=False,
        description="`Bearer <seat token>`: the credential returned for a seat by createGame.",
    ),
]
_encoder = msgspec.json.Encoder()


def etag(version: int) -> str:
    return f'"{version}"'


def view_fields(record: GameRecord, seat: int | None) -> dict:
    view = public_view(record.state)
    legal = None if seat is None else legal_actions(record.state, seat)
    return {
        "id": record.id,
        "seat": seat,
        "legal_actions": legal,
        **msgspec.structs.asdict(view),
    }


def render_acted(record: GameRecord, seat: int | None, events: Sequence[Event]) -> bytes:
    return _encoder.encode(ActedOut(events=list(events), **view_fields(record, seat)))


def parse_if_match(value: str | None) -> int | None:
    if value is None:
        return None
    text = value.strip()
    if text.startswith("W/"):
        text = text[2:]
    text = text.strip('"')
    if not text.isdigit() or len(text) > 12:
        raise problem(400, "invalid_request", 'If-Match must be a game version such as "7".')
    return int(text)


async def provide_service(state: State) -> GameService:
    return state.service


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
        self, data: CreateGameIn, service: GameService
    ) -> Response[CreatedGameOut]:
        created = await service.create(
            [(p.name, p.bot) for p in data.players],
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
    async def get_game(
        self, game_id: GameId, service: GameService, authorization: Authorization = None
    ) -> Response[GameOut]:
        record = await service.get(game_id)
        seat = await service.seat_of(record, authorization)
        return Response(
            GameOut(**view_fields(record, seat)), headers={"ETag": etag(record.version)}
        )

    @post(
        "/{game_id:str}/actions",
        operation_id="act",
        summary="Act in a game",
        status_code=200,
        description="Applies one action for the token's seat, then every bot move it hands the "
        "turn to. Returns the new state and the events produced.",
    )
    async def act(
        self,
        request: Request,
        game_id: GameId,
        data: Action,
        service: GameService,
        authorization: Authorization = None,
        if_match: Annotated[
            str | None,
            Parameter(
                header="If-Match",
                required=False,
                max_length=64,
                description='The version the action was chosen on, e.g. `"7"`; 412 if the game moved on.',
            ),
        ] = None,
        idempotency_key: Annotated[
            str | None,
            Parameter(
                header="Idempotency-Key",
                required=False,
                min_length=1,
                max_length=200,
                description="A retry with the same key and body returns the first response.",
            ),
        ] = None,
    ) -> Response[ActedOut]:
        body = await request.body()
        acted = await service.act(
            game_id,
            authorization,
            data,
            render=render_acted,
            if_match=parse_if_match(if_match),
            idempotency_key=idempotency_key,
            fingerprint=hashlib.sha256(body).hexdigest(),
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
        service: GameService,
        after: Annotated[
            int, Parameter(ge=0, le=10**9, description="Only events after this seq.")
        ] = 0,
        limit: Annotated[
            int, Parameter(ge=1, le=1000, description="At most this many events.")
        ] = 1000,
    ) -> Response[EventsOut]:
        stored = await service.events(game_id, after, limit + 1)
        more = len(stored) > limit
        stored = stored[:limit]
        body = EventsOut(
            game_id=game_id,
            events=[msgspec.Raw(e.data) for e in stored],  # already JSON: not decoded again
            last_seq=stored[-1].seq if stored else after,
            more=more,
        )
        return Response(body)

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
        service: GameService,
        after: Annotated[int | None, Parameter(ge=0, le=10**9, required=False)] = None,
        last_event_id: Annotated[
            str | None, Parameter(header="Last-Event-ID", required=False, max_length=20)
        ] = None,
    ) -> ServerSentEvent:
        await service.get(game_id)
        start = after or 0
        if last_event_id is not None and last_event_id.strip().isdigit():
            start = int(last_event_id.strip())
        keepalive = service.settings.sse_keepalive
        return ServerSentEvent(follow(service, game_id, start, keepalive, request))


async def follow(
    service: GameService, game_id: str, after: int, keepalive: float, request: Request
) -> AsyncIterator[ServerSentEventMessage]:
    yield ServerSentEventMessage(comment="ten event stream", retry=2000)
    while True:
        found = await service.store.wait_events(game_id, after, keepalive)
        if not found:
            if await service.store.load(game_id) is None:
                return  # expired
            yield ServerSentEventMessage(comment="keep-alive")
            continue
        for event in found:
            after = event.seq
            kind = msgspec.json.decode(event.data, type=dict)["type"]
            yield ServerSentEventMessage(data=event.data.decode(), id=event.seq, event=kind)
            if kind == "game_finished":
                return
        await asyncio.sleep(0)


@post(
    "/v1/scores",
    operation_id="scoreCollection",
    summary="Score a collection",
    status_code=200,
    tags=["rules"],
)
async def score(data: ScoreIn) -> ScoreOut:
    rules = data.rules or Rules()
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
async def ready(service: GameService) -> Health:
    await service.store.ping()
    return Health(status="ready")
