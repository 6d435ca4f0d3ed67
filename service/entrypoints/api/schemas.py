"""Request and response bodies of the v1 API (msgspec Structs; the OpenAPI is built from them)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from domain.game.cards import CardCode, CollectionCode, ManifestEntry, deck_size
from domain.game.fairness import ENTROPY_LIMIT, SCHEME
from domain.game.model import (
    Action,
    AnyEvent,
    BotLevel,
    Rules,
    TimeControl,
)
from domain.game.scoring import ColorScore
from domain.game.views import PublicView
from service.core import text
from service.core.ports import StoredEvent
from service.games.commands import NAME_LIMIT
from service.reactions.webhook_payloads import StandingOut
from service.tournaments.records import DEFAULT_CLOCK, MAX_AHEAD, MAX_ROUND_INTERVAL

_IN = {"frozen": True, "kw_only": True, "forbid_unknown_fields": True}
_OUT = {"frozen": True, "kw_only": True}

# a custom deck draws on the whole game's cards (129), each at most as often as the game has
# it (else `too_many_copies`): no longer deck can be valid
MAX_DECK = deck_size(5)

# the whole string: `(?!\n)` keeps Python's `$` (msgspec and Litestar match with re.search)
# from matching before a final line feed, and means nothing to an ECMA-262 client
PLAYER_ID_PATTERN = r"^[A-Za-z0-9._:@-]+(?!\n)$"
PlayerId = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=100,
        pattern=PLAYER_ID_PATTERN,
        description="The calling platform's opaque id of this player (history, stats).",
    ),
]


Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=NAME_LIMIT,
        # stated, not checked here: the command applies the policy (`service.core.text`), whose
        # refusal names the character (`invalid_text`)
        extra_json_schema={"pattern": text.PATTERN},
        description=f"Shown to the other players: at most {NAME_LIMIT} characters, no "
        "control, bidi or invisible formatting character, something visible; stored "
        "NFC-normalized and trimmed (else 400 `invalid_text`).",
    ),
]
Entropy = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=ENTROPY_LIMIT,
        extra_json_schema={"pattern": text.PATTERN},  # the text policy, as a name's
        description=f"What this seat adds to the deal (provably fair deals, scheme "
        f"`{SCHEME}`): any text of at most {ENTROPY_LIMIT} characters, kept as the text "
        "policy keeps a name (else 400 `invalid_text`); it is published in the game's "
        "`fairness` and mixed with the server's committed seed to shuffle the pile.",
    ),
]
# an invite code as the lobby makes them (`secrets.token_urlsafe`): URL-safe base64
InviteCode = Annotated[
    str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+(?!\n)$")
]


class PlayerIn(msgspec.Struct, **_IN):
    """A seat: a bot (`bot`), a human seated now (`name`; their token comes back), a seat
    reserved for `player_id` (no name: that player joins it), or one `open` to anyone.
    While a seat awaits a player the game is an open table (status `open`)."""

    name: Name | None = None
    bot: BotLevel | None = None
    player_id: PlayerId | None = None
    open: bool = False
    # refused, with the reason (`refuse_create_entropy`): entropy counts only given on join,
    # after the table's commitment was published. Read only to say so: no field of the
    # OpenAPI document (`openapi_schemas`)
    entropy: Any = msgspec.UNSET


class CreateGameIn(msgspec.Struct, **_IN):
    players: Annotated[list[PlayerIn], msgspec.Meta(min_length=1, max_length=5)]
    starting_seat: Annotated[int, msgspec.Meta(ge=0, le=4)] | None = None
    deck: Annotated[list[CardCode], msgspec.Meta(min_length=1, max_length=MAX_DECK)] | None = None
    rules: Rules | None = None
    private: bool = False  # an open table joined only with its invite code, never listed
    fill: Literal["bots", "drop"] = "bots"  # empty seats when the host starts early
    fill_bot: BotLevel = "basic"  # also plays a seat taken over after timeouts, or resigned
    clock: TimeControl | None = None  # none: no clock


class JoinIn(msgspec.Struct, **_IN):
    name: Name | None = None  # defaults to the player_id, else "Player <n>"
    seat: Annotated[int, msgspec.Meta(ge=0, le=4)] | None = None  # else the reserved/first open
    invite: InviteCode | None = None  # a private table's code
    player_id: PlayerId | None = None  # the platform seating a player; open services: anyone
    entropy: Entropy | None = None  # what this seat adds to the deal


class ScoreIn(msgspec.Struct, **_IN):
    cards: Annotated[list[CollectionCode], msgspec.Meta(max_length=300)]
    rules: Rules | None = None


class SeatToken(msgspec.Struct, **_OUT):
    seat: int
    token: str  # bearer credential for this seat; shown only once


class FairnessOut(msgspec.Struct, omit_defaults=True, **_OUT):
    """The game's provably fair deal (docs: Fair deals): the commitment to its secret seed,
    published from the table's creation on, each seat's entropy in seat order ("" for
    none), and the seed itself once the game has ended (a duplicate tournament round's:
    once every table of its deal has finished). Null for a game dealt from a given deck."""

    scheme: str
    commitment: str
    entropy: list[str]
    start_drawn: bool | None  # the starting seat drawn from the deal (null: not dealt yet)
    # the secret seed, revealed once the game has ended (absent before)
    seed: str | None = None


class ClockOut(msgspec.Struct, **_OUT):
    """The game's clock as of `server_time` (unix seconds, the server's clock): draw a
    ticking clock from `deadline` (an absolute server time) and `server_time` without
    drift. `remaining`: each seat's bank in seconds at `server_time` (bank clocks; only
    the seat in `seat` is running); null for a deadline clock. `timeouts`: each seat's
    consecutive timeouts (`control.takeover_after` of them hand the seat to a bot)."""

    control: TimeControl
    seat: int | None  # whose time runs (the seat the game waits on); null once finished
    since: float  # unix seconds: when the game began waiting on `seat` (or finished)
    deadline: float | None  # unix seconds; null once finished
    server_time: float
    remaining: list[float] | None
    timeouts: list[int]


def _game_out() -> type[msgspec.Struct]:
    """`GameOut`: the game's id, then the fields of the domain's `PublicView` as they are
    (its `status` with the statuses a stored game adds), then what the caller's seat adds."""
    statuses = Literal["active", "finished", "aborted", "abandoned"]
    view = [
        (f.name, statuses if f.name == "status" else f.type)
        for f in msgspec.structs.fields(PublicView)
    ]
    seat = [
        ("legal_actions", list[Action] | None, None),  # null without a seat token
        # what the seat may send whoever's turn it is: `resign`, and `reclaim` while a bot
        # has taken the seat over; null without a seat token
        ("seat_actions", list[Action] | None, None),
        ("seat", int | None, None),  # the seat of the token sent, if any
        ("clock", ClockOut | None, None),  # null: the game has no clock
        ("fairness", FairnessOut | None, None),  # null: dealt from a given deck
    ]
    doc = (
        "A game as everyone may see it, plus the caller's legal actions when a seat token is sent."
    )
    return msgspec.defstruct(
        "GameOut", [("id", str), *view, *seat], module=__name__, namespace={"__doc__": doc}, **_OUT
    )


GameOut = _game_out()


class CreatedGameOut(GameOut, **_OUT):
    seats: list[SeatToken]
    host_token: str | None  # an anonymous host's credential (abort); shown once


class ActedOut(GameOut, **_OUT):
    events: list[AnyEvent]


class TableSeatOut(msgspec.Struct, **_OUT):
    seat: int
    name: str | None  # who sits there; null while empty
    bot: str | None
    player_id: str | None  # reserved for, or taken by
    verified: bool  # player_id proven (a player JWT or the platform)
    open: bool  # open to anyone (else reserved, or a bot's)
    taken: bool


class TableOut(msgspec.Struct, **_OUT):
    """A game created open, waiting for its players (or called off: `cancelled`)."""

    id: str
    version: int
    status: Literal["open", "cancelled"]
    created_at: float  # unix seconds
    private: bool
    fill: Literal["bots", "drop"]
    fill_bot: str
    rules: Rules
    seats: list[TableSeatOut]
    clock: TimeControl | None = None  # the clock the game will start with
    # a scheduled table (a bulk pairing's): every seat assigned, dealt at this time (unix s)
    starts_at: float | None = None
    fairness: FairnessOut | None = None  # null: a given deck


class CreatedTableOut(TableOut, **_OUT):
    tokens: list[SeatToken]  # the seats the creator took; shown only here
    host_token: str | None  # an anonymous host's credential (start, cancel, abort); shown once
    invite_code: str | None  # a private table's invite; shown only here


class JoinedOut(msgspec.Struct, **_OUT):
    seat: int
    token: str  # this seat's bearer credential; shown only here
    table: TableOut | None  # the table, while it waits for more players
    game: GameOut | None  # the game, when this join filled the table and started it


class GameListItem(msgspec.Struct, **_OUT):
    id: str
    status: Literal["open", "active"]
    version: int
    created_at: float
    private: bool
    seats: list[TableSeatOut]


class GamesPage(msgspec.Struct, **_OUT):
    games: list[GameListItem]
    next_cursor: str | None  # null on the last page


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


class ReviewPending(msgspec.Struct, **_OUT):
    """A finished game's review being computed: ask again after `retry_after` seconds (the
    `Retry-After` header says the same)."""

    game_id: str
    status: Literal["pending"]
    retry_after: int  # seconds


# ---------------------------------------------------------------- tournaments


class TournamentIn(msgspec.Struct, **_IN):
    """A tournament (service.tournaments.use_cases; pairing and scoring: domain/tournaments/rules.py)."""

    name: Name
    table_size: Annotated[int, msgspec.Meta(ge=2, le=5)] = 4
    format: Literal["swiss", "round_robin"] = "swiss"
    deal_mode: Literal["duplicate", "fresh"] = "duplicate"
    rounds: Annotated[int, msgspec.Meta(ge=1, le=20)] = 3
    clock: Annotated[
        TimeControl | None,
        msgspec.Meta(
            description="Each game's time control. Absent or null: the default, a bank of "
            f"{DEFAULT_CLOCK.initial_seconds:g} s per seat and "
            f"{DEFAULT_CLOCK.increment_seconds:g} s back after each decision, a bot taking "
            f"the seat after {DEFAULT_CLOCK.takeover_after} timeouts in a row. Every "
            "tournament game has a clock, so an entrant who does not show up is played by a "
            "bot after the clock's timeouts (`takeover_after`)."
        ),
    ] = None
    bot_level: BotLevel = "basic"  # the bots that fill the places nobody registered for
    ranked: bool = True
    places: Annotated[int, msgspec.Meta(ge=2, le=64)] = 8  # entrants: players, then bots
    # only these players may register; none: open registration (up to `places`)
    invited: Annotated[list[EntrantId], msgspec.Meta(max_length=64)] | None = None
    starts_at: Annotated[
        Annotated[datetime, msgspec.Meta(tz=True)] | None,
        msgspec.Meta(
            description="RFC 3339 with its offset: the tournament starts itself then, as its "
            "organiser's start would (registration closes, bots fill the places left); the "
            "organiser may still start it earlier. In the future and at most "
            f"{MAX_AHEAD // 86400:g} days ahead "
            "(else 400 `invalid_tournament`). Absent or null: only the organiser starts it.",
        ),
    ] = None
    round_interval: Annotated[
        int,
        msgspec.Meta(
            ge=0,
            le=int(MAX_ROUND_INTERVAL),
            description="Seconds from the end of a round's last game to the pairing of the "
            "next round (`next_round_at` shows when); 0: at once.",
        ),
    ] = 0
    standings_by: Annotated[
        Literal["results", "luck_adjusted"],
        msgspec.Meta(
            description="What a table counts for in the standings: its `results`, or its "
            "`luck_adjusted` results, the ranks (place points) and scores (matchpoints) of "
            "its game's post-game review with each seat's luck taken out. A luck-adjusted "
            "tournament pairs its next round (or ends) once its round's reviews are computed; "
            "a table whose review failed counts by its results (`unadjusted` in its rounds).",
        ),
    ] = "results"
    ranked_by: Annotated[
        Literal["points", "margin", "strength"],
        msgspec.Meta(
            description="The standings' first key: `points`, the place points (in a duplicate "
            "tournament, points then matchpoints); `margin`, the sum of the entrant's game "
            "margins (its game score less the mean of its table's other scores, luck-adjusted "
            "when `standings_by` says so); or `strength`, the margin per game with the "
            "opponents' strengths taken out (the least-squares fit of every game's margins by "
            "`strength - mean strength of the table's others`), so that a field met does not "
            "favour or cost anyone; then points. Ties are broken as with points.",
        ),
    ] = "points"


# a player id a tournament takes: none starting with `bot:` (its bots' entrant ids)
EntrantId = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=100,
        pattern=r"^(?!bot:)[A-Za-z0-9._:@-]+(?!\n)$",
        description="The calling platform's id of a player (not starting with `bot:`).",
    ),
]


class RegistrationIn(msgspec.Struct, **_IN):
    # the platform names the player (else 400 `invalid_tournament`); a player: themself
    player_id: EntrantId | None = None


class EntrantOut(msgspec.Struct, **_OUT):
    entrant: str  # the player id, or `bot:<n>`
    bot: BotLevel | None = None


class TournamentOut(msgspec.Struct, **_OUT):
    id: str
    name: str
    status: Literal["registering", "running", "paused", "finished", "stopped"]
    organiser: str  # "platform" or "player:<id>"
    table_size: int
    format: Literal["swiss", "round_robin"]
    deal_mode: Literal["duplicate", "fresh"]
    rounds: int
    rounds_played: int  # rounds paired so far (the current one included)
    clock: TimeControl  # each game's (the default when the create named none)
    bot_level: BotLevel
    ranked: bool
    places: int
    invited: list[str] | None
    registered: list[str]
    entrants: list[EntrantOut]  # fixed at the start
    starts_at: Annotated[
        datetime | None,
        msgspec.Meta(
            description="When it starts itself (as created); null: when its organiser starts it."
        ),
    ]
    round_interval: Annotated[
        int, msgspec.Meta(description="Seconds from a round's end to the next round's pairing.")
    ]
    next_round_at: Annotated[
        datetime | None,
        msgspec.Meta(
            description="When the next round is paired, while the tournament waits for it "
            "(its `round_interval` after a round ended); else null. A paused tournament "
            "pairs nothing: resumed after this time, it pairs the next round at once."
        ),
    ]
    created_at: float
    version: int
    standings_by: Literal["results", "luck_adjusted"]  # as created
    ranked_by: Literal["points", "margin", "strength"]  # as created


class TournamentsPage(msgspec.Struct, **_OUT):
    tournaments: list[TournamentOut]
    next_cursor: str | None


class StandingsOut(msgspec.Struct, **_OUT):
    tournament_id: str
    status: Literal["registering", "running", "paused", "finished", "stopped"]
    rounds_played: int
    standings: list[StandingOut]


class AdjustedResultOut(msgspec.Struct, **_OUT):
    """A table's luck-adjusted result (its game's review), per seat."""

    ranks: list[int]  # 1 = first
    scores: list[float]
    points: list[float]  # the place points of those ranks


class TableResultOut(msgspec.Struct, **_OUT):
    ranks: list[int]  # per seat, 1 = first
    scores: list[int]  # per seat, the game score
    points: list[float]  # per seat, the place points
    luck_adjusted: Annotated[
        AdjustedResultOut | None,
        msgspec.Meta(
            description="A luck-adjusted tournament's (`standings_by`): the result its "
            "standings count, once its game's review is computed; else null."
        ),
    ]
    unadjusted: Annotated[
        bool,
        msgspec.Meta(
            description="A luck-adjusted tournament's table that no review adjusts (its "
            "review failed, or its game ended without results): it counts by its results."
        ),
    ]


class RoundTable(msgspec.Struct, **_OUT):
    table: int
    game_id: str
    seats: list[str]  # entrant ids in seat order
    result: TableResultOut | None  # None while its game is being played


class RoundOut(msgspec.Struct, **_OUT):
    round: int
    tables: list[RoundTable]
    byes: list[str]


class RoundsOut(msgspec.Struct, **_OUT):
    tournament_id: str
    rounds: list[RoundOut]


class NextTableOut(msgspec.Struct, **_OUT):
    """The player's table of the current round; all None while they have none."""

    tournament_id: str
    player_id: str
    round: int | None
    table: int | None
    game_id: str | None
    seat: int | None
    bye: bool
