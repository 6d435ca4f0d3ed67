"""The games' routes (create, list, read, act, review, the event log and its stream) and the
app-state accessors the routes share: thin controllers that decode a Struct, call a use case,
encode a Struct."""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec
from litestar import Controller, Litestar, Request, Response, get, post
from litestar.middleware.rate_limit import get_remote_address
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody, Parameter
from litestar.response import Stream
from litestar.routes import HTTPRoute

from domain.game.model import Action
from infra.watchers import Watchers
from service.core.errors import ServiceError
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.core.quotas import owner_of
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.event_streams import admit, follow
from service.entrypoints.api.game_views import (
    archived_fairness,
    etag,
    game_or_table,
    games_page,
    render_acted,
    table_fields,
    view_fields,
)
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.paging import After, ReadEvents, events_handler, number_in
from service.entrypoints.api.parameters import (
    ETAG,
    JSON,
    LOCATION,
    REPLAYED,
    SEAT_TOKEN,
    GameId,
    IdempotencyKey,
    IfMatch,
    LastEventId,
    parse_if_match,
    player_query,
)
from service.entrypoints.api.problems import get_game_part, problems
from service.entrypoints.api.schemas import (
    ActedOut,
    CreatedGameOut,
    CreatedTableOut,
    CreateGameIn,
    GameOut,
    GamesPage,
    ReviewPending,
    SeatToken,
    TableOut,
)
from service.games.commands import Act, CreateTable, SeatRequest
from service.games.use_cases import GameService
from service.history.reads import History
from service.history.reviews import RETRY_AFTER, ReviewOut, Reviews
from service.lobby.use_cases import Lobby
from service.tournaments.secrecy import Secrecy

_encoder = msgspec.json.Encoder()


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


async def watching_seat(request: AuthenticatedRequest, record: GameRecord) -> int | None:
    """The seat whose player follows the game with this request (its seat token, or a
    player JWT seated in it; None: a spectator, or a seat token that is not this game's)."""
    try:
        return await games_of(request).seat_or_none(record, request.user)
    except ServiceError:
        return None


def live_events(request: AuthenticatedRequest) -> ReadEvents:
    """The live game's events, for a caller who may read them (`live_game`)."""

    async def read(game_id: str, after: int, limit: int) -> list[StoredEvent]:
        await live_game(request, game_id)
        return await games_of(request).store.events(game_id, after, limit)

    return read


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


def refuse_create_entropy(data: CreateGameIn) -> None:
    """No seat gives entropy on create (`domain.game.fairness`): the seed is chosen in the
    same request, so the commitment would be published after the entropy was seen and
    protect nothing. Entropy counts only given on join, after the commitment was published."""
    for seat, player in enumerate(data.players):
        if player.entropy is not msgspec.UNSET:
            raise ServiceError(
                "invalid_table",
                "Seat {seat}: entropy is given on join only, after the table's commitment "
                "was published, never on create. Reserve the seat (`player_id` without a "
                "name) or leave it open, and take it by a join with `entropy`.",
                seat=seat,
            )


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
        refuse_create_entropy(data)
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
        "while the service runs open): first the live games whose decision is that player's, "
        "then the others, each newest first. Newest first without it. `next_cursor` fetches "
        "the next page.",
        security=[{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}],
        responses=problems(400, 401, 403),
        before_request=authenticate,
    )
    async def list_games(
        self,
        request: AuthenticatedRequest,
        player_id: Annotated[
            str | None, player_query("Whose games: that player's open tables and live games.")
        ] = None,
        cursor: Annotated[str | None, Parameter(max_length=200)] = None,
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
    ) -> GamesPage:
        lobby = lobby_of(request)
        if player_id is None:
            return games_page(await lobby.list_open(cursor, limit))
        return games_page(await lobby.list_player(request.user, player_id, cursor, limit))

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
            final = await history.final_view(game_id, request.user) if found else None
            if final is None:
                raise
            view, fair = final.view, final.fairness
            shown = None if fair is None else archived_fairness(fair, final.seed)
            body = GameOut(
                id=game_id, seat=None, legal_actions=None, fairness=shown,
                **msgspec.structs.asdict(view),
            )  # fmt: skip
            return Response(body, headers={"ETag": etag(view.version)})
        seat = await service.seat_or_none(record, request.user)
        secrecy = secrecy_of(request)
        if seat is None:  # a player reads their own game
            await secrecy.check(record, request.user)
        reveal = None  # an ended game shows its seed; a duplicate deal's once played everywhere
        if record.ended and record.tournament is not None:
            reveal = not await secrecy.sealed(record.tournament)
        return Response(  # encoded here: Litestar's serializer path costs more
            _encoder.encode(game_or_table(record, seat, reveal)),
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
                record = await live_game(request, game_id)
            seat = await watching_seat(request, record)
        except BaseException:
            slot.release()
            raise
        return follow(watchers, game_id, start, slot, seat)
