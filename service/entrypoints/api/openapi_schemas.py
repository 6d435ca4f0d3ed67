"""The OpenAPI document's component schemas: msgspec's own for every type a handler decodes
or encodes (the bodies are decoded by msgspec, so its schema is exactly what is accepted;
Litestar's rendering loses constraints), with what msgspec cannot state added (a deck's
copies of a card, `createGame`'s starting seat, a seat's kinds), a `discriminator` on the
`type` tag of every tagged union, and the names the contract published kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from domain.game.cards import COPIES
from domain.game.model import Action
from service.entrypoints.api.bulk_routes import BulkPairingIn, BulkPairingOut
from service.entrypoints.api.history_routes import (
    ArchivedGamesPage,
    LeaderboardOut,
    RatingHistoryOut,
    ReplayOut,
)
from service.entrypoints.api.info_routes import MAX_PLAYERS, InfoOut
from service.entrypoints.api.matchmaking_routes import TicketIn, TicketOut
from service.entrypoints.api.odds_routes import OddsOut
from service.entrypoints.api.player_routes import VacationIn, VacationOut
from service.entrypoints.api.push_routes import (
    PushKeyOut,
    PushSubscriptionIn,
    PushSubscriptionOut,
    PushSubscriptionsOut,
)
from service.entrypoints.api.schemas import (
    ActedOut,
    CreatedGameOut,
    CreatedTableOut,
    CreateGameIn,
    EventsOut,
    GameOut,
    GamesPage,
    Health,
    JoinedOut,
    JoinIn,
    NextTableOut,
    Problem,
    RegistrationIn,
    ReviewPending,
    RoundsOut,
    RulesOut,
    ScoreIn,
    ScoreOut,
    SeatToken,
    StandingsOut,
    TableOut,
    TournamentIn,
    TournamentOut,
    TournamentsPage,
)
from service.history.archive import ArchivedGame, PlayerStats
from service.history.reads import TableForecast
from service.history.records import GameRecordV1
from service.history.reviews import ReviewOut
from service.privacy.use_cases import Erased
from service.reactions.webhook_payloads import WEBHOOK_PAYLOADS

# every type a handler decodes or encodes: their components replace Litestar's
API_TYPES = (
    CreateGameIn,
    ScoreIn,
    Action,
    GameOut,
    CreatedGameOut,
    ActedOut,
    EventsOut,
    ScoreOut,
    RulesOut,
    Health,
    Problem,
    ArchivedGamesPage,
    ArchivedGame,
    GameRecordV1,
    ReplayOut,
    PlayerStats,
    LeaderboardOut,
    RatingHistoryOut,
    TableForecast,
    OddsOut,
    InfoOut,
    CreatedTableOut,
    TableOut,
    JoinIn,
    JoinedOut,
    GamesPage,
    SeatToken,
    ReviewOut,
    ReviewPending,
    TournamentIn,
    RegistrationIn,
    TournamentOut,
    TournamentsPage,
    StandingsOut,
    RoundsOut,
    NextTableOut,
    *WEBHOOK_PAYLOADS.values(),
    TicketIn,
    TicketOut,
    # correspondence
    PushKeyOut,
    PushSubscriptionIn,
    PushSubscriptionOut,
    PushSubscriptionsOut,
    VacationIn,
    VacationOut,
    BulkPairingIn,
    BulkPairingOut,
    Erased,  # a player's data erased
)
REF = "#/components/schemas/{name}"


def component_schemas() -> dict[str, Any]:
    """The schemas of `API_TYPES` (and of the types they hold), as the document publishes
    them (before the discriminators and the published names: `finish_components`)."""
    _, schemas = msgspec.json.schema_components(API_TYPES, ref_template=REF)
    # its docstring tells how the engine builds it, nothing a client needs
    schemas["PublicView"].pop("description", None)
    _constrain_starting_seat(schemas["CreateGameIn"])
    _constrain_seats(schemas["PlayerIn"])
    _limit_copies(schemas)
    return schemas


def finish_components(schema: dict[str, Any]) -> None:
    """Once the whole document is built: the discriminators of its tagged unions, then the
    published names of its components and of every reference to them."""
    _add_discriminators(schema)
    _published_names(schema)


# The component names of the types whose class name another API type shares: msgspec names
# them by their module's path, and the contract keeps the names they were published under,
# wherever the code that holds them moves.
PUBLISHED_NAMES = {
    "service.history.archive.ColorScore": "service.archive.ColorScore",
    "domain.game.scoring.ColorScore": "domain.scoring.ColorScore",
}


def _published_names(schema: dict[str, Any]) -> None:
    schemas = schema["components"]["schemas"]
    refs = {REF.format(name=old): REF.format(name=new) for old, new in PUBLISHED_NAMES.items()}
    for old, new in PUBLISHED_NAMES.items():
        if old in schemas:
            schemas[new] = schemas.pop(old)

    def rename(node: dict[str, Any]) -> None:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in refs:
            node["$ref"] = refs[ref]

    _each_object(schema, rename)


def _constrain_starting_seat(create: dict[str, Any]) -> None:
    """`starting_seat` must name a seat: `starting_seat >= k` needs at least k + 1 players."""
    create["allOf"] = [
        {
            "if": {
                "properties": {"starting_seat": {"type": "integer", "minimum": k}},
                "required": ["starting_seat"],
            },
            "then": {"properties": {"players": {"minItems": k + 1}}},
        }
        for k in range(1, MAX_PLAYERS)
    ]
    create["description"] = (
        "A new game. `starting_seat`, when given, must be one of the seats (below the number of "
        "`players`); without it the service draws the starting seat."
    )


def _constrain_seats(seat: dict[str, Any]) -> None:
    """A seat says what it is: a name (a human seated now), a bot, a player_id (reserved) or
    `open: true` (`invalid_table` otherwise)."""
    seat["anyOf"] = [
        {"required": ["name"], "properties": {"name": {"type": "string"}}},
        {"required": ["bot"], "properties": {"bot": {"type": "string"}}},
        {"required": ["player_id"], "properties": {"player_id": {"type": "string"}}},
        {"required": ["open"], "properties": {"open": {"const": True}}},
    ]
    # no `entropy` on create (`invalid_table`): it counts only given on join, after the
    # table's commitment was published
    seat["properties"].pop("entropy", None)


def _limit_copies(schemas: dict[str, Any]) -> None:
    """A deck or a scored collection holds a card at most as many times as the 129-card game
    has it (`too_many_copies` otherwise): one `contains` + `maxContains` per card code on
    createGame's `deck` and scoreCollection's `cards`, so that a schema-valid list is
    accepted."""
    limits = [
        {"contains": {"const": code}, "minContains": 0, "maxContains": copies}
        for code, copies in COPIES.items()
    ]
    deck = schemas["CreateGameIn"]["properties"]["deck"]
    arrays = [m for m in deck.get("anyOf", [deck]) if m.get("type") == "array"]
    for array in [*arrays, schemas["ScoreIn"]["properties"]["cards"]]:
        array["allOf"] = list(limits)


def _tag_of(target: dict[str, Any]) -> Any:
    prop = target.get("properties", {}).get("type", {})
    if "const" in prop:
        return prop["const"]
    enum = prop.get("enum")
    return enum[0] if isinstance(enum, list) and len(enum) == 1 else None


def _add_discriminators(schema: dict[str, Any]) -> None:
    """Every oneOf/anyOf whose members are all tagged Structs gets a discriminator on `type`."""
    schemas = schema["components"]["schemas"]

    def discriminate(node: dict[str, Any]) -> None:
        for keyword in ("oneOf", "anyOf"):
            members = node.get(keyword)
            if not isinstance(members, list) or not members or "discriminator" in node:
                continue
            mapping = {}
            for member in members:
                ref = member.get("$ref", "") if isinstance(member, dict) else ""
                tag = _tag_of(schemas.get(ref.rsplit("/", 1)[-1], {})) if ref else None
                if tag is None:
                    mapping = {}
                    break
                mapping[tag] = ref
            if mapping:
                node["discriminator"] = {"propertyName": "type", "mapping": mapping}

    _each_object(schema, discriminate)


def _each_object(node: Any, change: Callable[[dict[str, Any]], None]) -> None:
    """`change` applied to every JSON object of a document, the outer ones first."""
    if isinstance(node, dict):
        change(node)
        for value in node.values():
            _each_object(value, change)
    elif isinstance(node, list):
        for value in node:
            _each_object(value, change)
