"""Tournaments over HTTP: create, list, read, register, withdraw, start, pause, resume,
stop, standings, rounds and a player's table. Thin: the use cases are
`service.tournaments.use_cases.Tournaments`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import JSONBody, Parameter
from litestar.response import Stream

from domain.tournaments.rules import place_points
from infra.watchers import Slot, Watchers
from service.core.model import TournamentRecord
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.event_streams import admit, record_changes, sse
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.paging import number_in
from service.entrypoints.api.parameters import (
    JSON,
    REPLAYED,
    IdempotencyKey,
    LastEventId,
    sent_header,
)
from service.entrypoints.api.problems import problems
from service.entrypoints.api.routes import secrecy_of
from service.entrypoints.api.schemas import (
    AdjustedResultOut,
    EntrantOut,
    NextTableOut,
    PlayerId,
    RegistrationIn,
    RoundOut,
    RoundsOut,
    RoundTable,
    StandingsOut,
    TableResultOut,
    TournamentIn,
    TournamentOut,
    TournamentsPage,
)
from service.tournaments.feeds import TournamentFeeds
from service.tournaments.records import CreateTournament, game_id, standings_out, tournament_clock
from service.tournaments.use_cases import Tournaments

_encoder = msgspec.json.Encoder()
TournamentId = Annotated[
    str,
    Parameter(description="The tournament's id, as createTournament returned it.", max_length=64),
]
WHO = [{PLATFORM_KEY: []}, {PLAYER_TOKEN: []}]
T_LOCATION = sent_header("Location", "The tournament's URL.")


def tournaments_of(request: Request) -> Tournaments:
    return request.app.state.tournaments


def tournament_out(record: TournamentRecord) -> TournamentOut:
    settings = record.settings
    return TournamentOut(
        id=record.id, name=record.name, status=record.status, organiser=record.organiser,
        table_size=settings.table_size, format=settings.format, deal_mode=settings.deal_mode,
        rounds=settings.rounds, rounds_played=len(record.rounds),
        clock=tournament_clock(record.clock), bot_level=record.bot_level, ranked=record.ranked,
        places=record.places, invited=None if record.invited is None else list(record.invited),
        registered=list(record.registered),
        entrants=[EntrantOut(entrant=e.id, bot=e.bot) for e in record.entrants],  # type: ignore[arg-type]
        starts_at=_moment(record.starts_at), round_interval=int(record.round_interval),
        next_round_at=_moment(record.next_round_at), created_at=record.created_at,
        version=record.version, standings_by=settings.standings_by,
        ranked_by=settings.ranked_by,
    )  # fmt: skip


def _moment(at: float | None) -> datetime | None:
    return None if at is None else datetime.fromtimestamp(at, UTC)


def _answer(record: TournamentRecord, replayed: bool, status: int = 200) -> Response[bytes]:
    headers = {"Location": f"/v1/tournaments/{record.id}"}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    body = _encoder.encode(tournament_out(record))
    return Response(body, status_code=status, media_type=JSON, headers=headers)


def _rounds(record: TournamentRecord) -> RoundsOut:
    rounds = []
    for played in record.rounds:
        tables = []
        for table in played.tables:
            result = record.result_of(played.number, table.number)
            shown = None
            if result is not None:
                adjusted = result.adjusted
                shown = TableResultOut(
                    ranks=list(result.ranks), scores=list(result.scores),
                    points=list(place_points(result.ranks)),
                    luck_adjusted=None if adjusted is None else AdjustedResultOut(
                        ranks=list(adjusted.ranks), scores=list(adjusted.scores),
                        points=list(place_points(adjusted.ranks)),
                    ),
                    unadjusted=result.unadjusted,
                )  # fmt: skip
            tables.append(
                RoundTable(
                    table=table.number,
                    game_id=game_id(record.id, played.number, table.number),
                    seats=list(table.seats),
                    result=shown,
                )
            )
        rounds.append(RoundOut(round=played.number, tables=tables, byes=list(played.byes)))
    return RoundsOut(tournament_id=record.id, rounds=rounds)


def changes(
    feeds: TournamentFeeds, tournament_id: str, after: int, slot: Slot, keepalive: float
) -> AsyncIterator[bytes]:
    """The SSE body of a tournament's stream: the tournament (`event: tournament`, `id` its
    version) each time its version passed `after` (`event_streams.record_changes`)."""
    return record_changes(
        feeds, tournament_id, after, slot, keepalive, b"tournament",
        lambda record: _encoder.encode(tournament_out(record)),
    )  # fmt: skip


_DECISION = {
    "before_request": authenticate,
    "security": WHO,
    "status_code": 200,
    "response_headers": [REPLAYED],
    "responses": problems(401, 403, 404, 409),
}


class TournamentController(Controller):
    path = "/v1/tournaments"
    tags: ClassVar[list[str]] = ["tournaments"]

    @post(
        "/",
        operation_id="createTournament",
        summary="Create a tournament",
        status_code=201,
        description="By the platform or a verified player, who is its organiser: it takes "
        "registrations until the organiser starts it, or until its `starts_at` (then it "
        "starts itself). A round ends when its games all ended; the next one is paired "
        "`round_interval` seconds later (`next_round_at`). Every game has a clock (the "
        "default when `clock` is absent): an entrant who does not show up is played by a bot "
        "after the clock's timeouts. Pairing, seats, deals and scoring are stated in "
        "domain/tournaments/rules.py (README: Tournaments).",
        security=WHO,
        response_headers=[T_LOCATION, REPLAYED],
        responses=problems(400, 401, 409),
        before_request=authenticate,
    )
    async def create(
        self,
        request: AuthenticatedRequest,
        data: JSONBody[TournamentIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TournamentOut]:
        data = await strictly(request, TournamentIn)
        command = CreateTournament(
            caller=request.user, name=data.name, table_size=data.table_size, format=data.format,
            deal_mode=data.deal_mode, rounds=data.rounds, clock=data.clock,
            bot_level=data.bot_level, ranked=data.ranked, places=data.places,
            invited=None if data.invited is None else tuple(data.invited),
            starts_at=None if data.starts_at is None else data.starts_at.timestamp(),
            round_interval=float(data.round_interval), standings_by=data.standings_by,
            ranked_by=data.ranked_by, idempotency_key=idempotency_key,
        )  # fmt: skip
        record, replayed = await tournaments_of(request).create(command)
        return _answer(record, replayed, 201)

    @get(
        "/",
        operation_id="listTournaments",
        summary="List tournaments, newest first",
        responses=problems(400),
    )
    async def list_tournaments(
        self,
        request: Request,
        cursor: Annotated[str | None, Parameter(max_length=200)] = None,
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
    ) -> TournamentsPage:
        page = await tournaments_of(request).list(cursor, limit)
        return TournamentsPage(
            tournaments=[tournament_out(r) for r in page.tournaments], next_cursor=page.next_cursor
        )

    @get(
        "/{tournament_id:str}",
        operation_id="getTournament",
        summary="Read a tournament",
        responses=problems(404),
    )
    async def get_tournament(self, request: Request, tournament_id: TournamentId) -> TournamentOut:
        return tournament_out(await tournaments_of(request).get(tournament_id))

    @get(
        "/{tournament_id:str}/standings",
        operation_id="getTournamentStandings",
        summary="The standings",
        description="Best first: points, then matchpoints (duplicate mode: each seat against "
        "everyone who held it on the same deal), then Buchholz, then the total game score, "
        "then the seeding. (Duplicate tournaments created before matchpoints came second "
        "rank by matchpoints first.) A deal's results count once it has been played at every table "
        "(for all but the platform: README, Tournaments).",
        responses=problems(401, 404),
        security=[{}, *WHO],
        before_request=authenticate,
    )
    async def standings(
        self, request: AuthenticatedRequest, tournament_id: TournamentId
    ) -> StandingsOut:
        record = await tournaments_of(request).get(tournament_id)
        shown = await secrecy_of(request).standings_shown(record, request.user)
        rows = list(standings_out(shown))
        return StandingsOut(
            tournament_id=record.id, status=record.status, rounds_played=len(record.rounds),
            standings=rows,
        )  # fmt: skip

    @get(
        "/{tournament_id:str}/rounds",
        operation_id="listTournamentRounds",
        summary="The rounds: their tables, games and results",
        description="While a deal is still being played at a table with a human player, the "
        "other tables of that deal in its round are left out for all but the platform: a "
        "player sees their own table (README, Tournaments).",
        responses=problems(401, 404),
        security=[{}, *WHO],
        before_request=authenticate,
    )
    async def rounds(self, request: AuthenticatedRequest, tournament_id: TournamentId) -> RoundsOut:
        record = await tournaments_of(request).get(tournament_id)
        return _rounds(await secrecy_of(request).rounds_shown(record, request.user))

    @get(
        "/{tournament_id:str}/events/stream",
        operation_id="streamTournament",
        summary="Follow a tournament (server-sent events)",
        description="A text/event-stream of the tournament: `event: tournament`, `data` the "
        "tournament as getTournament shows it, `id` its version, sent each time it changes "
        "(registrations, the start, each result and round, the end); the stream ends once "
        "the tournament has ended. Resume with `Last-Event-ID`. Streams are admitted as "
        "the games' are (503 `too_many_streams`, 429 `too_many_streams_from_client`).",
        media_type="text/event-stream",
        responses=problems(404),
    )
    async def stream(
        self,
        request: Request,
        tournament_id: TournamentId,
        last_event_id: LastEventId = None,
    ) -> Stream:
        after = -1 if last_event_id is None else number_in("Last-Event-ID", last_event_id)
        watchers: Watchers = request.app.state.watchers
        slot = admit(watchers, request)
        use = tournaments_of(request)
        try:
            await use.get(tournament_id)
        except BaseException:
            slot.release()
            raise
        feeds: TournamentFeeds = request.app.state.tournament_feeds
        body = changes(feeds, tournament_id, after, slot, watchers.keepalive)
        return sse(body)

    @get(
        "/{tournament_id:str}/players/{player_id:str}/table",
        operation_id="getTournamentTable",
        summary="A player's table of the current round",
        description="The game to play now and the seat in it (play it with the player's "
        "JWT); all null while the player has none (a bye: `bye` true).",
        responses=problems(404),
    )
    async def next_table(
        self, request: Request, tournament_id: TournamentId, player_id: PlayerId
    ) -> NextTableOut:
        where = await tournaments_of(request).next_table(tournament_id, player_id)
        return NextTableOut(
            tournament_id=tournament_id, player_id=player_id, round=where.round,
            table=where.table, game_id=where.game_id, seat=where.seat, bye=where.bye,
        )  # fmt: skip


def _entry(action: str, summary: str, description: str) -> Any:
    """POST /v1/tournaments/{id}/<action> of a player's entry: register, withdraw."""

    @post(
        f"/v1/tournaments/{{tournament_id:str}}/{action}",
        operation_id=f"{action.removesuffix('s').replace('registration', 'register')}Tournament",
        summary=summary,
        description=description,
        tags=["tournaments"],
        **_DECISION,
    )
    async def entry(
        request: AuthenticatedRequest,
        tournament_id: TournamentId,
        data: JSONBody[RegistrationIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TournamentOut]:
        data = await strictly(request, RegistrationIn)
        use = getattr(tournaments_of(request), "register" if action == "registrations" else action)
        return _answer(*await use(request.user, tournament_id, data.player_id, idempotency_key))

    return entry


def _decision(action: str, summary: str, description: str) -> Any:
    """POST /v1/tournaments/{id}/<action> of the organiser: start, pause, resume, stop."""

    @post(
        f"/v1/tournaments/{{tournament_id:str}}/{action}",
        operation_id=f"{action}Tournament",
        summary=summary,
        description=description,
        tags=["tournaments"],
        **_DECISION,
    )
    async def decision(
        request: AuthenticatedRequest,
        tournament_id: TournamentId,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TournamentOut]:
        use = getattr(tournaments_of(request), action)
        return _answer(*await use(request.user, tournament_id, idempotency_key))

    return decision


TOURNAMENT_ROUTES = [
    TournamentController,
    _entry(
        "registrations",
        "Register for a tournament",
        "A player registers themself (JWT), or the platform registers `player_id`, while the "
        "tournament takes registrations; again changes nothing.",
    ),
    _entry("withdraw", "Withdraw before the start", "A player registered leaves the tournament."),
    _decision(
        "start",
        "Start (the organiser)",
        "The entrants are the players registered, then bots of `bot_level` for the places "
        "left; round 1 is paired and its games dealt. A tournament with `starts_at` starts "
        "so by itself then; its organiser may start it before.",
    ),
    _decision(
        "pause",
        "Pause (the organiser)",
        "No new round starts; the games being played go on and their results count.",
    ),
    _decision(
        "resume",
        "Resume a paused tournament (the organiser)",
        "The next round follows: at once if its `next_round_at` has passed, else then.",
    ),
    _decision(
        "stop", "Stop early (the organiser)", "The standings stay as the results so far make them."
    ),
]
