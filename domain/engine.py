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
    TokenPayment,
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
    if phase == "draw":  # the most frequent first
        return state.active_seat
    if phase == "auction":
        auction = state.auction
        assert auction is not None
        return auction.bidders[auction.turn]
    if phase == "final_buy":
        return state.final_queue[0]
    if phase == "finished":
        return None
    return state.active_seat


def apply(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    """Apply `action` by `seat`. Raises RuleError (state untouched) when the rules refuse it."""
    phase = state.phase
    if phase in {"draw", "buy"}:
        expected = state.active_seat
    elif phase == "auction":
        auction = state.auction
        assert auction is not None
        expected = auction.bidders[auction.turn]
    elif phase == "final_buy":
        expected = state.final_queue[0]
    else:
        raise RuleError("game_finished")
    if seat != expected:
        raise RuleError("not_your_turn")
    handler = _HANDLERS.get(type(action))
    if handler is None:
        raise RuleError("illegal_action", f"Unknown action {action!r}.")
    return handler(state, seat, action)


def _run(method):
    """A handler that applies an action through a `_Turn` (the general path)."""

    def handler(state: GameState, _seat: int, action: Action) -> tuple[GameState, list[Event]]:
        turn = _Turn(state)
        method(turn, action)
        return turn.finish()

    return handler


# code -> its number (number cards) or its value (currency cards): the digit of the code
_DIGIT = {code: int(code[1]) for code in C.ALL_CODES if code[1].isdigit()}
# player count -> seat -> the other seats in turn order, from the left of `seat`
_OTHERS = {n: tuple(tuple((s + i) % n for i in range(1, n)) for s in range(n)) for n in range(6)}
# player count -> seat -> every seat from the left of `seat`, `seat` last
_ROUND = {n: tuple(tuple((s + i) % n for i in range(1, n + 1)) for s in range(n)) for n in range(6)}


def _split(tableau: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """A stopped tableau's number cards, its currency cards and their value."""
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


def _check_bid(player: Player, action: Bid, high_bid: int) -> None:
    """3.5: a bid must beat the high bid and be within the seat's bidding power (currency plus
    bust tokens); a named payment must pay it exactly."""
    amount = action.amount
    if amount < 1 or amount <= high_bid:
        raise RuleError("bid_too_low")
    if amount > player.currency + BUST_TOKEN_VALUE * player.bust:
        raise RuleError("bid_too_high")
    if action.payment is not None:
        check_token_payment(action.payment, amount, player.currency, player.bust)


class _Turn:
    """A working copy of one state while an action is applied; `finish` freezes it."""

    __slots__ = ("changes", "events", "players", "seq", "state", "supply_currency", "version")

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.changes: dict[str, object] = {}
        self.events: list[Event] = []
        self.players: Sequence[Player] = state.players  # a list once a player changes
        self.supply_currency = state.supply_currency
        self.seq = state.last_seq
        self.version = state.version + 1

    # -- bookkeeping
    def get(self, name: str):
        return self.changes.get(name, getattr(self.state, name))

    def set(self, **changes: object) -> None:
        self.changes.update(changes)

    def emit(self, event_type: type[Event], **data: object) -> None:
        self.seq += 1
        self.events.append(event_type(seq=self.seq, version=self.version, **data))

    def finish(self) -> tuple[GameState, list[Event]]:
        changes = self.changes
        if isinstance(self.players, list):
            changes["players"] = tuple(self.players)
        if self.supply_currency != self.state.supply_currency:
            changes["supply_currency"] = self.supply_currency
        new = replace(self.state, version=self.version, last_seq=self.seq, **changes)
        return new, self.events

    def put(self, seat: int, player: Player) -> None:
        if not isinstance(self.players, list):
            self.players = list(self.players)
        self.players[seat] = player

    def n(self) -> int:
        return len(self.players)

    def others_in_order(self, seat: int) -> tuple[int, ...]:
        return _OTHERS[len(self.players)][seat]

    def gain(self, seats: Sequence[int], amount: int) -> tuple[Gain, ...]:
        """Hand `amount` currency tokens to each of `seats` in that order, under the cap
        and the supply (3.6)."""
        if amount <= 0:
            return ()
        gains = []
        players = self.players
        for seat in seats:
            player = players[seat]
            got = min(amount, CURRENCY_CAP - player.currency, self.supply_currency)
            if got > 0:
                self.supply_currency -= got
                if not isinstance(players, list):
                    players = self.players = list(players)
                players[seat] = replace(player, currency=player.currency + got)
                gains.append(Gain(seat=seat, amount=got))
        return tuple(gains)

    def pay_tokens(self, seat: int, currency: int, bust: int) -> None:
        player = self.players[seat]
        self.put(
            seat, replace(player, currency=player.currency - currency, bust=player.bust - bust)
        )
        self.supply_currency += currency
        if bust:
            self.set(supply_bust=self.get("supply_bust") + bust)

    # -- draw phase (3.1)
    def draw(self) -> None:
        state = self.state
        if state.phase != "draw":
            raise RuleError("illegal_action", "Cards are drawn only in the draw phase.")
        if not state.draw_pile:
            raise RuleError("draw_pile_empty")
        card, pile = state.draw_pile[0], state.draw_pile[1:]
        seat = state.active_seat
        changes = self.changes
        changes["draw_pile"] = pile
        changes["drawn"] = True
        self.seq += 1
        self.events.append(
            CardDrawn(
                seq=self.seq, version=self.version, seat=seat, card=card, draw_pile_size=len(pile)
            )
        )
        if card in _WILDS:
            bidders = _ROUND[len(self.players)][seat]
            self.set(phase="auction", auction=Auction(card=card, bidders=bidders))
            self.emit(AuctionStarted, card=card, bidders=bidders)
            return
        tableau = (*state.tableau, card)
        changes["tableau"] = tableau
        numbers, money = tableau_sums(tableau)
        if money >= BUST_LIMIT:
            self.bust("currency", tableau, money)
        elif numbers - money >= BUST_LIMIT:
            self.bust("numbers", tableau, money)

    def bust(self, kind: str, tableau: tuple[str, ...], money: int) -> None:
        """3.3: the tableau goes to market and discard, a bust token, no buy phase."""
        seat = self.state.active_seat
        numbers = tuple(c for c in tableau if c in C.NUMBER_CARDS)
        spent = tuple(c for c in tableau if c not in C.NUMBER_CARDS)
        supply_bust = self.get("supply_bust")
        token = supply_bust > 0
        if token:
            player = self.players[seat]
            self.put(seat, replace(player, bust=player.bust + 1))
            self.set(supply_bust=supply_bust - 1)
        gains = self.gain(self.others_in_order(seat), money) if kind == "numbers" else ()
        self.set(
            tableau=(),
            market=self.state.market + numbers,
            discard=self.state.discard + spent,
        )
        self.emit(
            Busted,
            seat=seat,
            kind=kind,
            to_market=numbers,
            to_discard=spent,
            bust_token=token,
            gains=gains,
        )
        self.end_turn()

    # -- reward (3.2)
    def stop(self, take: str) -> None:
        state = self.state
        if state.phase != "draw":
            raise RuleError("illegal_action", "A player stops only in the draw phase.")
        if not state.drawn:
            raise RuleError("must_draw")
        if take not in {"numbers", "currency"}:
            raise RuleError("illegal_action", "A stop takes either 'numbers' or 'currency'.")
        seat = state.active_seat
        numbers, spent, money = _split(state.tableau)
        changes = self.changes
        changes["tableau"] = ()
        changes["discard"] = state.discard + spent if spent else state.discard
        if take == "numbers":
            player = self.players[seat]
            self.put(seat, replace(player, cards=player.cards + numbers))
            gains = self.gain(_OTHERS[len(self.players)][seat], money)
            changes["phase"] = "buy"
        else:
            gains = self.gain((seat,), money)
            changes["market"] = state.market + numbers
        self.seq += 1
        self.events.append(
            Stopped(
                seq=self.seq,
                version=self.version,
                seat=seat,
                take=take,
                cards=numbers,
                to_discard=spent,
                gains=gains,
            )
        )
        if take != "numbers":
            self.end_turn()

    def end_turn(self) -> None:
        state = self.state
        n = len(self.players)
        seat = state.active_seat
        changes = self.changes
        changes["drawn"] = False
        self.seq += 1
        if not changes.get("draw_pile", state.draw_pile):
            # 4: the last card was drawn; a final buy round from the left of this player
            order = _ROUND[n][seat]
            changes["phase"] = "final_buy"
            changes["final_queue"] = order
            self.events.append(FinalBuyStarted(seq=self.seq, version=self.version, order=order))
            return
        nxt = (seat + 1) % n
        changes["phase"] = "draw"
        changes["active_seat"] = nxt
        self.events.append(TurnStarted(seq=self.seq, version=self.version, seat=nxt))

    # -- auction (3.5)
    def bid(self, action: Bid) -> None:
        state = self.state
        auction = state.auction
        if state.phase != "auction" or auction is None:
            raise RuleError("illegal_action", "Bids are made only in an auction.")
        seat = auction.bidders[auction.turn]
        amount = action.amount
        _check_bid(self.players[seat], action, auction.high_bid)
        self.emit(BidPlaced, seat=seat, amount=amount)
        self.next_bidder(
            replace(auction, high_bid=amount, high_bidder=seat, high_payment=action.payment)
        )

    def pass_(self) -> None:
        state = self.state
        auction = state.auction
        if state.phase != "auction" or auction is None:
            raise RuleError("illegal_action", "Passing is for auctions; a buy is declined.")
        self.emit(BidPassed, seat=auction.bidders[auction.turn])
        self.next_bidder(auction)

    def next_bidder(self, auction: Auction) -> None:
        if auction.turn + 1 < len(auction.bidders):
            self.set(auction=replace(auction, turn=auction.turn + 1))
            return
        winner = auction.high_bidder
        if winner is None:
            self.set(discard=(*self.state.discard, auction.card))
            self.emit(WildDiscarded, card=auction.card)
        else:
            payment = auction.high_payment
            if payment is None:
                player = self.players[winner]
                payment = token_payment(auction.high_bid, player.currency, player.bust)
                assert payment is not None  # a bid never exceeds the bidding power
            self.pay_tokens(winner, payment.currency, payment.bust)
            player = self.players[winner]
            self.put(winner, replace(player, cards=(*player.cards, auction.card)))
            self.emit(
                AuctionWon, seat=winner, card=auction.card, amount=auction.high_bid, payment=payment
            )
        self.set(auction=None, phase="draw")

    # -- buy phase (3.4) and final buy round (4)
    def buy(self, action: Buy) -> None:
        state = self.state
        if state.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Cards are bought only in a buy phase.")
        seat = to_act(state)
        assert seat is not None
        card = action.card
        payment = _buy_payment(state, self.players[seat], action)
        self.pay_tokens(seat, payment.currency, payment.bust)
        player = self.players[seat]
        remaining = list(player.cards)
        for spent in payment.cards:
            remaining.remove(spent)
        remaining.append(card)
        self.put(seat, replace(player, cards=tuple(remaining)))
        market = list(state.market)
        market.remove(card)
        self.set(market=tuple(market), discard=state.discard + payment.cards)
        self.emit(CardBought, seat=seat, card=card, payment=payment)
        self.end_buy()

    def decline(self) -> None:
        state = self.state
        if state.phase not in ("buy", "final_buy"):
            raise RuleError("illegal_action", "Only a buy phase can be declined.")
        self.emit(BuyDeclined, seat=to_act(state))
        self.end_buy()

    def end_buy(self) -> None:
        state = self.state
        if state.phase == "buy":
            self.end_turn()
            return
        queue = state.final_queue[1:]
        self.set(final_queue=queue)
        if queue:
            return
        results = final_results(self.players, state.rules)
        self.set(phase="finished", results=results)
        self.emit(GameFinished, results=results)


def _draw(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    """3.1: the common draws (a card to the tableau without a bust, a wild card to its
    auction) straight to the new state; a bust goes through `_Turn.draw`."""
    if state.phase != "draw":
        raise RuleError("illegal_action", "Cards are drawn only in the draw phase.")
    pile = state.draw_pile
    if not pile:
        raise RuleError("draw_pile_empty")
    card = pile[0]
    version = state.version + 1
    seq = state.last_seq + 1
    if card in _WILDS:
        pile = pile[1:]
        bidders = _ROUND[len(state.players)][seat]
        events: list[Event] = [
            CardDrawn(seq=seq, version=version, seat=seat, card=card, draw_pile_size=len(pile)),
            AuctionStarted(seq=seq + 1, version=version, card=card, bidders=bidders),
        ]
        new = replace(
            state,
            draw_pile=pile,
            drawn=True,
            phase="auction",
            auction=Auction(card=card, bidders=bidders),
            version=version,
            last_seq=seq + 1,
        )
        return new, events
    tableau = (*state.tableau, card)
    numbers, money = tableau_sums(tableau)
    if money >= BUST_LIMIT or numbers - money >= BUST_LIMIT:
        turn = _Turn(state)
        turn.draw()
        return turn.finish()
    pile = pile[1:]
    new = replace(state, draw_pile=pile, drawn=True, tableau=tableau, version=version, last_seq=seq)
    return new, [
        CardDrawn(seq=seq, version=version, seat=seat, card=card, draw_pile_size=len(pile))
    ]


def _bid(state: GameState, seat: int, action: Bid) -> tuple[GameState, list[Event]]:
    """3.5: a bid straight to the new state (the auction's end too)."""
    auction = state.auction
    if state.phase != "auction" or auction is None:
        turn = _Turn(state)
        turn.bid(action)
        return turn.finish()
    player = state.players[seat]
    amount = action.amount
    _check_bid(player, action, auction.high_bid)
    version = state.version + 1
    seq = state.last_seq + 1
    placed = BidPlaced(seq=seq, version=version, seat=seat, amount=amount)
    if auction.turn + 1 == len(auction.bidders):
        # the last chance: this bidder wins the card (`_Turn.next_bidder`)
        payment = action.payment
        if payment is None:
            payment = token_payment(amount, player.currency, player.bust)
            assert payment is not None  # a bid never exceeds the bidding power
        return _auction_won(state, seat, auction.card, amount, payment, seq + 1, version, placed)
    auction = replace(
        auction,
        turn=auction.turn + 1,
        high_bid=amount,
        high_bidder=seat,
        high_payment=action.payment,
    )
    new = replace(state, auction=auction, version=version, last_seq=seq)
    return new, [placed]


def _auction_won(
    state: GameState,
    winner: int,
    card: str,
    amount: int,
    payment: TokenPayment,
    seq: int,
    version: int,
    last: Event,
) -> tuple[GameState, list[Event]]:
    """The end of an auction with a winner (`_Turn.next_bidder`): `last` is the bid or
    pass before, `seq` the number of the AuctionWon event."""
    player = state.players[winner]
    players = list(state.players)
    players[winner] = replace(
        player,
        currency=player.currency - payment.currency,
        bust=player.bust - payment.bust,
        cards=(*player.cards, card),
    )
    won = AuctionWon(
        seq=seq, version=version, seat=winner, card=card, amount=amount, payment=payment
    )
    new = replace(
        state,
        players=tuple(players),
        supply_currency=state.supply_currency + payment.currency,
        supply_bust=state.supply_bust + payment.bust,
        auction=None,
        phase="draw",
        version=version,
        last_seq=seq,
    )
    return new, [last, won]


def _pass(state: GameState, seat: int, action: Pass) -> tuple[GameState, list[Event]]:
    """3.5: a pass straight to the new state (the auction's end too)."""
    auction = state.auction
    if state.phase != "auction" or auction is None:
        turn = _Turn(state)
        turn.pass_()
        return turn.finish()
    version = state.version + 1
    seq = state.last_seq + 1
    if auction.turn + 1 == len(auction.bidders):
        passed = BidPassed(seq=seq, version=version, seat=seat)
        winner = auction.high_bidder
        if winner is None:
            # nobody bid: the wild card is discarded
            new = replace(
                state,
                discard=(*state.discard, auction.card),
                auction=None,
                phase="draw",
                version=version,
                last_seq=seq + 1,
            )
            return new, [passed, WildDiscarded(seq=seq + 1, version=version, card=auction.card)]
        payment = auction.high_payment
        if payment is None:
            player = state.players[winner]
            payment = token_payment(auction.high_bid, player.currency, player.bust)
            assert payment is not None  # a bid never exceeds the bidding power
        return _auction_won(
            state, winner, auction.card, auction.high_bid, payment, seq + 1, version, passed
        )
    new = replace(
        state, auction=replace(auction, turn=auction.turn + 1), version=version, last_seq=seq
    )
    return new, [BidPassed(seq=seq, version=version, seat=seat)]


def _gain(
    players: list[Player], seats: Sequence[int], amount: int, supply: int
) -> tuple[tuple[Gain, ...], int]:
    """`_Turn.gain` on a list of players: (the gains, the supply left)."""
    gains = []
    for seat in seats:
        player = players[seat]
        got = min(amount, CURRENCY_CAP - player.currency, supply)
        if got > 0:
            supply -= got
            players[seat] = replace(player, currency=player.currency + got)
            gains.append(Gain(seat=seat, amount=got))
    return tuple(gains), supply


def _next_turn(state: GameState, seq: int, version: int) -> tuple[dict[str, object], Event]:
    """`_Turn.end_turn` when the draw pile is untouched: the changes and the event."""
    n = len(state.players)
    seat = state.active_seat
    if not state.draw_pile:
        order = _ROUND[n][seat]
        fields: dict[str, object] = {"phase": "final_buy", "final_queue": order}
        return fields, FinalBuyStarted(seq=seq, version=version, order=order)
    nxt = (seat + 1) % n
    fields = {"phase": "draw", "active_seat": nxt}
    return fields, TurnStarted(seq=seq, version=version, seat=nxt)


def _stop(state: GameState, seat: int, action: Stop) -> tuple[GameState, list[Event]]:
    """3.2: a stop straight to the new state; a refused one goes through `_Turn.stop`."""
    take = action.take
    if state.phase != "draw" or not state.drawn or take not in ("numbers", "currency"):
        turn = _Turn(state)
        turn.stop(take)
        return turn.finish()
    numbers, spent, money = _split(state.tableau)
    version = state.version + 1
    seq = state.last_seq + 1
    players = list(state.players)
    supply = state.supply_currency
    gains: tuple[Gain, ...] = ()
    if take == "numbers":
        player = players[seat]
        players[seat] = replace(player, cards=player.cards + numbers)
        if money > 0:
            gains, supply = _gain(players, _OTHERS[len(players)][seat], money, supply)
    elif money > 0:
        gains, supply = _gain(players, (seat,), money, supply)
    stopped = Stopped(
        seq=seq,
        version=version,
        seat=seat,
        take=take,
        cards=numbers,
        to_discard=spent,
        gains=gains,
    )
    fields: dict[str, object] = {
        "tableau": (),
        "discard": state.discard + spent if spent else state.discard,
        "players": tuple(players),
        "supply_currency": supply,
    }
    if take == "numbers":
        new = replace(state, phase="buy", version=version, last_seq=seq, **fields)
        return new, [stopped]
    turn_fields, turn_event = _next_turn(state, seq + 1, version)
    fields.update(turn_fields)
    new = replace(
        state,
        market=state.market + numbers,
        drawn=False,
        version=version,
        last_seq=seq + 1,
        **fields,
    )
    return new, [stopped, turn_event]


def _decline(state: GameState, seat: int, action: Decline) -> tuple[GameState, list[Event]]:
    """3.4, 4: a declined buy straight to the new state; the last one of the final buy
    round (the end of the game) and a refused one go through `_Turn.decline`."""
    phase = state.phase
    version = state.version + 1
    seq = state.last_seq + 1
    if phase == "buy":
        fields, turn_event = _next_turn(state, seq + 1, version)
        new = replace(state, drawn=False, version=version, last_seq=seq + 1, **fields)
        return new, [BuyDeclined(seq=seq, version=version, seat=seat), turn_event]
    if phase == "final_buy" and len(state.final_queue) > 1:
        new = replace(state, final_queue=state.final_queue[1:], version=version, last_seq=seq)
        return new, [BuyDeclined(seq=seq, version=version, seat=seat)]
    turn = _Turn(state)
    turn.decline()
    return turn.finish()


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


def _buy(state: GameState, seat: int, action: Buy) -> tuple[GameState, list[Event]]:
    """3.4, 4: a purchase straight to the new state; the last one of the final buy round
    (the end of the game) and anything outside a buy phase go through `_Turn.buy`."""
    phase = state.phase
    if not (phase == "buy" or (phase == "final_buy" and len(state.final_queue) > 1)):
        turn = _Turn(state)
        turn.buy(action)
        return turn.finish()
    card = action.card
    player = state.players[seat]
    payment = _buy_payment(state, player, action)
    version = state.version + 1
    seq = state.last_seq + 1
    remaining = list(player.cards)
    for spent in payment.cards:
        remaining.remove(spent)
    remaining.append(card)
    players = list(state.players)
    players[seat] = replace(
        player,
        currency=player.currency - payment.currency,
        bust=player.bust - payment.bust,
        cards=tuple(remaining),
    )
    market = list(state.market)
    market.remove(card)
    bought = CardBought(seq=seq, version=version, seat=seat, card=card, payment=payment)
    fields: dict[str, object] = {
        "players": tuple(players),
        "market": tuple(market),
        "discard": state.discard + payment.cards,
        "supply_currency": state.supply_currency + payment.currency,
    }
    if payment.bust:
        fields["supply_bust"] = state.supply_bust + payment.bust
    if phase == "buy":
        turn_fields, turn_event = _next_turn(state, seq + 1, version)
        fields.update(turn_fields)
        new = replace(state, drawn=False, version=version, last_seq=seq + 1, **fields)
        return new, [bought, turn_event]
    new = replace(state, final_queue=state.final_queue[1:], version=version, last_seq=seq, **fields)
    return new, [bought]


_HANDLERS = {
    Draw: _draw,
    Stop: _stop,
    Bid: _bid,
    Pass: _pass,
    Buy: _buy,
    Decline: _decline,
}

# `apply` past its check of whose decision it is, per action type: for a caller that
# acts for `seat = to_act(state)` of a game not finished (the simulator's turn loop),
# TURN_HANDLERS[type(action)](state, seat, action) is `apply(state, seat, action)`.
TURN_HANDLERS = _HANDLERS
