"""The rules of TEN as pure functions: `decide` and `evolve`, `apply` their composition.

- `decide(state, seat, action)` checks the action against the rules and returns the
  facts it produces (its events, in log order), or raises `RuleError`; states are
  immutable, so nothing changed.
- `evolve(state, fact)` is the state after one fact: the only place a state changes.
  The replay (`domain.game.replay`) folds this same function over the public event log.
- `apply(state, seat, action)` is `decide` with its facts folded by `evolve` as they are
  produced, in one pass: the new state and the public events.

Chance is data: the draw is a chance node whose outcome is the card drawn. A state's
`draw_pile` is either the seeded pile the service dealt (its top card is the outcome;
the service keeps the pile secret) or, in a state rebuilt from what the players saw,
`HIDDEN` cards, one per card left: then the caller supplies the outcome (`card=`), one
of the unseen cards (`domain.bots.odds.unseen_cards`).

Two facts of a live game are not in its public events: the pile's order and a payment
the high bidder named with a bid (rules 3.5, shown only once the auction is won). The
first is dealt into the state by `new_game`; the second is `PaymentNamed`, a private
fact that `decide` returns beside the events and `apply` never publishes. Legal-move
listing lives in `domain.game.legal`, views in `domain.game.views`, scoring in `domain.game.scoring`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
from msgspec.structs import force_setattr as _set
from msgspec.structs import replace

from domain.game import cards as C
from domain.game import model
from domain.game.errors import RuleError
from domain.game.fairness import Fairness, commitment, deal_seed
from domain.game.model import (
    BUST_LIMIT,
    CURRENCY_CAP,
    STARTING_CURRENCY,
    SUPPLY_BUST,
    SUPPLY_CURRENCY,
    Action,
    Auction,
    AuctionStarted,
    AuctionWon,
    Bid,
    BidPassed,
    BidPlaced,
    Busted,
    Buy,
    BuyDeclined,
    CardBought,
    CardDrawn,
    Event,
    FinalBuyStarted,
    Gain,
    GameFinished,
    GameStarted,
    GameState,
    Payment,
    Player,
    Rules,
    SeatInfo,
    SeatReclaimed,
    SeatTakenOver,
    Stopped,
    TimedOut,
    TokenPayment,
    TurnStarted,
    WildDiscarded,
)
from domain.game.payments import (
    check_payment,
    check_token_payment,
    choose_buy_payment,
    token_payment,
)
from domain.game.results import final_results
from domain.game.rng import SeededRandom

_WILDS = C.WILDS
_NUMBER_CARDS = C.NUMBER_CARDS
HIDDEN = "?"  # a card of the draw pile nobody has seen (not a card code of the game)


class PaymentNamed(msgspec.Struct, frozen=True):
    """Private: the token payment the high bidder named with its bid (rules 3.5). Kept in
    the state until the auction ends (`auction_won` shows the payment made); never in
    the public log."""

    payment: TokenPayment


Fact = Event | PaymentNamed  # what `decide` returns and `evolve` folds


def new_game(
    players: Sequence[tuple[str, str | None]],
    seed: str | int,
    *,
    deck: Sequence[str] | None = None,
    starting_seat: int | None = None,
    rules: Rules | None = None,
    version: int = 0,
    entropy: Sequence[str] | None = None,
) -> tuple[GameState, list[Event]]:
    """Set up a game (rules.md 2). `players` are (name, bot level or None) in seat order.

    The draw pile is the deck for the player count shuffled from the deal's seed
    (`domain.game.fairness.deal_seed` of `seed` and the seats' `entropy`, "" for none), or
    `deck` as given (top card first: no `fairness`). The starting seat is drawn from the same
    stream unless named. The game starts at `version` (a table that waited for its players
    had versions already). The state keeps `seed` (secret until the game ends).
    """
    n = len(players)
    if not 1 <= n <= 5:
        raise RuleError("invalid_game", "A game has 1 to 5 players.")
    for _, bot in players:
        if bot is not None and bot not in model.BOT_LEVELS:
            raise RuleError("invalid_game", "Unknown bot level {bot!r}.", bot=bot)
    entropy = tuple(entropy) if entropy is not None else ("",) * n
    if len(entropy) != n:
        raise ValueError("one entropy per seat")
    rng = SeededRandom(deal_seed(seed, entropy))
    pile = tuple(rng.shuffled(C.deck_for(n))) if deck is None else _custom_pile(deck)
    fairness = None
    if deck is None:
        fairness = Fairness(
            commitment=commitment(seed), entropy=entropy, start_drawn=starting_seat is None
        )
    if starting_seat is None:
        starting_seat = rng.randbelow(n)
    elif not 0 <= starting_seat < n:
        raise RuleError("invalid_game", "starting_seat must be between 0 and {last}.", last=n - 1)
    rules = rules or Rules()
    events: list[Event] = [
        GameStarted(
            seq=1,
            version=version,
            players=tuple(
                SeatInfo(seat=i, name=name, bot=bot) for i, (name, bot) in enumerate(players)
            ),
            rules=rules,
            starting_seat=starting_seat,
            draw_pile_size=len(pile),
            starting_currency=STARTING_CURRENCY,
            supply_currency=SUPPLY_CURRENCY - STARTING_CURRENCY * n,
            supply_bust=SUPPLY_BUST,
            fairness=fairness,
        ),
        TurnStarted(seq=2, version=version, seat=starting_seat),
    ]
    # the seeded pile is dealt into the state: the source of every draw's outcome
    state = replace(evolve(None, events[0]), seed=str(seed), draw_pile=pile)
    return evolve(state, events[1]), events


def _custom_pile(deck: Sequence[str]) -> tuple[str, ...]:
    """A deck given as it is (top card first): valid codes, each at most as many times as
    the 129-card game holds it."""
    if not deck:
        raise RuleError("invalid_game", "A deck holds at least one card.")
    bad = sorted({code for code in deck if code not in C.ALL_CODES})
    if bad:
        raise RuleError("unknown_card", "Not valid card codes: {cards}.", cards=", ".join(bad[:10]))
    C.check_copies(deck)
    return tuple(deck)


def to_act(state: GameState) -> int | None:
    """The seat whose decision the game waits for; None once the game is finished."""
    phase = state.phase
    if phase == "auction":
        auction = state.auction
        assert auction is not None
        return auction.bidders[auction.turn]
    if phase == "final_buy":
        return state.final_queue[0]
    if phase == "finished":
        return None
    return state.active_seat  # the draw and buy phases


def information_state(state: GameState) -> GameState:
    """The game as its players know it: `state` with its pile `HIDDEN`, no seed, no
    payment named by the high bidder and no clock. The public log folded by `evolve`
    gives the same state; the bots and the odds read nothing else, and apply the rules to
    it with the draw's outcomes as data (`card=`)."""
    auction = state.auction
    if auction is not None and auction.high_payment is not None:
        auction = replace(auction, high_payment=None)
    return replace(
        state, seed="", draw_pile=(HIDDEN,) * len(state.draw_pile), auction=auction, clock=None
    )


def decide(state: GameState, seat: int, action: Action, *, card: str | None = None) -> list[Fact]:
    """The facts `action` by `seat` produces: its events in log order, and any private
    fact (`PaymentNamed`). Raises RuleError when the rules refuse it. `card` is the
    chance outcome of a draw from a pile of `HIDDEN` cards (ValueError when it is missing
    there, or given for a dealt pile). Folding `evolve` over the facts gives `apply`'s
    state."""
    return _decided(state, seat, action, card).facts


def apply(
    state: GameState, seat: int, action: Action, *, card: str | None = None
) -> tuple[GameState, list[Event]]:
    """`decide` and `evolve` in one pass: the state after `action` by `seat` and the
    public events it produced (`decide` for `card` and the refusals). `resign` and
    `reclaim` concern the seat, not the game's decision: any seat may send them whoever's
    turn it is."""
    step = _decided(state, seat, action, card)
    return step.finish(), step.events


def evolve(state: GameState | None, fact: Fact) -> GameState:
    """The state after one fact. `game_started` begins a state (`state` unused) whose
    pile is `HIDDEN` cards and whose seed is unknown: what the players know."""
    if type(fact) is GameStarted:
        return _started(fact)
    assert state is not None, "an event log starts with game_started"
    fold = _Fold(state)
    fold.evolve(fact)
    return fold.finish()


def take_over(state: GameState, seat: int, reason: str) -> tuple[GameState, list[Event]]:
    """The game's bot (`takeover_bot`) plays `seat` from now on: after timeouts (the player
    may `reclaim` it; the seat is marked `taken_over` for good), or the player resigned."""
    step = _Step(state)
    step.emit(
        SeatTakenOver(
            seq=step.next_seq(),
            version=step.version,
            seat=seat,
            bot=state.takeover_bot,
            reason=reason,  # type: ignore[arg-type]
        )
    )
    return step.finish(), step.events


def _decided(state: GameState, seat: int, action: Action, card: str | None) -> _Step:
    step = _Step(state)
    kind = type(action)
    if kind in _SEAT_ACTIONS:
        step.seat_action(seat, action)
        return step
    expected = to_act(state)
    if expected is None:
        raise RuleError("game_finished")
    if seat != expected:
        raise RuleError("not_your_turn")
    if card is not None and kind is not model.Draw:
        raise ValueError("a card is the outcome of a draw only")
    # dispatch on the exact type: msgspec answers a failed isinstance (a class pattern)
    # slowly, and an action would try several
    match kind:
        case model.Draw:
            step.draw(card)
        case model.Stop:
            step.stop(action.take)  # type: ignore[attr-defined]
        case model.Pass:
            step.pass_()
        case model.Bid:
            step.bid(action)  # type: ignore[arg-type]
        case model.Buy:
            step.buy(action)  # type: ignore[arg-type]
        case model.Decline:
            step.decline()
        case _:
            raise RuleError("illegal_action", "Unknown action {action!r}.", action=action)
    return step


_SEAT_ACTIONS = frozenset(model.SEAT_ACTIONS)


def _started(event: GameStarted) -> GameState:
    """The state `game_started` describes, its pile `HIDDEN` cards."""
    return GameState(
        rules=event.rules,
        seed="",
        draw_pile=(HIDDEN,) * event.draw_pile_size,
        players=tuple(
            Player(seat=p.seat, name=p.name, bot=p.bot, currency=event.starting_currency)
            for p in event.players
        ),
        starting_seat=event.starting_seat,
        active_seat=event.starting_seat,
        supply_currency=event.supply_currency,
        supply_bust=event.supply_bust,
        last_seq=event.seq,
        version=event.version,
        fairness=event.fairness,
    )


_DIGIT = C.DIGIT
# player count -> seat -> every seat from the left of `seat`, `seat` last
_ROUND = {n: tuple(tuple((s + i) % n for i in range(1, n + 1)) for s in range(n)) for n in range(6)}


def tableau_sums(tableau: Sequence[str]) -> tuple[int, int]:
    """(sum of number cards, sum of currency cards) of a tableau."""
    numbers = money = 0
    digit = _DIGIT
    for code in tableau:
        if code in _NUMBER_CARDS:
            numbers += digit[code]
        else:
            money += digit[code]
    return numbers, money


def bust_kind(tableau: Sequence[str]) -> str | None:
    """3.3: whether a tableau busts, and how: its currency cards reach 11 ("currency"), or
    its number cards exceed its currency cards by 11 or more ("numbers")."""
    numbers, money = tableau_sums(tableau)
    if money >= BUST_LIMIT:
        return "currency"
    if numbers - money >= BUST_LIMIT:
        return "numbers"
    return None


def _split(tableau: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """A tableau's number cards, its currency cards and their value."""
    numbers = []
    spent = []
    money = 0
    for code in tableau:
        if code in _NUMBER_CARDS:
            numbers.append(code)
        else:
            spent.append(code)
            money += _DIGIT[code]
    return tuple(numbers), tuple(spent), money


def taken(player: Player, cards: tuple[str, ...]) -> Player:
    """3.2: the seat after a stop for numbers: the tableau's number `cards` last in its
    collection, in their order. (A search may apply it to a seat as the engine would.)"""
    return replace(player, cards=player.cards + cards)


def purchased(player: Player, card: str, payment: Payment) -> Player:
    """3.4: the seat after buying `card` with `payment` (checked): the tokens paid go (to
    the supply), the cards paid go (to the discard), `card` comes last in its collection.
    (A search may price a purchase with it: nothing else of the game changes but the
    market, the discard and the supply.)"""
    remaining = list(player.cards)
    for spent in payment.cards:
        remaining.remove(spent)
    remaining.append(card)
    return replace(
        player,
        currency=player.currency - payment.currency,
        bust=player.bust - payment.bust,
        cards=tuple(remaining),
    )


class _Fold:
    """A state being evolved fact by fact. `new` is a copy of the state changed in place
    (`_set`) until `finish` hands it out frozen; nobody else has seen it by then: msgspec's
    `force_setattr` on a copy costs far less than rebuilding the state with
    `replace(state, **changes)` per fact. Each fact's effect is one method (`_EVOLVE`);
    nothing else changes a state."""

    __slots__ = ("new", "players")

    def __init__(self, state: GameState) -> None:
        self.new = state.__copy__()
        self.players: Sequence[Player] = state.players  # a list once a player changes

    def finish(self) -> GameState:
        if isinstance(self.players, list):
            _set(self.new, "players", tuple(self.players))
            self.players = self.new.players
        return self.new

    def put(self, seat: int, player: Player) -> None:
        """A seat's new tokens or collection."""
        if not isinstance(self.players, list):
            self.players = list(self.players)
        self.players[seat] = player

    def evolve(self, fact: Fact) -> None:
        kind = type(fact)
        if kind is not PaymentNamed:
            new = self.new
            _set(new, "version", fact.version)  # type: ignore[union-attr]
            _set(new, "last_seq", fact.seq)  # type: ignore[union-attr]
        _EVOLVE[kind](self, fact)

    # -- tokens
    def gains(self, gains: Sequence[Gain]) -> None:
        new = self.new
        for gain in gains:
            player = self.players[gain.seat]
            _set(new, "supply_currency", new.supply_currency - gain.amount)
            self.put(gain.seat, replace(player, currency=player.currency + gain.amount))

    def to_supply(self, paid: TokenPayment | Payment) -> None:
        """Tokens a seat paid go back to the supply."""
        new = self.new
        _set(new, "supply_currency", new.supply_currency + paid.currency)
        _set(new, "supply_bust", new.supply_bust + paid.bust)

    def after_buy(self) -> None:
        """A seat's buy phase of the final round is over."""
        new = self.new
        if new.phase == "final_buy":
            _set(new, "final_queue", new.final_queue[1:])

    # -- one method per fact
    def turn_started(self, event: TurnStarted) -> None:
        new = self.new
        _set(new, "phase", "draw")
        _set(new, "drawn", False)
        _set(new, "active_seat", event.seat)

    def card_drawn(self, event: CardDrawn) -> None:
        new = self.new
        _set(new, "draw_pile", new.draw_pile[1:])
        _set(new, "drawn", True)
        if event.card not in _WILDS:
            _set(new, "tableau", (*new.tableau, event.card))

    def auction_started(self, event: AuctionStarted) -> None:
        new = self.new
        _set(new, "phase", "auction")
        _set(new, "auction", Auction(card=event.card, bidders=event.bidders))

    def bid_placed(self, event: BidPlaced) -> None:
        auction = self.new.auction
        assert auction is not None
        _set(
            self.new,
            "auction",
            replace(
                auction,
                turn=auction.turn + 1,
                high_bid=event.amount,
                high_bidder=event.seat,
                high_payment=None,
            ),
        )

    def payment_named(self, fact: PaymentNamed) -> None:
        auction = self.new.auction
        assert auction is not None
        _set(self.new, "auction", replace(auction, high_payment=fact.payment))

    def bid_passed(self, event: BidPassed) -> None:
        auction = self.new.auction
        assert auction is not None
        _set(self.new, "auction", replace(auction, turn=auction.turn + 1))

    def auction_won(self, event: AuctionWon) -> None:
        seat, payment = event.seat, event.payment
        player = self.players[seat]
        self.put(
            seat,
            replace(
                player,
                currency=player.currency - payment.currency,
                bust=player.bust - payment.bust,
                cards=(*player.cards, event.card),
            ),
        )
        self.to_supply(payment)
        new = self.new
        _set(new, "auction", None)
        _set(new, "phase", "draw")

    def wild_discarded(self, event: WildDiscarded) -> None:
        new = self.new
        _set(new, "discard", (*new.discard, event.card))
        _set(new, "auction", None)
        _set(new, "phase", "draw")

    def busted(self, event: Busted) -> None:
        new = self.new
        _set(new, "tableau", ())
        _set(new, "market", new.market + event.to_market)
        _set(new, "discard", new.discard + event.to_discard)
        if event.bust_token:
            player = self.players[event.seat]
            self.put(event.seat, replace(player, bust=player.bust + 1))
            _set(new, "supply_bust", new.supply_bust - 1)
        self.gains(event.gains)

    def stopped(self, event: Stopped) -> None:
        new = self.new
        _set(new, "tableau", ())
        _set(new, "discard", new.discard + event.to_discard)
        if event.take == "numbers":
            self.put(event.seat, taken(self.players[event.seat], event.cards))
            _set(new, "phase", "buy")
        else:
            _set(new, "market", new.market + event.cards)
        self.gains(event.gains)

    def card_bought(self, event: CardBought) -> None:
        seat, payment, card = event.seat, event.payment, event.card
        self.put(seat, purchased(self.players[seat], card, payment))
        self.to_supply(payment)
        new = self.new
        market = list(new.market)
        market.remove(card)
        _set(new, "market", tuple(market))
        _set(new, "discard", new.discard + payment.cards)
        self.after_buy()

    def buy_declined(self, event: BuyDeclined) -> None:
        self.after_buy()

    def final_buy_started(self, event: FinalBuyStarted) -> None:
        new = self.new
        _set(new, "phase", "final_buy")
        _set(new, "drawn", False)
        _set(new, "final_queue", event.order)

    def game_finished(self, event: GameFinished) -> None:
        _set(self.new, "phase", "finished")
        _set(self.new, "results", event.results)

    def seat_taken_over(self, event: SeatTakenOver) -> None:
        player = self.players[event.seat]
        if event.reason == "resigned":
            changed = replace(player, stand_in=event.bot, resigned=True)
        else:
            changed = replace(player, stand_in=event.bot, taken_over=True)
        self.put(event.seat, changed)

    def seat_reclaimed(self, event: SeatReclaimed) -> None:
        self.put(event.seat, replace(self.players[event.seat], stand_in=None))

    def timed_out(self, event: TimedOut) -> None:
        """Nothing changes: the move made for the seat follows in its own events."""


_EVOLVE: dict[type, Callable[[_Fold, object], None]] = {
    TurnStarted: _Fold.turn_started,
    CardDrawn: _Fold.card_drawn,
    AuctionStarted: _Fold.auction_started,
    BidPlaced: _Fold.bid_placed,
    PaymentNamed: _Fold.payment_named,
    BidPassed: _Fold.bid_passed,
    AuctionWon: _Fold.auction_won,
    WildDiscarded: _Fold.wild_discarded,
    Busted: _Fold.busted,
    Stopped: _Fold.stopped,
    CardBought: _Fold.card_bought,
    BuyDeclined: _Fold.buy_declined,
    FinalBuyStarted: _Fold.final_buy_started,
    GameFinished: _Fold.game_finished,
    SeatTakenOver: _Fold.seat_taken_over,
    SeatReclaimed: _Fold.seat_reclaimed,
    TimedOut: _Fold.timed_out,
}  # type: ignore[dict-item]


class _Step(_Fold):
    """One action being decided: each rule below reads the state as evolved so far, and
    `emit`s the facts it produces, which `evolve` the state as they are emitted (the next
    rule reads their effect). `events` are the public ones, `facts` all of them."""

    __slots__ = ("events", "facts", "version")

    def __init__(self, state: GameState) -> None:
        self.new = new = state.__copy__()
        self.players = state.players
        self.version = version = state.version + 1
        _set(new, "version", version)  # every fact of the action has it
        self.events: list[Event] = []
        self.facts: list[Fact] = self.events  # a list of its own once a private fact comes

    # -- bookkeeping
    def next_seq(self) -> int:
        """The number of the next event."""
        return self.new.last_seq + 1

    def emit(self, event: Event) -> None:
        # events are built by the caller with explicit fields: msgspec takes `**data`
        # much slower
        self.events.append(event)
        if self.facts is not self.events:
            self.facts.append(event)
        # `evolve` without its version (set once, above) and without a call: it is the
        # engine's innermost step
        _set(self.new, "last_seq", event.seq)
        _EVOLVE[type(event)](self, event)

    def emit_private(self, fact: PaymentNamed) -> None:
        if self.facts is self.events:
            self.facts = list(self.events)
        self.facts.append(fact)
        _EVOLVE[PaymentNamed](self, fact)

    def gains_of(self, seats: Sequence[int], amount: int) -> tuple[Gain, ...]:
        """3.6: `amount` currency tokens handed to each of `seats` in that order, each up to
        the cap of 10 and while the supply lasts."""
        if amount <= 0:
            return ()
        gains = []
        supply = self.new.supply_currency
        players = self.players
        for seat in seats:
            got = min(amount, CURRENCY_CAP - players[seat].currency, supply)
            if got > 0:
                supply -= got
                gains.append(Gain(seat=seat, amount=got))
        return tuple(gains)

    def others(self, seat: int) -> tuple[int, ...]:
        """The other seats in turn order, from the left of `seat`."""
        return _ROUND[len(self.players)][seat][:-1]

    # -- the seat (resign, reclaim)
    def seat_action(self, seat: int, action: Action) -> None:
        """`resign` (a bot plays the seat on and it ranks last) or `reclaim` (the player
        takes back the seat a bot took over after timeouts)."""
        new = self.new
        if new.phase == "finished":
            raise RuleError("game_finished")
        player = new.players[seat]
        if player.resigned:
            raise RuleError("illegal_action", "This seat resigned; it stays with its bot.")
        if type(action) is model.Resign:
            self.emit(
                SeatTakenOver(
                    seq=self.next_seq(),
                    version=self.version,
                    seat=seat,
                    bot=new.takeover_bot,
                    reason="resigned",
                )
            )
            return
        if player.stand_in is None:
            raise RuleError(
                "illegal_action", "No bot plays this seat: there is nothing to take back."
            )
        self.emit(SeatReclaimed(seq=self.next_seq(), version=self.version, seat=seat))

    # -- draw phase (3.1), bust (3.3)
    def draw(self, card: str | None) -> None:
        new = self.new
        if new.phase != "draw":
            raise RuleError("illegal_action", "Cards are drawn only in the draw phase.")
        pile = new.draw_pile
        if not pile:
            raise RuleError("draw_pile_empty")
        top = pile[0]
        if card is None:
            if top == HIDDEN:
                raise ValueError("the pile is hidden: the draw's outcome is to be given")
            card = top
        elif top != HIDDEN:
            raise ValueError("the pile was dealt: its top card is the draw's outcome")
        seat = new.active_seat
        self.emit(
            CardDrawn(
                seq=self.next_seq(),
                version=self.version,
                seat=seat,
                card=card,
                draw_pile_size=len(pile) - 1,
            )
        )
        if card in _WILDS:
            bidders = _ROUND[len(self.players)][seat]
            self.emit(
                AuctionStarted(
                    seq=self.next_seq(), version=self.version, card=card, bidders=bidders
                )
            )
            return
        kind = bust_kind(new.tableau)
        if kind is not None:
            self.bust(kind)

    def bust(self, kind: str) -> None:
        """3.3: the tableau goes to market and discard, a bust token, no buy phase; a bust
        by numbers pays the currency shown to the other players."""
        new = self.new
        seat = new.active_seat
        numbers, spent, money = _split(new.tableau)
        self.emit(
            Busted(
                seq=self.next_seq(),
                version=self.version,
                seat=seat,
                kind=kind,  # type: ignore[arg-type]
                to_market=numbers,
                to_discard=spent,
                bust_token=new.supply_bust > 0,
                gains=self.gains_of(self.others(seat), money) if kind == "numbers" else (),
            )
        )
        self.end_turn()

    # -- reward (3.2)
    def stop(self, take: str) -> None:
        new = self.new
        if new.phase != "draw":
            raise RuleError("illegal_action", "A player stops only in the draw phase.")
        if not new.drawn:
            raise RuleError("must_draw")
        if take not in ("numbers", "currency"):
            raise RuleError("illegal_action", "A stop takes either 'numbers' or 'currency'.")
        seat = new.active_seat
        numbers, spent, money = _split(new.tableau)
        seats = self.others(seat) if take == "numbers" else (seat,)
        self.emit(
            Stopped(
                seq=self.next_seq(),
                version=self.version,
                seat=seat,
                take=take,  # type: ignore[arg-type]
                cards=numbers,
                to_discard=spent,
                gains=self.gains_of(seats, money),
            )
        )
        if take == "currency":
            self.end_turn()

    def end_turn(self) -> None:
        """The next player's turn, or after the last card the final buy round (4) from the
        left of this player."""
        new = self.new
        seat = new.active_seat
        if not new.draw_pile:
            order = _ROUND[len(self.players)][seat]
            self.emit(FinalBuyStarted(seq=self.next_seq(), version=self.version, order=order))
            return
        nxt = (seat + 1) % len(self.players)
        self.emit(TurnStarted(seq=self.next_seq(), version=self.version, seat=nxt))

    # -- auction (3.5)
    def bid(self, action: Bid) -> None:
        auction = self._auction("Bids are made only in an auction.")
        seat = auction.bidders[auction.turn]
        amount = action.amount
        player = self.players[seat]
        if amount < 1 or amount <= auction.high_bid:
            raise RuleError("bid_too_low")
        if amount > player.bidding_power:
            raise RuleError("bid_too_high")
        if action.payment is not None:
            check_token_payment(action.payment, amount, player.currency, player.bust)
        self.emit(BidPlaced(seq=self.next_seq(), version=self.version, seat=seat, amount=amount))
        if action.payment is not None:
            self.emit_private(PaymentNamed(payment=action.payment))
        self.next_bidder()

    def pass_(self) -> None:
        auction = self._auction("Passing is for auctions; a buy is declined.")
        seat = auction.bidders[auction.turn]
        self.emit(BidPassed(seq=self.next_seq(), version=self.version, seat=seat))
        self.next_bidder()

    def _auction(self, refusal: str) -> Auction:
        auction = self.new.auction
        if self.new.phase != "auction" or auction is None:
            raise RuleError("illegal_action", refusal)
        return auction

    def next_bidder(self) -> None:
        """After the last bidder's chance, the end of the auction: the high bidder pays (the
        payment named, else the one the service picks) and takes the card, or nobody bid
        and the card is discarded. The turn goes on in the draw phase."""
        auction = self.new.auction
        assert auction is not None
        if auction.turn < len(auction.bidders):
            return
        winner = auction.high_bidder
        if winner is None:
            self.emit(WildDiscarded(seq=self.next_seq(), version=self.version, card=auction.card))
            return
        payment = auction.high_payment
        if payment is None:
            player = self.players[winner]
            payment = token_payment(auction.high_bid, player.currency, player.bust)
            assert payment is not None  # a bid never exceeds the bidding power
        self.emit(
            AuctionWon(
                seq=self.next_seq(),
                version=self.version,
                seat=winner,
                card=auction.card,
                amount=auction.high_bid,
                payment=payment,
            )
        )

    # -- buy phase (3.4) and final buy round (4)
    def buy(self, action: Buy) -> None:
        new = self.new
        if new.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Cards are bought only in a buy phase.")
        seat = to_act(new)
        assert seat is not None
        payment = _buy_payment(new, self.players[seat], action)
        self.emit(
            CardBought(
                seq=self.next_seq(),
                version=self.version,
                seat=seat,
                card=action.card,
                payment=payment,
            )
        )
        self.end_buy()

    def decline(self) -> None:
        new = self.new
        if new.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Only a buy phase can be declined.")
        seat = to_act(new)
        assert seat is not None
        self.emit(BuyDeclined(seq=self.next_seq(), version=self.version, seat=seat))
        self.end_buy()

    def end_buy(self) -> None:
        """After a buy phase: the next turn, or the next seat of the final buy round, or
        after the last one the end of the game (5, 6)."""
        new = self.new
        if new.phase == "buy":
            self.end_turn()
            return
        if new.final_queue:
            return
        results = final_results(self.players, new.rules)
        self.emit(GameFinished(seq=self.next_seq(), version=self.version, results=results))


def _buy_payment(state: GameState, player: Player, action: Buy) -> Payment:
    """The checked payment of a purchase by `player` in a buy phase: the one given, or
    the one the service chooses. Raises RuleError when the rules refuse the purchase."""
    card = action.card
    if card not in C.ALL_CODES:
        raise RuleError("unknown_card", "{card!r} is not a card code.", card=card)
    if card not in state.market:
        raise RuleError("card_not_in_market")
    if card in player.cards:
        raise RuleError("duplicate_card")
    price = _DIGIT[card]
    payment = action.payment
    if payment is None:
        payment = choose_buy_payment(player.cards, price, player.currency, player.bust, state.rules)
        if payment is None:
            raise RuleError("insufficient_payment", "The player cannot pay this price.")
    else:
        for spent in payment.cards:
            if spent not in C.ALL_CODES:
                raise RuleError("unknown_card", "{card!r} is not a card code.", card=spent)
        check_payment(payment, price, player.currency, player.bust, player.cards)
    return payment
