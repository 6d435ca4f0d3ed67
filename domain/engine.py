"""The rules of TEN as pure functions: `new_game`, `to_act`, `apply`.

`apply(state, seat, action)` checks the action against the rules and returns the new
state and the events it produced, or raises `RuleError` and leaves nothing changed
(states are immutable). Legal-move listing lives in `domain.legal`, views in
`domain.views`, scoring in `domain.scoring`.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from domain import cards as C
from domain.errors import RuleError
from domain.model import (
    BUST_LIMIT,
    BUST_TOKEN_VALUE,
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
    Decline,
    Draw,
    Event,
    FinalBuyStarted,
    Gain,
    GameFinished,
    GameStarted,
    GameState,
    Pass,
    Payment,
    Player,
    Rules,
    SeatInfo,
    Stop,
    Stopped,
    TurnStarted,
    WildDiscarded,
)
from domain.payments import check_payment, check_token_payment, choose_buy_payment, token_payment
from domain.results import final_results
from domain.rng import SeededRandom

BOT_LEVELS = ("random", "basic")
_WILDS = C.WILDS
_NUMBER_CARDS = C.NUMBER_CARDS
MAX_DECK = 1000


def new_game(
    players: Sequence[tuple[str, str | None]],
    seed: str | int,
    *,
    deck: Sequence[str] | None = None,
    starting_seat: int | None = None,
    rules: Rules | None = None,
) -> tuple[GameState, list[Event]]:
    """Set up a game (rules.md 2). `players` are (name, bot level or None) in seat order.

    The draw pile is the deck for the player count shuffled from `seed`, or `deck` as
    given (top card first). The starting seat is drawn from the seed unless named.
    """
    n = len(players)
    if not 1 <= n <= 5:
        raise RuleError("invalid_game", "A game has 1 to 5 players.")
    for _, bot in players:
        if bot is not None and bot not in BOT_LEVELS:
            raise RuleError("invalid_game", f"Unknown bot level {bot!r}.")
    rng = SeededRandom(seed)
    if deck is None:
        pile = tuple(rng.shuffled(C.deck_for(n)))
    else:
        if not deck or len(deck) > MAX_DECK:
            raise RuleError("invalid_game", f"A deck holds 1 to {MAX_DECK} cards.")
        bad = sorted({code for code in deck if not C.is_valid_code(code)})
        if bad:
            raise RuleError("unknown_card", f"Not valid card codes: {', '.join(bad[:10])}.")
        C.check_copies(deck)
        pile = tuple(deck)
    if starting_seat is None:
        starting_seat = rng.randbelow(n)
    elif not 0 <= starting_seat < n:
        raise RuleError("invalid_game", f"starting_seat must be between 0 and {n - 1}.")
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
    )
    events: list[Event] = [
        GameStarted(
            seq=1,
            version=0,
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
        TurnStarted(seq=2, version=0, seat=starting_seat),
    ]
    return state, events


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
    """Apply `action` by `seat`. Raises RuleError (state untouched) when the rules refuse it."""
    expected = to_act(state)
    if expected is None:
        raise RuleError("game_finished")
    if seat != expected:
        raise RuleError("not_your_turn")
    step = _Step(state)
    match action:
        case Draw():
            step.draw()
        case Stop(take=take):
            step.stop(take)
        case Bid():
            step.bid(action)
        case Pass():
            step.pass_()
        case Buy():
            step.buy(action)
        case Decline():
            step.decline()
        case _:
            raise RuleError("illegal_action", f"Unknown action {action!r}.")
    return step.finish()


# code -> its number (number cards) or its value (currency cards): the digit of the code
_DIGIT = {code: int(code[1]) for code in C.ALL_CODES if code[1].isdigit()}
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
    """The result of one action being built: the fields of the state that change, the
    players (a list once one changes), the events. `finish` freezes them into the next
    state. Each rule below is one method; `apply` calls the one its action starts."""

    __slots__ = ("changes", "events", "players", "seq", "state", "version")

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.changes: dict[str, object] = {}
        self.events: list[Event] = []
        self.players: Sequence[Player] = state.players
        self.seq = state.last_seq
        self.version = state.version + 1

    # -- bookkeeping
    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def emit(self, event: Event) -> None:
        # events are built by the caller with explicit fields: msgspec takes `**data`
        # about 4 times slower, which cost 5% of a simulated game
        self.events.append(event)

    def put(self, seat: int, player: Player) -> None:
        """A seat's new tokens or collection."""
        if not isinstance(self.players, list):
            self.players = list(self.players)
        self.players[seat] = player

    def finish(self) -> tuple[GameState, list[Event]]:
        changes = self.changes
        if isinstance(self.players, list):
            changes["players"] = tuple(self.players)
        changes["version"] = self.version
        changes["last_seq"] = self.seq
        return replace(self.state, **changes), self.events

    # -- tokens (3.6, and payments to the supply)
    def gain(self, seats: Sequence[int], amount: int) -> tuple[Gain, ...]:
        """3.6: hand `amount` currency tokens to each of `seats` in that order, each up to the
        cap of 10 and while the supply lasts."""
        if amount <= 0:
            return ()
        gains = []
        supply = self.changes.get("supply_currency", self.state.supply_currency)
        for seat in seats:
            held = self.players[seat].currency
            got = min(amount, CURRENCY_CAP - held, supply)
            if got > 0:
                supply -= got
                self.put(seat, replace(self.players[seat], currency=held + got))
                gains.append(Gain(seat=seat, amount=got))
        self.changes["supply_currency"] = supply
        return tuple(gains)

    def pay(self, seat: int, currency: int, bust: int) -> None:
        """Tokens paid by `seat` go back to the supply."""
        player = self.players[seat]
        self.put(
            seat, replace(player, currency=player.currency - currency, bust=player.bust - bust)
        )
        self.changes["supply_currency"] = (
            self.changes.get("supply_currency", self.state.supply_currency) + currency
        )
        if bust:
            self.changes["supply_bust"] = (
                self.changes.get("supply_bust", self.state.supply_bust) + bust
            )

    # -- draw phase (3.1), bust (3.3)
    def draw(self) -> None:
        state = self.state
        if state.phase != "draw":
            raise RuleError("illegal_action", "Cards are drawn only in the draw phase.")
        if not state.draw_pile:
            raise RuleError("draw_pile_empty")
        card, pile = state.draw_pile[0], state.draw_pile[1:]
        seat = state.active_seat
        self.changes["draw_pile"] = pile
        self.changes["drawn"] = True
        self.emit(
            CardDrawn(
                seq=self.next_seq(),
                version=self.version,
                seat=seat,
                card=card,
                draw_pile_size=len(pile),
            )
        )
        if card in _WILDS:
            bidders = _ROUND[len(self.players)][seat]
            self.changes["phase"] = "auction"
            self.changes["auction"] = Auction(card=card, bidders=bidders)
            self.emit(
                AuctionStarted(
                    seq=self.next_seq(), version=self.version, card=card, bidders=bidders
                )
            )
            return
        tableau = (*state.tableau, card)
        self.changes["tableau"] = tableau
        numbers, money = tableau_sums(tableau)
        if money >= BUST_LIMIT:
            self.bust("currency", tableau)
        elif numbers - money >= BUST_LIMIT:
            self.bust("numbers", tableau)

    def bust(self, kind: str, tableau: tuple[str, ...]) -> None:
        """3.3: the tableau goes to market and discard, a bust token, no buy phase."""
        seat = self.state.active_seat
        numbers, spent, money = _split(tableau)
        supply_bust = self.changes.get("supply_bust", self.state.supply_bust)
        token = supply_bust > 0
        if token:
            self.put(seat, replace(self.players[seat], bust=self.players[seat].bust + 1))
            self.changes["supply_bust"] = supply_bust - 1
        others = _ROUND[len(self.players)][seat][:-1]
        gains = self.gain(others, money) if kind == "numbers" else ()
        self.changes["tableau"] = ()
        self.changes["market"] = self.state.market + numbers
        self.changes["discard"] = self.state.discard + spent
        self.emit(
            Busted(
                seq=self.next_seq(),
                version=self.version,
                seat=seat,
                kind=kind,
                to_market=numbers,
                to_discard=spent,
                bust_token=token,
                gains=gains,
            )
        )
        self.end_turn()

    # -- reward (3.2)
    def stop(self, take: str) -> None:
        state = self.state
        if state.phase != "draw":
            raise RuleError("illegal_action", "A player stops only in the draw phase.")
        if not state.drawn:
            raise RuleError("must_draw")
        if take not in ("numbers", "currency"):
            raise RuleError("illegal_action", "A stop takes either 'numbers' or 'currency'.")
        seat = state.active_seat
        numbers, spent, money = _split(state.tableau)
        self.changes["tableau"] = ()
        self.changes["discard"] = state.discard + spent
        if take == "numbers":
            self.put(seat, replace(self.players[seat], cards=self.players[seat].cards + numbers))
            gains = self.gain(_ROUND[len(self.players)][seat][:-1], money)
        else:
            gains = self.gain((seat,), money)
            self.changes["market"] = state.market + numbers
        self.emit(
            Stopped(
                seq=self.next_seq(),
                version=self.version,
                seat=seat,
                take=take,
                cards=numbers,
                to_discard=spent,
                gains=gains,
            )
        )
        if take == "numbers":
            self.changes["phase"] = "buy"
        else:
            self.end_turn()

    def end_turn(self) -> None:
        """The next player's turn, or after the last card the final buy round (4) from the
        left of this player."""
        seat = self.state.active_seat
        self.changes["drawn"] = False
        if not self.changes.get("draw_pile", self.state.draw_pile):
            order = _ROUND[len(self.players)][seat]
            self.changes["phase"] = "final_buy"
            self.changes["final_queue"] = order
            self.emit(FinalBuyStarted(seq=self.next_seq(), version=self.version, order=order))
            return
        nxt = (seat + 1) % len(self.players)
        self.changes["phase"] = "draw"
        self.changes["active_seat"] = nxt
        self.emit(TurnStarted(seq=self.next_seq(), version=self.version, seat=nxt))

    # -- auction (3.5)
    def bid(self, action: Bid) -> None:
        auction = self._auction("Bids are made only in an auction.")
        seat = auction.bidders[auction.turn]
        amount = action.amount
        player = self.players[seat]
        if amount < 1 or amount <= auction.high_bid:
            raise RuleError("bid_too_low")
        if amount > player.currency + BUST_TOKEN_VALUE * player.bust:
            raise RuleError("bid_too_high")
        if action.payment is not None:
            check_token_payment(action.payment, amount, player.currency, player.bust)
        self.emit(BidPlaced(seq=self.next_seq(), version=self.version, seat=seat, amount=amount))
        self.next_bidder(
            replace(auction, high_bid=amount, high_bidder=seat, high_payment=action.payment)
        )

    def pass_(self) -> None:
        auction = self._auction("Passing is for auctions; a buy is declined.")
        self.emit(
            BidPassed(seq=self.next_seq(), version=self.version, seat=auction.bidders[auction.turn])
        )
        self.next_bidder(auction)

    def _auction(self, refusal: str) -> Auction:
        auction = self.state.auction
        if self.state.phase != "auction" or auction is None:
            raise RuleError("illegal_action", refusal)
        return auction

    def next_bidder(self, auction: Auction) -> None:
        """The next bidder's chance, or after the last one the end of the auction: the high
        bidder pays (the payment named, else the one the service picks) and takes the card,
        or nobody bid and the card is discarded. The turn goes on in the draw phase."""
        if auction.turn + 1 < len(auction.bidders):
            self.changes["auction"] = replace(auction, turn=auction.turn + 1)
            return
        winner = auction.high_bidder
        if winner is None:
            self.changes["discard"] = (*self.state.discard, auction.card)
            self.emit(WildDiscarded(seq=self.next_seq(), version=self.version, card=auction.card))
        else:
            payment = auction.high_payment
            if payment is None:
                player = self.players[winner]
                payment = token_payment(auction.high_bid, player.currency, player.bust)
                assert payment is not None  # a bid never exceeds the bidding power
            self.pay(winner, payment.currency, payment.bust)
            self.put(
                winner,
                replace(self.players[winner], cards=(*self.players[winner].cards, auction.card)),
            )
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
        self.changes["auction"] = None
        self.changes["phase"] = "draw"

    # -- buy phase (3.4) and final buy round (4)
    def buy(self, action: Buy) -> None:
        state = self.state
        if state.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Cards are bought only in a buy phase.")
        seat = to_act(state)
        assert seat is not None
        card = action.card
        payment = _buy_payment(state, self.players[seat], action)
        self.pay(seat, payment.currency, payment.bust)
        remaining = list(self.players[seat].cards)
        for spent in payment.cards:
            remaining.remove(spent)
        remaining.append(card)
        self.put(seat, replace(self.players[seat], cards=tuple(remaining)))
        market = list(state.market)
        market.remove(card)
        self.changes["market"] = tuple(market)
        self.changes["discard"] = state.discard + payment.cards
        self.emit(
            CardBought(
                seq=self.next_seq(), version=self.version, seat=seat, card=card, payment=payment
            )
        )
        self.end_buy()

    def decline(self) -> None:
        state = self.state
        if state.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Only a buy phase can be declined.")
        self.emit(BuyDeclined(seq=self.next_seq(), version=self.version, seat=to_act(state)))
        self.end_buy()

    def end_buy(self) -> None:
        """After a buy phase: the next turn, or the next seat of the final buy round, or
        after the last one the end of the game (5, 6)."""
        state = self.state
        if state.phase == "buy":
            self.end_turn()
            return
        queue = state.final_queue[1:]
        self.changes["final_queue"] = queue
        if queue:
            return
        results = final_results(self.players, state.rules)
        self.changes["phase"] = "finished"
        self.changes["results"] = results
        self.emit(GameFinished(seq=self.next_seq(), version=self.version, results=results))


def _buy_payment(state: GameState, player: Player, action: Buy) -> Payment:
    """The checked payment of a purchase by `player` in a buy phase: the one given, or
    the one the service chooses. Raises RuleError when the rules refuse the purchase."""
    card = action.card
    if card not in C.ALL_CODES:
        raise RuleError("unknown_card", f"{card!r} is not a card code.")
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
                raise RuleError("unknown_card", f"{spent!r} is not a card code.")
        check_payment(payment, price, player.currency, player.bust, player.cards)
    return payment
