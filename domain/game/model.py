"""The game's data: rules, state, actions (commands) and events (what happened).

Everything is an immutable msgspec Struct, so a state is cheap to copy, compare and
serialize. `GameState` holds two secrets (the draw pile's order and the seed); clients
only ever see `domain.game.views.PublicView`.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

import msgspec

from domain.game.cards import CollectionCode, NumberCode
from domain.game.fairness import Fairness

SCHEMA_VERSION = 1
STARTING_CURRENCY = 5
SUPPLY_CURRENCY = 50
SUPPLY_BUST = 15
CURRENCY_CAP = 10
BUST_TOKEN_VALUE = 3
BUST_LIMIT = 11
MAX_BID = 1000  # far above any bidding power; bounds what a client may send

Phase = Literal["draw", "auction", "buy", "final_buy", "finished"]
BotLevel = Literal[
    "random", "basic", "expert", "master"
]  # the server-side players (`domain.bots.basic.BOTS`)
BOT_LEVELS: tuple[str, ...] = get_args(BotLevel)
Take = Literal["numbers", "currency"]

_FROZEN = {"frozen": True, "kw_only": True, "forbid_unknown_fields": True}

SmallInt = Annotated[int, msgspec.Meta(ge=0, le=1000)]


class Rules(msgspec.Struct, **_FROZEN):
    """Per-game rule options (rules.md marks each as a [decision])."""

    perfect_bonus: Annotated[int, msgspec.Meta(ge=0, le=100)] = 1


# ---------------------------------------------------------------- clocks

Seconds = Annotated[float, msgspec.Meta(ge=0, le=30 * 24 * 3600)]
TakeoverAfter = Annotated[int, msgspec.Meta(ge=1, le=100)]


class BankClock(msgspec.Struct, tag="bank", tag_field="type", **_FROZEN):
    """Real-time play: each seat has a time bank, charged while the game waits on it, and
    gets `increment_seconds` back after each of its decisions (a Fischer clock). A seat
    whose bank runs out times out."""

    initial_seconds: Annotated[float, msgspec.Meta(gt=0, le=30 * 24 * 3600)]
    increment_seconds: Seconds = 0.0
    takeover_after: TakeoverAfter = 3  # consecutive timeouts before a bot takes the seat


class DeadlineClock(msgspec.Struct, tag="deadline", tag_field="type", **_FROZEN):
    """Correspondence play: every decision must come within `hours` of the game starting
    to wait on it."""

    hours: Annotated[float, msgspec.Meta(gt=0, le=30 * 24)]
    takeover_after: TakeoverAfter = 3


TimeControl = BankClock | DeadlineClock


class Clock(msgspec.Struct, **_FROZEN):
    """A game's clock (`domain.bots.clock`): which seat's time runs, since when, its deadline
    (unix seconds: an absolute server time), the banks of a bank clock (seconds left at the
    start of each seat's current or next decision) and each seat's consecutive timeouts."""

    control: TimeControl
    seat: int | None  # the seat the game waits on (None: finished)
    since: float  # when that wait began
    deadline: float | None
    banks: tuple[float, ...] = ()  # bank clocks only
    timeouts: tuple[int, ...] = ()


# ---------------------------------------------------------------- payments


class TokenPayment(msgspec.Struct, **_FROZEN):
    """Tokens named for an auction bid."""

    currency: SmallInt = 0
    bust: SmallInt = 0


class Payment(msgspec.Struct, **_FROZEN):
    """What a buyer hands over: tokens and cards from their own collection."""

    currency: SmallInt = 0
    bust: SmallInt = 0
    cards: Annotated[tuple[CollectionCode, ...], msgspec.Meta(max_length=200)] = ()


# ---------------------------------------------------------------- actions

_ACTION = {**_FROZEN, "tag_field": "type"}


class Draw(msgspec.Struct, tag="draw", **_ACTION):
    pass


class Stop(msgspec.Struct, tag="stop", **_ACTION):
    take: Take


class Bid(msgspec.Struct, tag="bid", **_ACTION):
    amount: Annotated[int, msgspec.Meta(ge=1, le=MAX_BID)]
    payment: TokenPayment | None = None  # None: the service picks the payment (rules 3.5)


class Pass(msgspec.Struct, tag="pass", **_ACTION):
    pass


class Buy(msgspec.Struct, tag="buy", **_ACTION):
    card: NumberCode
    payment: Payment | None = None  # None: the service picks the payment


class Decline(msgspec.Struct, tag="decline", **_ACTION):
    pass


class Resign(msgspec.Struct, tag="resign", **_ACTION):
    """Leave the game at any time: a bot plays the seat on, and it ranks last."""


class Reclaim(msgspec.Struct, tag="reclaim", **_ACTION):
    """Take back a seat a bot took over after timeouts (at any time)."""


Action = Draw | Stop | Bid | Pass | Buy | Decline | Resign | Reclaim
SEAT_ACTIONS = (Resign, Reclaim)  # actions about the seat, allowed whoever's turn it is


# ---------------------------------------------------------------- state


class Player(msgspec.Struct, **_FROZEN):
    """A seat. Nothing in it is secret: views show it as it is."""

    seat: int
    name: str
    bot: str | None = None
    currency: int = 0
    bust: int = 0
    cards: tuple[str, ...] = ()  # the collection, in the order the cards were taken
    stand_in: str | None = None  # the bot level playing this human seat now (taken over)
    taken_over: bool = False  # a bot took the seat over after timeouts at some point
    resigned: bool = False  # the player resigned: a bot plays on, the seat ranks last

    @property
    def bidding_power(self) -> int:
        """3.5: the highest bid the seat can make (bust tokens at their value)."""
        return self.currency + BUST_TOKEN_VALUE * self.bust


class Auction(msgspec.Struct, **_FROZEN):
    card: str
    bidders: tuple[int, ...]  # bidding order: left of the active player first, active last
    turn: int = 0  # index in `bidders` of the seat whose chance it is
    high_bid: int = 0
    high_bidder: int | None = None
    high_payment: TokenPayment | None = None  # named by the high bidder, else chosen at the end


class ColorResult(msgspec.Struct, **_FROZEN):
    points: int
    run: tuple[str, ...]


# `domain.game.scoring`'s answers, defined here and not in that module, which mypyc compiles
# (setup.py): a class defined in a compiled module keeps no field types for msgspec (a
# Score decoded from JSON held dicts for its ColorScores). They keep the name
# `domain.game.scoring` gives them (the OpenAPI document's, pickle's), and that module holds
# them: the field types resolve there as here.
class ColorScore(msgspec.Struct, frozen=True, kw_only=True):
    points: int  # run length + perfect bonus if the run is 1..9
    run: tuple[str, ...]  # codes of the cards in the scored run, in number order, wilds included


class Score(msgspec.Struct, frozen=True, kw_only=True):
    total: int
    colors: dict[str, ColorScore]  # keys exactly "R", "B", "O", "G" in that order


ColorScore.__module__ = Score.__module__ = "domain.game.scoring"


class Result(msgspec.Struct, **_FROZEN):
    seat: int
    score: int
    colors: dict[str, ColorResult]
    rank: int
    winner: bool
    currency: int
    bust: int
    cards: int
    resigned: bool = False


class GameState(msgspec.Struct, **_FROZEN):
    schema_version: int = SCHEMA_VERSION
    rules: Rules
    seed: str  # secret while the game is live
    draw_pile: tuple[str, ...]  # secret: top card first
    players: tuple[Player, ...]
    starting_seat: int
    active_seat: int
    phase: Phase = "draw"
    drawn: bool = False  # the active player has drawn this turn
    tableau: tuple[str, ...] = ()
    market: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    supply_currency: int = SUPPLY_CURRENCY
    supply_bust: int = SUPPLY_BUST
    auction: Auction | None = None
    final_queue: tuple[int, ...] = ()  # seats still to have their final buy phase
    version: int = 0  # +1 per accepted action
    last_seq: int = 0  # seq of the last event produced
    results: tuple[Result, ...] | None = None
    clock: Clock | None = None  # None: no time control
    takeover_bot: str = "basic"  # the bot level that plays a seat taken over or resigned
    # the deal's commitment and the seats' entropy (`domain.game.fairness`), public; None for
    # a deck given as it is, and for games dealt before the scheme
    fairness: Fairness | None = None


# ---------------------------------------------------------------- events

_EVENT = {"frozen": True, "kw_only": True, "tag_field": "type"}


class Event(msgspec.Struct, **_EVENT):
    seq: int  # 1, 2, 3 ... in the game's log
    version: int  # the game's version once the action that produced it was applied


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    bot: str | None = None


class Gain(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    amount: int


class GameStarted(Event, tag="game_started"):
    """The game was set up (rules 2): the seats, the rules, the starting seat, the draw pile's size and the tokens."""

    players: tuple[SeatInfo, ...]
    rules: Rules
    starting_seat: int
    draw_pile_size: int
    starting_currency: int
    supply_currency: int
    supply_bust: int
    # the provably fair deal (`domain.game.fairness`): null for a deck given as it is
    fairness: Fairness | None = None


class TurnStarted(Event, tag="turn_started"):
    """A seat's turn began with its draw phase (3.1)."""

    seat: int


class CardDrawn(Event, tag="card_drawn"):
    """The active seat drew the top card of the draw pile (3.1)."""

    seat: int
    card: str
    draw_pile_size: int  # cards left after this draw


class AuctionStarted(Event, tag="auction_started"):
    """A wild card was drawn and is auctioned (3.5); `bidders` in bidding order, the drawer last."""

    card: str
    bidders: tuple[int, ...]


class BidPlaced(Event, tag="bid_placed"):
    """A bidder bid (3.5)."""

    seat: int
    amount: int


class BidPassed(Event, tag="bid_passed"):
    """A bidder passed (3.5)."""

    seat: int


class AuctionWon(Event, tag="auction_won"):
    """The auction ended: the high bidder paid and took the wild card (3.5)."""

    seat: int
    card: str
    amount: int
    payment: TokenPayment


class WildDiscarded(Event, tag="wild_discarded"):
    """The auction ended with no bid: the wild card was discarded (3.5)."""

    card: str  # everyone passed


class Busted(Event, tag="busted"):
    """The tableau busted (3.3): number cards to the market, currency cards discarded."""

    seat: int
    kind: Take  # "numbers" or "currency"
    to_market: tuple[str, ...]
    to_discard: tuple[str, ...]
    bust_token: bool  # false when the supply had none left
    gains: tuple[Gain, ...]


class Stopped(Event, tag="stopped"):
    """The active seat stopped and took a reward (3.2)."""

    seat: int
    take: Take
    cards: tuple[str, ...]  # number cards: to the collection ("numbers") or the market
    to_discard: tuple[str, ...]
    gains: tuple[Gain, ...]


class CardBought(Event, tag="card_bought"):
    """A seat bought a card from the market (3.4)."""

    seat: int
    card: str
    payment: Payment


class BuyDeclined(Event, tag="buy_declined"):
    """A seat ended its buy phase without buying (3.4)."""

    seat: int


class FinalBuyStarted(Event, tag="final_buy_started"):
    """The last card was drawn: every seat has one more buy phase, in `order` (4)."""

    order: tuple[int, ...]


class TimedOut(Event, tag="timed_out"):
    """The seat let its deadline pass: the events after this one are the move the bot of
    the game (`takeover_bot`) made for it."""

    seat: int
    deadline: float


class SeatTakenOver(Event, tag="seat_taken_over"):
    """A bot plays the seat from now on: after `takeover_after` consecutive timeouts (the
    player may take it back with `reclaim`), or because the player resigned."""

    seat: int
    bot: str
    reason: Literal["timeouts", "resigned"]


class SeatReclaimed(Event, tag="seat_reclaimed"):
    """The player took back the seat a bot had taken over."""

    seat: int


class GameFinished(Event, tag="game_finished"):
    """The final buy round ended: the results (5, 6)."""

    results: tuple[Result, ...]


AnyEvent = (
    GameStarted
    | TurnStarted
    | CardDrawn
    | AuctionStarted
    | BidPlaced
    | BidPassed
    | AuctionWon
    | WildDiscarded
    | Busted
    | Stopped
    | CardBought
    | BuyDeclined
    | FinalBuyStarted
    | TimedOut
    | SeatTakenOver
    | SeatReclaimed
    | GameFinished
)
