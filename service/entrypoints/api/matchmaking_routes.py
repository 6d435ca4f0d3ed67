"""Matchmaking tickets over HTTP: create, read, cancel, and follow one (server-sent events).
Thin: the use cases are `service.matchmaking.use_cases.Matchmaking`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

import msgspec
from litestar import Controller, Request, Response, delete, get, post
from litestar.middleware.rate_limit import get_remote_address
from litestar.params import JSONBody, Parameter
from litestar.response import Stream

from domain.game.model import BotLevel
from infra.watchers import Slot, Watchers
from service.core.callers import Caller
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.event_streams import admit, record_changes, sse
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.parameters import JSON, REPLAYED, IdempotencyKey, sent_header
from service.entrypoints.api.problems import problems
from service.entrypoints.api.schemas import Name, PlayerId
from service.matchmaking.records import (
    LIFETIME,
    MAX_PARTY,
    CreateTicket,
    PartyMember,
    TicketRecord,
)
from service.matchmaking.use_cases import Matchmaking, Shown
from service.tournaments.feeds import TournamentFeeds

_IN = {"frozen": True, "kw_only": True, "forbid_unknown_fields": True}
_OUT = {"frozen": True, "kw_only": True}
_encoder = msgspec.json.Encoder()
TicketId = Annotated[
    str, Parameter(description="The ticket's id, as createTicket returned it.", max_length=64)
]
TableSize = Annotated[int, msgspec.Meta(ge=2, le=5)]
# a ticket's holder: a player's JWT, the platform, or the bearer of its ticket token (or none)
WHO = [{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}]
T_LOCATION = sent_header("Location", "The ticket's URL.")


class PartyMemberIn(msgspec.Struct, **_IN):
    player_id: PlayerId
    name: Name


class TicketIn(msgspec.Struct, **_IN):
    """A matchmaking ticket (docs/matchmaking.md)."""

    mode: Literal["live", "correspondence"]
    sizes: Annotated[
        list[TableSize],
        msgspec.Meta(
            min_length=1, max_length=4, description="The table sizes accepted (2 to 5 seats)."
        ),
    ] = msgspec.field(default_factory=lambda: [2, 3, 4, 5])
    rated: bool = True
    name: Name
    player_id: PlayerId | None = None
    party: (
        Annotated[
            list[PartyMemberIn],
            msgspec.Meta(
                max_length=MAX_PARTY,
                description="Other players kept at the same table (the platform, or open mode).",
            ),
        ]
        | None
    ) = None
    fill_bots_after: (
        Annotated[
            int,
            msgspec.Meta(
                ge=0,
                le=int(LIFETIME),
                description="Seconds of waiting after which empty seats may be filled with "
                "bots; null: never.",
            ),
        ]
        | None
    ) = None
    bot: BotLevel = "basic"


class PartyMemberOut(msgspec.Struct, **_OUT):
    player_id: str
    name: str


class PartySeatOut(msgspec.Struct, **_OUT):
    """A party member's seat and its token, for the ticket's holder to hand on (open mode)."""

    player_id: str
    seat: int
    seat_token: str


class WindowOut(msgspec.Struct, **_OUT):
    low: float
    high: float


class TicketOut(msgspec.Struct, **_OUT):
    id: str
    status: Literal["waiting", "matched", "cancelled", "expired"]
    mode: Literal["live", "correspondence"]
    sizes: list[int]
    rated: bool
    player_id: str
    party: list[PartyMemberOut] | None
    created_at: datetime
    expires_at: datetime
    waited: float  # seconds
    rating: float | None
    window: WindowOut | None
    game_id: str | None
    seat: int | None
    seat_token: str | None  # only to the ticket's holder
    party_seats: Annotated[
        list[PartySeatOut] | None,
        msgspec.Meta(
            description="Open mode, a party's matched ticket, to its holder only: every other "
            "party member's seat and its token, for the holder to hand on (nothing else gives "
            "them one). Null otherwise: with identities configured the members play with "
            "their JWTs, or the platform reissues their seats' tokens."
        ),
    ] = None
    ticket_token: str | None = None  # on the create answer, to a creator without JWT or key


def matchmaking_of(request: Request) -> Matchmaking:
    return request.app.state.matchmaking


def ticket_out(shown: Shown, ticket_token: str | None = None) -> TicketOut:
    record = shown.record
    party = [PartyMemberOut(player_id=m.player_id, name=m.name) for m in record.party]
    low_high = shown.window
    return TicketOut(
        id=record.id, status=shown.status,  # type: ignore[arg-type]
        mode=record.mode, sizes=list(record.sizes), rated=record.rated,
        player_id=record.player_id, party=party or None,
        created_at=_moment(record.created_at), expires_at=_moment(record.expires_at),
        waited=round(shown.waited, 3), rating=record.rating,
        window=None if low_high is None else WindowOut(low=low_high[0], high=low_high[1]),
        game_id=record.game_id, seat=record.seat, seat_token=shown.seat_token,
        party_seats=[
            PartySeatOut(player_id=p.player_id, seat=p.seat, seat_token=p.seat_token)
            for p in shown.party_seats
        ] or None,
        ticket_token=ticket_token,
    )  # fmt: skip


def _moment(at: float) -> datetime:
    return datetime.fromtimestamp(at, UTC)


def changes(
    use: Matchmaking,
    feeds: TournamentFeeds[TicketRecord],
    caller: Caller,
    ticket_id: str,
    slot: Slot,
    keepalive: float,
) -> AsyncIterator[bytes]:
    """The SSE body of a ticket's stream (`event_streams.record_changes`): the ticket
    (`event: ticket`) at once and each time it changes as this caller is shown it; it ends
    after a final status. A save that changes nothing shown (a table being made reads
    `waiting`, as before it) sends nothing; the seconds waited and the window that widens
    with them are no change: they are sent with the next one."""
    sent: list[TicketOut] = []  # the last ticket sent, its wait-dependent fields cleared

    def render(record: TicketRecord) -> bytes | None:
        out = ticket_out(use.shown(record, caller))
        seen = msgspec.structs.replace(out, waited=0.0, window=None)
        if sent and sent[0] == seen:
            return None
        sent[:] = [seen]
        return _encoder.encode(out)

    return record_changes(feeds, ticket_id, -1, slot, keepalive, b"ticket", render)


class MatchmakingController(Controller):
    path = "/v1/matchmaking/tickets"
    tags: ClassVar[list[str]] = ["matchmaking"]

    @post(
        "/",
        operation_id="createTicket",
        summary="Ask for a game: a matchmaking ticket",
        status_code=201,
        description="A player (its JWT), the platform for `player_id` (and a `party` kept "
        "together), or in open mode anyone naming a `player_id`, waits for a table of one of "
        "`sizes` with players of the same mode, rated or casual alike; a rated ticket's "
        "rating window starts narrow and widens with the wait (docs/matchmaking.md). A "
        "player holds one waiting ticket per mode (409 `ticket_exists`); a ticket waits a "
        "day at most (then `expired`). A creator without JWT or key gets a `ticket_token`, "
        "once: it reads the seat token and cancels (Authorization: Bearer <ticket_token>). "
        "In open mode a party's ticket, once matched, also shows its holder every other "
        "member's seat and token (`party_seats`), for the holder to hand on.",
        security=WHO,
        response_headers=[T_LOCATION, REPLAYED],
        responses=problems(401, 403, 409),
        before_request=authenticate,
    )
    async def create(
        self,
        request: AuthenticatedRequest,
        data: JSONBody[TicketIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TicketOut]:
        data = await strictly(request, TicketIn)
        party = None
        if data.party is not None:
            party = tuple(PartyMember(player_id=m.player_id, name=m.name) for m in data.party)
        command = CreateTicket(
            caller=request.user, mode=data.mode, sizes=tuple(data.sizes), rated=data.rated,
            name=data.name, player_id=data.player_id, party=party,
            fill_bots_after=data.fill_bots_after, bot=data.bot,
            idempotency_key=idempotency_key, origin=get_remote_address(request),
        )  # fmt: skip
        use = matchmaking_of(request)
        made = await use.create(command)
        headers = {"Location": f"/v1/matchmaking/tickets/{made.record.id}"}
        if made.replayed:
            headers["Idempotent-Replayed"] = "true"
        shown = use.shown(made.record, request.user)
        body = _encoder.encode(ticket_out(shown, made.ticket_token))
        return Response(body, status_code=201, media_type=JSON, headers=headers)

    @get(
        "/{ticket_id:str}",
        operation_id="getTicket",
        summary="Read a ticket",
        description="Its status, how long it waited, its window; once matched its game and "
        "seat, and the seat's token for its holder only (its player's JWT, the platform, or "
        "the bearer of its ticket token).",
        security=WHO,
        responses=problems(401, 404),
        before_request=authenticate,
    )
    async def get_ticket(self, request: AuthenticatedRequest, ticket_id: TicketId) -> TicketOut:
        return ticket_out(await matchmaking_of(request).get(request.user, ticket_id))

    @delete(
        "/{ticket_id:str}",
        operation_id="cancelTicket",
        summary="Cancel a waiting ticket",
        description="By its holder. A ticket matched (or whose table is being made) cannot "
        "be cancelled: 409 `ticket_already_matched`; one ended otherwise is answered as it is.",
        status_code=200,
        security=WHO,
        responses=problems(401, 403, 404, 409),
        before_request=authenticate,
    )
    async def cancel(self, request: AuthenticatedRequest, ticket_id: TicketId) -> TicketOut:
        return ticket_out(await matchmaking_of(request).cancel(request.user, ticket_id))

    @get(
        "/{ticket_id:str}/events/stream",
        operation_id="streamTicket",
        summary="Follow a ticket (server-sent events)",
        description="A text/event-stream of the ticket: `event: ticket`, `data` the ticket as "
        "getTicket shows it to this caller, sent at once and each time it changes; the "
        "stream ends after a final status (matched, cancelled, expired). Streams are "
        "admitted as the games' are (503 `too_many_streams`, 429 "
        "`too_many_streams_from_client`).",
        media_type="text/event-stream",
        security=WHO,
        responses=problems(401, 404),
        before_request=authenticate,
    )
    async def stream(self, request: AuthenticatedRequest, ticket_id: TicketId) -> Stream:
        watchers: Watchers = request.app.state.watchers
        slot = admit(watchers, request)
        use = matchmaking_of(request)
        try:
            await use.load(ticket_id)
        except BaseException:
            slot.release()
            raise
        feeds: TournamentFeeds[TicketRecord] = request.app.state.ticket_feeds
        return sse(changes(use, feeds, request.user, ticket_id, slot, watchers.keepalive))


MATCHMAKING_ROUTES = [MatchmakingController]
