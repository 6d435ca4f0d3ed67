"""Request and response bodies of the v1 API (msgspec Structs; the OpenAPI is built from them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

import msgspec

from domain.cards import CardCode, CollectionCode, ManifestEntry, deck_size
from domain.model import Action, AnyEvent, BotLevel, Phase, Player, Result, Rules
from domain.scoring import ColorScore
from domain.views import AuctionView, Supply
from service.ports import StoredEvent

_IN = {"frozen": True, "kw_only": True, "forbid_unknown_fields": True}
_OUT = {"frozen": True, "kw_only": True}

# a custom deck draws on the whole game's cards (129), each at most as often as the game has
# it (else `too_many_copies`): no longer deck can be valid
MAX_DECK = deck_size(5)

PLAYER_ID_PATTERN = r"^[A-Za-z0-9._:@-]+$"
PlayerId = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=100,
        pattern=PLAYER_ID_PATTERN,
        description="The calling platform's opaque id of this player (history, stats).",
    ),
]


class PlayerIn(msgspec.Struct, **_IN):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
    bot: BotLevel | None = None
    player_id: PlayerId | None = None


class CreateGameIn(msgspec.Struct, **_IN):
    players: Annotated[list[PlayerIn], msgspec.Meta(min_length=1, max_length=5)]
    starting_seat: Annotated[int, msgspec.Meta(ge=0, le=4)] | None = None
    deck: Annotated[list[CardCode], msgspec.Meta(min_length=1, max_length=MAX_DECK)] | None = None
    rules: Rules | None = None


class ScoreIn(msgspec.Struct, **_IN):
    cards: Annotated[list[CollectionCode], msgspec.Meta(max_length=300)]
    rules: Rules | None = None


class SeatToken(msgspec.Struct, **_OUT):
    seat: int
    token: str  # bearer credential for this seat; shown only once


class GameOut(msgspec.Struct, **_OUT):
    """A game as everyone may see it, plus the caller's legal actions when a seat token is sent."""

    id: str
    version: int
    status: Literal["active", "finished"]
    phase: Phase
    rules: Rules
    starting_seat: int
    active_seat: int
    to_act: int | None
    drawn: bool
    draw_pile_size: int
    last_turn: bool
    tableau: tuple[str, ...]
    market: tuple[str, ...]
    discard: tuple[str, ...]
    supply: Supply
    players: tuple[Player, ...]
    auction: AuctionView | None
    final_queue: tuple[int, ...]
    results: tuple[Result, ...] | None
    legal_actions: list[Action] | None = None  # null without a seat token
    seat: int | None = None  # the seat of the token sent, if any


class CreatedGameOut(GameOut, **_OUT):
    seats: list[SeatToken]


class ActedOut(GameOut, **_OUT):
    events: list[AnyEvent]


class EventsOut(msgspec.Struct, **_OUT):
    game_id: str
    events: list[AnyEvent]
    last_seq: int  # seq of the last event returned (or `after` when none)
    more: bool  # true when `limit` cut the list: ask again with after=last_seq


def events_page(game_id: str, stored: Sequence[StoredEvent], after: int, limit: int) -> EventsOut:
    """A page of at most `limit` events from `stored` (fetched with limit + 1, so that `more`
    tells whether another page follows); the events are already JSON: not decoded again."""
    page = stored[:limit]
    return EventsOut(
        game_id=game_id,
        events=[msgspec.Raw(e.data) for e in page],
        last_seq=page[-1].seq if page else after,
        more=len(stored) > limit,
    )


class ScoreOut(msgspec.Struct, **_OUT):
    total: int
    colors: dict[str, ColorScore]


class RuleOption(msgspec.Struct, **_OUT):
    default: int
    minimum: int
    maximum: int
    description: str


class RulesOut(msgspec.Struct, **_OUT):
    manifest: list[ManifestEntry]
    deck_sizes: dict[str, int]  # players -> cards in the deck
    options: dict[str, RuleOption]
    bots: list[str]
    error_codes: dict[str, str]


class Health(msgspec.Struct, **_OUT):
    status: str


class Problem(msgspec.Struct, **_OUT):
    """RFC 9457 problem details."""

    type: str
    title: str
    status: int
    detail: str
    code: str  # stable, machine-readable
