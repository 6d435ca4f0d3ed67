"""Thin controllers: decode a Struct, call a use case, encode a Struct."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Litestar, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.middleware.rate_limit import get_remote_address
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, JSONBody, Parameter, QueryParameter
from litestar.response import Stream
from litestar.routes import HTTPRoute

from domain.bots.clock import remaining
from domain.game.cards import MANIFEST, check_copies, deck_size
from domain.game.errors import RULE_ERROR_CODES
from domain.game.legal import legal_actions, seat_actions
from domain.game.model import BOT_LEVELS, Action, Clock, Rules
from domain.game.scoring import score_collection
from domain.game.views import public_view
from infra.watchers import REFUSAL_RETRY_AFTER, Slot, StreamsRefused, Watchers
from service.core.errors import SERVICE_ERROR_CODES, ServiceError
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.core.quotas import owner_of
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.boundary import policed
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.paging import After, ReadEvents, events_handler, number_in
from service.entrypoints.api.problems import foreign, get_game_part, problem, problems
from service.entrypoints.api.schemas import (
    ActedOut,
    ClockOut,
    CreatedGameOut,
    CreatedTableOut,
    CreateGameIn,
    GameListItem,
    GameOut,
    GamesPage,
    Health,
    PlayerId,
    ReviewPending,
    RuleOption,
    RulesOut,
    ScoreIn,
    ScoreOut,
    SeatToken,
    TableOut,
    TableSeatOut,
)
from service.games.commands import Act, CreateTable, SeatRequest
from service.games.use_cases import Acted, GameService
from service.history.reads import History
from service.history.reviews import RETRY_AFTER, ReviewOut, Reviews
from service.lobby.records import Page
from service.lobby.use_cases import Lobby
from service.tournaments.secrecy import Secrecy

JSON = "application/json"
GameId = Annotated[
    str, Parameter(description="The game's id, as returned by createGame.", max_length=64)
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
LastEventId = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        # 0 to 1000000000 in ASCII digits, as the schema can say it (the handler reads it
        # again: service.core.numbers)
        pattern=r"^([0-9]{1,9}|1000000000)(?!\n)$",
        description="The `id` of the last event received: the stream resumes after it. ASCII "
        "digits, 0 to 1000000000 (else 400).",
    ),
]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description="A retry with the same key and the same request (its decoded body) returns "
        "the first response with `Idempotent-Replayed: true`, at once, even after a store "
        "failure or a crash cut the first one off (its effect was stored with its answer, or "
        "nothing was: a retry is never told the first is still in progress, a defect fixed); "
        "the same key with another request is 409 `idempotency_key_reused`.",
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
    "`Idempotency-Key`, sent again (nothing was done again).",
    always=False,
)
SEAT_TOKEN = "seatToken"  # the security scheme of the seat tokens (service.entrypoints.api.openapi)
_encoder = msgspec.json.Encoder()


def etag(version: int) -> str:
    return f'"{version}"'


def view_fields(record: GameRecord, seat: int | None) -> dict:
    state = record.state
    assert state is not None
    view = public_view(state)
    stopped = record.stopped
    legal = others = None
    if seat is not None and not stopped:
        legal, others = legal_actions(state, seat), seat_actions(state, seat)
    fields = {
        "id": record.id,
        "seat": seat,
        "legal_actions": legal,
        "seat_actions": others,
        **msgspec.structs.asdict(view),
    }
    if stopped:
        fields["status"] = record.status
    if state.clock is not None:
        fields["clock"] = clock_out(state.clock, time.time())
    return fields


def clock_out(clock: Clock, now: float) -> ClockOut:
    left = None  # a deadline clock has no banks
    if clock.banks:
        left = [remaining(clock, seat, now) or 0.0 for seat in range(len(clock.banks))]
    return ClockOut(
        control=clock.control,
        seat=clock.seat,
        since=clock.since,
        deadline=clock.deadline,
        server_time=now,
        remaining=left,
        timeouts=list(clock.timeouts),
    )


def seats_out(record: GameRecord) -> list[TableSeatOut]:
    """Who sits where: a table's seats, or a game's players with their ids."""
    if record.table is not None and record.state is None:
        return [
            TableSeatOut(
                seat=i, name=s.name, bot=s.bot, player_id=s.player_id, verified=s.verified,
                open=s.open, taken=s.taken,
            )
            for i, s in enumerate(record.table.seats)
        ]  # fmt: skip
    assert record.state is not None
    ids, verified = record.player_ids, record.verified
    return [
        TableSeatOut(
            seat=p.seat, name=p.name, bot=p.bot,
            player_id=ids[p.seat] if p.seat < len(ids) else None,
            verified=p.seat < len(verified) and verified[p.seat], open=False, taken=True,
        )
        for p in record.state.players
    ]  # fmt: skip


def table_fields(record: GameRecord) -> dict:
    table = record.table
    assert table is not None
    return {
        "id": record.id,
        "version": record.version,
        "status": record.status,
        "created_at": record.created_at,
        "private": table.private,
        "fill": table.fill,
        "fill_bot": table.fill_bot,
        "rules": table.rules or Rules(),
        "seats": seats_out(record),
        "clock": table.clock,
    }


def game_or_table(record: GameRecord, seat: int | None) -> GameOut | TableOut:
    if record.state is None:
        return TableOut(**table_fields(record))
    return GameOut(**view_fields(record, seat))


def render_acted(acted: Acted) -> bytes:
    """An action's answer; a replayed one renders to the bytes of the first. Its events are
    their JSON as stored (the log's bytes, encoded once)."""
    events = [msgspec.Raw(e.data) for e in acted.events]
    return _encoder.encode(ActedOut(events=events, **view_fields(acted.record, acted.seat)))


def parse_if_match(value: str | None) -> int | None:
    """The version an `If-Match` names (its pattern checked already): `"7"` or 7; `*`, any."""
    if value is None:
        return None
    text = value.strip(" \t")
    return None if text == "*" else number_in("If-Match", text.strip('"'), high=10**12 - 1)


_strict_decoders: dict[Any, msgspec.json.Decoder] = {}


async def strictly(request: Request, body_type: Any) -> Any:
    """The JSON body converted as strictly as the schema reads it.

    Litestar converts the decoded JSON to the handler's `data` type in msgspec's lax mode,
    where a number sent as a string (`"starting_seat": "0"`) passes; the contract answers 400
    for values that fail the schema, so the handlers convert the body again, strictly. JSON
    Schema counts `4.0` as an integer, and so does this.

    First with a decoder built once per type (strict, the fast path); a body it
    refuses takes the slower path below, which also accepts `4.0` as 4 and words the error."""
    body = await request.body()
    decoder = _strict_decoders.get(body_type)
    if decoder is None:
        decoder = _strict_decoders[body_type] = msgspec.json.Decoder(body_type)
    try:
        return policed(decoder.decode(body), body_type)  # the text policy: one boundary
    except msgspec.DecodeError:
        pass
    try:
        value = _integral_floats_as_ints(msgspec.json.decode(body))
        return policed(msgspec.convert(value, type=body_type, strict=True), body_type)
    except msgspec.DecodeError as exc:  # ValidationError included
        raise problem(
            400,
            "invalid_request",
            foreign(str(exc)),
            errors=[{"message": str(exc), "source": "body"}],
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


def games_of(request: Request) -> GameService:
    """The game use cases, from the app state. Not dependency injection: Litestar resolving
    a dependency cost more than a whole game read."""
    return request.app.state.service


def secrecy_of(request: Request) -> Secrecy:
    """Who may read a tournament's game now (`service.tournaments.secrecy`), from the app state."""
    return request.app.state.secrecy


async def live_game(request: AuthenticatedRequest, game_id: str) -> GameRecord:
    """A live game one of its own reads (events, stream, odds) may show the caller: 404
    without it, 403 `game_embargoed` while it is a tournament's secret to the caller."""
    record = await games_of(request).get(game_id)
    await secrecy_of(request).check(record, request.user, live=True)
    return record


def live_events(request: AuthenticatedRequest) -> ReadEvents:
    """The live game's events, for a caller who may read them (`live_game`)."""

    async def read(game_id: str, after: int, limit: int) -> list[StoredEvent]:
        await live_game(request, game_id)
        return await games_of(request).store.events(game_id, after, limit)

    return read


def _listed(record: GameRecord) -> GameListItem:
    private = record.table is not None and record.table.private
    return GameListItem(
        id=record.id,
        status=record.status,  # type: ignore[arg-type]  # listings hold open and live games
        version=record.version,
        created_at=record.created_at,
        private=private,
        seats=seats_out(record),
    )


def _page(page: Page) -> GamesPage:
    return GamesPage(games=[_listed(r) for r in page.games], next_cursor=page.next_cursor)


def allow_every_method(app: Litestar) -> None:
    """Litestar 2's automatic OPTIONS answer names only the methods of the first handler
    registered on a path (litestar-org/litestar#4169, fixed in v3): `/v1/games` has two
    (createGame, listGames). Its handler reads the methods of the route it was made for; point
    it at the route that holds every handler of the path."""
    for found in app.routes:
        if not isinstance(found, HTTPRoute):
            continue
        for handler in found.route_handlers:
            cells = handler.fn.__closure__ if handler.handler_name == "options_handler" else None
            if cells and isinstance(cells[0].cell_contents, HTTPRoute):
                cells[0].cell_contents = found


def lobby_of(request: Request) -> Lobby:
    """The lobby's use cases, from the app state (as `games_of`)."""
    return request.app.state.lobby


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
        response_headers=[ETAG, LOCATION, REPLAYED],
        responses=problems(401, 409, 413),
        before_request=authenticate,  # before the body: a bad credential is 401 first
    )
    async def create_game(
        self,
        request: AuthenticatedRequest,
        data: JSONBody[CreateGameIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[CreatedGameOut | CreatedTableOut]:
        data = await strictly(request, CreateGameIn)
        command = CreateTable(
            caller=request.user,
            seats=tuple(
                SeatRequest(name=p.name, bot=p.bot, player_id=p.player_id, open=p.open)
                for p in data.players
            ),
            private=data.private,
            fill=data.fill,
            fill_bot=data.fill_bot,
            starting_seat=data.starting_seat,
            deck=None if data.deck is None else tuple(data.deck),
            rules=data.rules,
            clock=data.clock,
            idempotency_key=idempotency_key,
            origin=get_remote_address(request),
        )
        created = await lobby_of(request).create(command)
        record = created.record
        tokens = [SeatToken(seat=seat, token=token) for seat, token in created.tokens]
        body: CreatedGameOut | CreatedTableOut
        if record.state is None:
            body = CreatedTableOut(
                tokens=tokens,
                host_token=created.host_token,
                invite_code=created.invite_code,
                **table_fields(record),
            )
        else:
            body = CreatedGameOut(
                seats=tokens, host_token=created.host_token, **view_fields(record, None)
            )
        headers = {"Location": f"/v1/games/{record.id}", "ETag": etag(record.version)}
        if created.replayed:
            headers["Idempotent-Replayed"] = "true"
        return Response(_encoder.encode(body), status_code=201, media_type=JSON, headers=headers)

    @get(
        "/",
        operation_id="listGames",
        summary="Find games: open tables, or a player's games",
        description="Without `player_id`: the public tables waiting for players. With it: that "
        "player's open tables and live games (for that player's JWT or the platform; anyone "
        "while the service runs open). Newest first; `next_cursor` fetches the next page.",
        security=[{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}],
        responses=problems(400, 401, 403),
        before_request=authenticate,
    )
    async def list_games(
        self,
        request: AuthenticatedRequest,
        player_id: Annotated[
            PlayerId | None,
            QueryParameter(description="Whose games: that player's open tables and live games."),
        ] = None,
        cursor: Annotated[str | None, Parameter(max_length=200)] = None,
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
    ) -> GamesPage:
        lobby = lobby_of(request)
        if player_id is None:
            return _page(await lobby.list_open(cursor, limit))
        return _page(await lobby.list_player(request.user, player_id, cursor, limit))

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="Read a game",
        description="The public state of a game. With a seat token, also the legal actions of "
        "that seat (empty when it is not that seat's decision). A game of a tournament round "
        "whose deal is still being played at another table is 403 `game_embargoed` to all but "
        "the platform and its own players (README: Tournaments).",
        security=[{}, {SEAT_TOKEN: []}, {PLAYER_TOKEN: []}],
        response_headers=[ETAG],
        responses=problems(401, 403, 404),
        before_request=authenticate,
    )
    async def get_game(
        self, request: AuthenticatedRequest, game_id: GameId
    ) -> Response[GameOut | TableOut]:
        service = games_of(request)
        try:
            record = await service.get(game_id)
        except ServiceError as exc:
            # a finished game outlives the live store's expiry in the archive
            history: History = request.app.state.history
            found = exc.code == "game_not_found"
            view = await history.final_view(game_id, request.user) if found else None
            if view is None:
                raise
            body = GameOut(
                id=game_id, seat=None, legal_actions=None, **msgspec.structs.asdict(view)
            )
            return Response(body, headers={"ETag": etag(view.version)})
        seat = await service.seat_or_none(record, request.user)
        if seat is None:  # a player reads their own game
            await secrecy_of(request).check(record, request.user)
        return Response(  # encoded here: Litestar's serializer path costs more
            _encoder.encode(game_or_table(record, seat)),
            media_type=JSON,
            headers={"ETag": etag(record.version)},
        )

    @post(
        "/{game_id:str}/actions",
        operation_id="act",
        summary="Act in a game",
        status_code=200,
        description="Applies one action for the token's seat, then every bot move it hands the "
        "turn to. Returns the new state and the events produced. `resign` (leave: a bot plays "
        "the seat on and it ranks last) and `reclaim` (take back a seat a bot took over after "
        "timeouts) may be sent whoever's turn it is; every other action only by the seat the "
        "game waits on (`to_act`), before its clock's deadline.",
        security=[{SEAT_TOKEN: []}, {PLAYER_TOKEN: []}],
        response_headers=[ETAG, REPLAYED],
        responses=problems(401, 403, 404, 409, 412, 413),
        before_request=authenticate,
    )
    async def act(
        self,
        request: AuthenticatedRequest,
        game_id: GameId,
        data: JSONBody[Action],
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[ActedOut]:
        service = games_of(request)
        data = await strictly(request, Action)
        command = Act(
            caller=request.user,
            game_id=game_id,
            action=data,
            expected_version=parse_if_match(if_match),
            idempotency_key=idempotency_key,
        )
        acted = await service.act(command)
        headers = {"ETag": etag(acted.record.version)}
        if acted.replayed:
            headers["Idempotent-Replayed"] = "true"
        return Response(render_acted(acted), media_type=JSON, headers=headers)

    @get(
        "/{game_id:str}/review",
        operation_id="getGameReview",
        summary="Review a finished game",
        description="Every decision of a finished game (live or archived) valued from what its "
        "player knew, as the master bot's own search values it: each legal action's `chance` "
        "(the seat's winning chance after it) and `value` (its expected margin in points over "
        "the others' mean), the one chosen, master's best, what was lost in percentage points "
        "of winning chance (the drop in winning chance, or 3 per point of margin dropped if "
        "more) and a grade (`best` none lost, `good` < 2, `inaccuracy` < 5, `mistake` < 10, "
        "else `blunder`); per seat, its accuracy (Lichess's curve of what was lost), the sum "
        "lost, and its final margin in points split into `start + skill + "
        "luck` (luck: each card drawn's value less the draw's expectation); each seat's chance "
        "of winning before every action. Computed once, in the background: 202 with "
        "`Retry-After` while it is, then 200 with the review, kept for good. A game still "
        "being played, aborted or abandoned is 409 `game_not_reviewable`. A review the "
        "service failed to compute (its job set aside after repeated failures) is 500 "
        "`review_failed`, without `Retry-After`: stop asking, it stays so until an operator "
        "requeues it (`python -m service.cli jobs requeue reviews <game id>`). A new request "
        "past the reviews one caller may wait for (`TEN_MAX_PENDING_REVIEWS`) is 429 "
        "`too_many_pending_reviews`, past those waiting in all (`TEN_REVIEW_QUEUE`) 429 "
        "`too_many_reviews`, both with `Retry-After`. A game of a tournament round whose deal "
        "is still being played at another table is 403 `game_embargoed` to all but the "
        "platform.",
        responses={
            202: ResponseSpec(
                data_container=ReviewPending,
                description="The review is being computed: ask again after `Retry-After` seconds.",
                generate_examples=False,
            ),
            **problems(401, 403, 404, 409),
        },
        before_request=authenticate,  # whose quota a new request counts in
    )
    async def get_review(
        self, request: AuthenticatedRequest, game_id: GameId
    ) -> Response[ReviewOut]:
        reviews: Reviews = request.app.state.reviews
        await secrecy_of(request).check_id(game_id, request.user)  # before any work is queued
        owner = owner_of(request.user, get_remote_address(request))
        review = await reviews.review(game_id, owner)
        if review is not None:
            return Response(review, media_type=JSON)
        pending = ReviewPending(game_id=game_id, status="pending", retry_after=RETRY_AFTER)
        return Response(
            _encoder.encode(pending),
            status_code=202,
            media_type=JSON,
            headers={"Retry-After": str(RETRY_AFTER)},
        )

    list_events = events_handler(
        GameId,
        live_events,
        operation_id="listEvents",
        summary="Read the event log",
        description="The game's events with `seq` greater than `after`, oldest first.",
        security=[{}, {SEAT_TOKEN: []}, {PLAYER_TOKEN: []}],
    )

    @get_game_part(
        "/{game_id:str}/events/stream",
        401,
        operation_id="streamEvents",
        summary="Follow the event log (server-sent events)",
        description="A text/event-stream of the game's events: `id` is the event's seq, `event` "
        "its type, `data` the event JSON. Resume with `Last-Event-ID` (or `after`). Comment lines "
        "keep the connection alive. The stream ends after `game_finished`. A stream the server "
        "cannot go on serving (its store failed, or the client fell more than `TEN_SSE_BUFFER` "
        "events behind) ends with `event: reconnect` (`data`: `type`, `reason` "
        "`store_unavailable` or `too_slow`, `retry_ms`; no `id`, so `Last-Event-ID` stays the "
        "last event's): reconnect after `retry_ms` and resume. A process holding "
        "`TEN_SSE_MAX_STREAMS` streams refuses a new one with 503 `too_many_streams`, a client "
        "address holding `TEN_SSE_MAX_PER_CLIENT` with 429 `too_many_streams_from_client`, both "
        "before the stream starts and with `Retry-After`.",
        media_type="text/event-stream",
        security=[{}, {SEAT_TOKEN: []}, {PLAYER_TOKEN: []}],
        before_request=authenticate,
    )
    async def stream_events(
        self,
        request: AuthenticatedRequest,
        game_id: GameId,
        after: After = 0,
        last_event_id: LastEventId = None,
    ) -> Stream:
        start = after if last_event_id is None else number_in("Last-Event-ID", last_event_id)
        watchers: Watchers = request.app.state.watchers
        slot = admit(watchers, request)  # before any read: a refusal costs no store read
        try:
            async with watchers.starting:
                await live_game(request, game_id)
        except BaseException:
            slot.release()
            raise
        return follow(watchers, game_id, start, slot)


def admit(watchers: Watchers, request: Request) -> Slot:
    """A slot for one more stream, or the refusal (503 or 429 with Retry-After) before the
    stream starts: the process, or the client (its address, as the rate limit counts
    clients), holds as many streams as allowed."""
    try:
        return watchers.admit(get_remote_address(request))
    except StreamsRefused as refused:
        retry = {"Retry-After": str(REFUSAL_RETRY_AFTER)}
        if refused.per_client:
            raise problem(
                429,
                "too_many_streams_from_client",
                "This client holds as many event streams as it may; close one or retry later.",
                retry,
            ) from None
        raise problem(
            503,
            "too_many_streams",
            "This server holds as many event streams as it may; retry later.",
            retry,
        ) from None


def follow(watchers: Watchers, game_id: str, after: int, slot: Slot) -> Stream:
    """The stream, served by the process's one reader (`infra.watchers`). Its blocks are
    encoded once per event for every stream, and sent together when several are due: hence
    Litestar's `Stream` with the headers of its `ServerSentEvent`, which would encode every
    message again for each stream and send each alone."""
    return sse(watchers.stream(game_id, after, slot))


def sse(body: AsyncIterator[bytes]) -> Stream:
    """A server-sent events response of these blocks (a game's stream, a tournament's)."""
    return Stream(
        body,
        media_type="text/event-stream",
        headers={
            "Cache-Control": "no-cache",
            "Connection": "keep-alive",
            "X-Accel-Buffering": "no",
        },
    )


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
