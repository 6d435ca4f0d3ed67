"""The rules of TEN as pure functions: `new_game`, `to_act`, `apply`.

`apply(state, seat, action)` checks the action against the rules and returns the new
state and the events it produced, or raises `RuleError` and leaves nothing changed
(states are immutable). Legal-move listing lives in `domain.legal`, views in
`domain.views`, scoring in `domain.scoring`.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import force_setattr as _set
from msgspec.structs import replace

from domain import cards as C
from domain import model
from domain.errors import RuleError
from domain.model import (
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
    TurnStarted,
    WildDiscarded,
)
from domain.payments import check_payment, check_token_payment, choose_buy_payment, token_payment
from domain.results import final_results
from domain.rng import SeededRandom

_WILDS = C.WILDS
_NUMBER_CARDS = C.NUMBER_CARDS


def new_game(
    players: Sequence[tuple[str, str | None]],
    seed: str | int,
    *,
    deck: Sequence[str] | None = None,
    starting_seat: int | None = None,
    rules: Rules | None = None,
    version: int = 0,
) -> tuple[GameState, list[Event]]:
    """Set up a game (rules.md 2). `players` are (name, bot level or None) in seat order.

    The draw pile is the deck for the player count shuffled from `seed`, or `deck` as
    given (top card first). The starting seat is drawn from the seed unless named. The
    game starts at `version` (a table that waited for its players had versions already).
    """
    n = len(players)
    if not 1 <= n <= 5:
        raise RuleError("invalid_game", "A game has 1 to 5 players.")
    for _, bot in players:
        if bot is not None and bot not in model.BOT_LEVELS:
            raise RuleError("invalid_game", "Unknown bot level {bot!r}.", bot=bot)
    rng = SeededRandom(seed)
    pile = tuple(rng.shuffled(C.deck_for(n))) if deck is None else _custom_pile(deck)
    if starting_seat is None:
        starting_seat = rng.randbelow(n)
    elif not 0 <= starting_seat < n:
        raise RuleError("invalid_game", "starting_seat must be between 0 and {last}.", last=n - 1)
    rules = rules or Rules()
    state = GameState(
        rules=rules,
        seed=str(seed),
        draw_pile=pile,
        players=tuple(
            Player(seat=i, name=name, bot=bot, currency=STARTING_CURRENCY)
            for i, (name, bot) in enumerate(players)
        ),
        starting_seat=starting_seat,
        active_seat=starting_seat,
        supply_currency=SUPPLY_CURRENCY - STARTING_CURRENCY * n,
        supply_bust=SUPPLY_BUST,
        last_seq=2,
        version=version,
    )
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
            supply_currency=state.supply_currency,
            supply_bust=state.supply_bust,
        ),
        TurnStarted(seq=2, version=version, seat=starting_seat),
    ]
    return state, events


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


def apply(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    """Apply `action` by `seat`. Raises RuleError (state untouched) when the rules refuse it.
    `resign` and `reclaim` concern the seat, not the game's decision: any seat may send
    them whoever's turn it is."""
    if type(action) in _SEAT_ACTIONS:
        return _seat_action(state, seat, action)
    expected = to_act(state)
    if expected is None:
        raise RuleError("game_finished")
    if seat != expected:
        raise RuleError("not_your_turn")
    step = _Step(state)
    # dispatch on the exact type: msgspec answers a failed isinstance (a class pattern)
    # slowly, ~0.2 us each, which cost 8% of a simulated game
    match type(action):
        case model.Draw:
            step.draw()
        case model.Stop:
            step.stop(action.take)
        case model.Pass:
            step.pass_()
        case model.Bid:
            step.bid(action)
        case model.Buy:
            step.buy(action)
        case model.Decline:
            step.decline()
        case _:
            raise RuleError("illegal_action", "Unknown action {action!r}.", action=action)
    return step.finish()


_SEAT_ACTIONS = frozenset(model.SEAT_ACTIONS)


def _seat_action(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    """`resign` (a bot plays the seat on and it ranks last) or `reclaim` (the player takes
    back the seat a bot took over after timeouts)."""
    if state.phase == "finished":
        raise RuleError("game_finished")
    player = state.players[seat]
    if player.resigned:
        raise RuleError("illegal_action", "This seat resigned; it stays with its bot.")
    if type(action) is model.Resign:
        return take_over(state, seat, "resigned")
    if player.stand_in is None:
        raise RuleError("illegal_action", "No bot plays this seat: there is nothing to take back.")
    step = _Step(state)
    step.put(seat, replace(player, stand_in=None))
    step.emit(SeatReclaimed(seq=step.next_seq(), version=step.new.version, seat=seat))
    return step.finish()


def take_over(state: GameState, seat: int, reason: str) -> tuple[GameState, list[Event]]:
    """The game's bot (`takeover_bot`) plays `seat` from now on: after timeouts (the player
    may `reclaim` it; the seat is marked `taken_over` for good), or the player resigned."""
    step = _Step(state)
    player = state.players[seat]
    bot = state.takeover_bot
    if reason == "resigned":
        changed = replace(player, stand_in=bot, resigned=True)
    else:
        changed = replace(player, stand_in=bot, taken_over=True)
    step.put(seat, changed)
    step.emit(
        SeatTakenOver(
            seq=step.next_seq(), version=step.new.version, seat=seat, bot=bot, reason=reason
        )
    )
    return step.finish()


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


class _Step:
    """One action's result being built. `new` is a copy of the state that the rules change
    in place (`_set`) until `finish` hands it out frozen; nobody else has seen it by then.
    msgspec's `force_setattr` on a copy costs a third of rebuilding the state with
    `replace(state, **changes)`, which took 7% of a simulated game. Each rule below is one
    method; `apply` calls the one its action starts."""

    __slots__ = ("events", "new", "players")

    def __init__(self, state: GameState) -> None:
        self.new = new = state.__copy__()
        _set(new, "version", state.version + 1)
        self.events: list[Event] = []
        self.players: Sequence[Player] = state.players  # a list once a player changes

    # -- bookkeeping
    def next_seq(self) -> int:
        """The number of the next event."""
        seq = self.new.last_seq + 1
        _set(self.new, "last_seq", seq)
        return seq

    def emit(self, event: Event) -> None:
        # events are built by the caller with explicit fields: msgspec takes `**data`
        # about 4 times slower
        self.events.append(event)

    def put(self, seat: int, player: Player) -> None:
        """A seat's new tokens or collection."""
        if not isinstance(self.players, list):
            self.players = list(self.players)
        self.players[seat] = player

    def finish(self) -> tuple[GameState, list[Event]]:
        if isinstance(self.players, list):
            _set(self.new, "players", tuple(self.players))
        return self.new, self.events

    # -- tokens (3.6, and payments to the supply)
    def gain(self, seats: Sequence[int], amount: int) -> tuple[Gain, ...]:
        """3.6: hand `amount` currency tokens to each of `seats` in that order, each up to the
        cap of 10 and while the supply lasts."""
        if amount <= 0:
            return ()
        gains = []
        new = self.new
        for seat in seats:
            player = self.players[seat]
            got = min(amount, CURRENCY_CAP - player.currency, new.supply_currency)
            if got > 0:
                _set(new, "supply_currency", new.supply_currency - got)
                self.put(seat, replace(player, currency=player.currency + got))
                gains.append(Gain(seat=seat, amount=got))
        return tuple(gains)

    def pay(self, seat: int, currency: int, bust: int) -> None:
        """Tokens paid by `seat` go back to the supply."""
        player = self.players[seat]
        self.put(
            seat, replace(player, currency=player.currency - currency, bust=player.bust - bust)
        )
        _set(self.new, "supply_currency", self.new.supply_currency + currency)
        _set(self.new, "supply_bust", self.new.supply_bust + bust)

    # -- draw phase (3.1), bust (3.3)
    def draw(self) -> None:
        new = self.new
        if new.phase != "draw":
            raise RuleError("illegal_action", "Cards are drawn only in the draw phase.")
        if not new.draw_pile:
            raise RuleError("draw_pile_empty")
        card, pile = new.draw_pile[0], new.draw_pile[1:]
        seat = new.active_seat
        _set(new, "draw_pile", pile)
        _set(new, "drawn", True)
        self.emit(
            CardDrawn(
                seq=self.next_seq(),
                version=new.version,
                seat=seat,
                card=card,
                draw_pile_size=len(pile),
            )
        )
        if card in _WILDS:
            bidders = _ROUND[len(self.players)][seat]
            _set(new, "phase", "auction")
            _set(new, "auction", Auction(card=card, bidders=bidders))
            self.emit(
                AuctionStarted(seq=self.next_seq(), version=new.version, card=card, bidders=bidders)
            )
            return
        tableau = (*new.tableau, card)
        _set(new, "tableau", tableau)
        kind = bust_kind(tableau)
        if kind is not None:
            self.bust(kind)

    def bust(self, kind: str) -> None:
        """3.3: the tableau goes to market and discard, a bust token, no buy phase; a bust
        by numbers pays the currency shown to the other players."""
        new = self.new
        seat = new.active_seat
        token = new.supply_bust > 0
        if token:
            player = self.players[seat]
            self.put(seat, replace(player, bust=player.bust + 1))
            _set(new, "supply_bust", new.supply_bust - 1)
        numbers, spent, money = self.clear_tableau(None)
        gains = self.gain(self.others(seat), money) if kind == "numbers" else ()
        self.emit(
            Busted(
                seq=self.next_seq(),
                version=new.version,
                seat=seat,
                kind=kind,
                to_market=numbers,
                to_discard=spent,
                bust_token=token,
                gains=gains,
            )
        )
        self.end_turn()

    def clear_tableau(self, taker: int | None) -> tuple[tuple[str, ...], tuple[str, ...], int]:
        """The tableau is cleared: its currency cards are discarded, its number cards go to
        `taker`'s collection or, with no taker, to the market. Returns the number cards,
        the currency cards and the currency's value."""
        new = self.new
        numbers, spent, money = _split(new.tableau)
        _set(new, "tableau", ())
        _set(new, "discard", new.discard + spent)
        if taker is None:
            _set(new, "market", new.market + numbers)
        else:
            player = self.players[taker]
            self.put(taker, replace(player, cards=player.cards + numbers))
        return numbers, spent, money

    def others(self, seat: int) -> tuple[int, ...]:
        """The other seats in turn order, from the left of `seat`."""
        return _ROUND[len(self.players)][seat][:-1]

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
        if take == "numbers":
            numbers, spent, money = self.clear_tableau(seat)
            gains = self.gain(self.others(seat), money)
        else:
            numbers, spent, money = self.clear_tableau(None)
            gains = self.gain((seat,), money)
        self.emit(
            Stopped(
                seq=self.next_seq(),
                version=new.version,
                seat=seat,
                take=take,
                cards=numbers,
                to_discard=spent,
                gains=gains,
            )
        )
        if take == "numbers":
            _set(new, "phase", "buy")
        else:
            self.end_turn()

    def end_turn(self) -> None:
        """The next player's turn, or after the last card the final buy round (4) from the
        left of this player."""
        new = self.new
        seat = new.active_seat
        _set(new, "drawn", False)
        if not new.draw_pile:
            order = _ROUND[len(self.players)][seat]
            _set(new, "phase", "final_buy")
            _set(new, "final_queue", order)
            self.emit(FinalBuyStarted(seq=self.next_seq(), version=new.version, order=order))
            return
        nxt = (seat + 1) % len(self.players)
        _set(new, "phase", "draw")
        _set(new, "active_seat", nxt)
        self.emit(TurnStarted(seq=self.next_seq(), version=new.version, seat=nxt))

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
        self.emit(
            BidPlaced(seq=self.next_seq(), version=self.new.version, seat=seat, amount=amount)
        )
        self.next_bidder(
            replace(auction, high_bid=amount, high_bidder=seat, high_payment=action.payment)
        )

    def pass_(self) -> None:
        auction = self._auction("Passing is for auctions; a buy is declined.")
        seat = auction.bidders[auction.turn]
        self.emit(BidPassed(seq=self.next_seq(), version=self.new.version, seat=seat))
        self.next_bidder(auction)

    def _auction(self, refusal: str) -> Auction:
        auction = self.new.auction
        if self.new.phase != "auction" or auction is None:
            raise RuleError("illegal_action", refusal)
        return auction

    def next_bidder(self, auction: Auction) -> None:
        """The next bidder's chance, or after the last one the end of the auction: the high
        bidder pays (the payment named, else the one the service picks) and takes the card,
        or nobody bid and the card is discarded. The turn goes on in the draw phase."""
        new = self.new
        if auction.turn + 1 < len(auction.bidders):
            _set(new, "auction", replace(auction, turn=auction.turn + 1))
            return
        winner = auction.high_bidder
        if winner is None:
            _set(new, "discard", (*new.discard, auction.card))
            self.emit(WildDiscarded(seq=self.next_seq(), version=new.version, card=auction.card))
        else:
            payment = auction.high_payment
            if payment is None:
                player = self.players[winner]
                payment = token_payment(auction.high_bid, player.currency, player.bust)
                assert payment is not None  # a bid never exceeds the bidding power
            self.pay(winner, payment.currency, payment.bust)
            player = self.players[winner]
            self.put(winner, replace(player, cards=(*player.cards, auction.card)))
            self.emit(
                AuctionWon(
                    seq=self.next_seq(),
                    version=new.version,
                    seat=winner,
                    card=auction.card,
                    amount=auction.high_bid,
                    payment=payment,
                )
            )
        _set(new, "auction", None)
        _set(new, "phase", "draw")

    # -- buy phase (3.4) and final buy round (4)
    def buy(self, action: Buy) -> None:
        new = self.new
        if new.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Cards are bought only in a buy phase.")
        seat = to_act(new)
        assert seat is not None
        card = action.card
        payment = _buy_payment(new, self.players[seat], action)
        self.pay(seat, payment.currency, payment.bust)
        player = self.players[seat]
        remaining = list(player.cards)
        for spent in payment.cards:
            remaining.remove(spent)
        remaining.append(card)
        self.put(seat, replace(player, cards=tuple(remaining)))
        market = list(new.market)
        market.remove(card)
        _set(new, "market", tuple(market))
        _set(new, "discard", new.discard + payment.cards)
        self.emit(
            CardBought(
                seq=self.next_seq(), version=new.version, seat=seat, card=card, payment=payment
            )
        )
        self.end_buy()

    def decline(self) -> None:
        new = self.new
        if new.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Only a buy phase can be declined.")
        self.emit(BuyDeclined(seq=self.next_seq(), version=new.version, seat=to_act(new)))
        self.end_buy()

    def end_buy(self) -> None:
        """After a buy phase: the next turn, or the next seat of the final buy round, or
        after the last one the end of the game (5, 6)."""
        new = self.new
        if new.phase == "buy":
            self.end_turn()
            return
        queue = new.final_queue[1:]
        _set(new, "final_queue", queue)
        if queue:
            return
        results = final_results(self.players, new.rules)
        _set(new, "phase", "finished")
        _set(new, "results", results)
        self.emit(GameFinished(seq=self.next_seq(), version=new.version, results=results))


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
