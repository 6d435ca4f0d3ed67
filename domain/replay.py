"""Rebuild everything public about a game from its event log alone.

This is what a client (or the archive's replay) does with the events; the tests check
that after every action it equals `public_view` of the live state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from domain.cards import NUMBER_CARDS
from domain.model import (
    AuctionStarted,
    AuctionWon,
    BidPassed,
    BidPlaced,
    Busted,
    BuyDeclined,
    CardBought,
    CardDrawn,
    Event,
    FinalBuyStarted,
    GameFinished,
    GameStarted,
    Player,
    SeatReclaimed,
    SeatTakenOver,
    Stopped,
    TurnStarted,
    WildDiscarded,
)
from domain.views import AuctionView, PublicView, Supply


class _Table:
    """Mutable public state, folded event by event."""

    def __init__(self, start: GameStarted) -> None:
        self.version = start.version
        self.rules = start.rules
        self.starting_seat = start.starting_seat
        self.active_seat = start.starting_seat
        self.phase = "draw"
        self.drawn = False
        self.pile = start.draw_pile_size
        self.tableau: list[str] = []
        self.market: list[str] = []
        self.discard: list[str] = []
        self.supply = [start.supply_currency, start.supply_bust]
        self.players = [
            {
                "name": p.name,
                "bot": p.bot,
                "currency": start.starting_currency,
                "bust": 0,
                "cards": [],
                "stand_in": None,
                "taken_over": False,
                "resigned": False,
            }
            for p in start.players
        ]
        self.auction: dict | None = None
        self.final_queue: list[int] = []
        self.results = None

    def gains(self, gains) -> None:
        for g in gains:
            self.players[g.seat]["currency"] += g.amount
            self.supply[0] -= g.amount

    def pay(self, seat: int, currency: int, bust: int) -> None:
        self.players[seat]["currency"] -= currency
        self.players[seat]["bust"] -= bust
        self.supply[0] += currency
        self.supply[1] += bust

    def after_buy(self) -> None:
        if self.phase == "final_buy":
            self.final_queue.pop(0)

    def fold(self, event: Event) -> None:
        self.version = event.version
        match event:
            case TurnStarted(seat=seat):
                self.active_seat, self.phase, self.drawn = seat, "draw", False
            case CardDrawn(card=card, draw_pile_size=size):
                self.pile, self.drawn = size, True
                if card in NUMBER_CARDS or card.startswith("$"):
                    self.tableau.append(card)
            case AuctionStarted(card=card, bidders=bidders):
                self.phase = "auction"
                self.auction = {"card": card, "bidders": bidders, "turn": 0, "high": 0, "who": None}
            case BidPlaced(seat=seat, amount=amount):
                assert self.auction is not None
                self.auction.update(high=amount, who=seat, turn=self.auction["turn"] + 1)
            case BidPassed():
                assert self.auction is not None
                self.auction["turn"] += 1
            case AuctionWon(seat=seat, card=card, payment=payment):
                self.pay(seat, payment.currency, payment.bust)
                self.players[seat]["cards"].append(card)
                self.auction, self.phase = None, "draw"
            case WildDiscarded(card=card):
                self.discard.append(card)
                self.auction, self.phase = None, "draw"
            case Busted(seat=seat, to_market=to_market, to_discard=to_discard, bust_token=token):
                self.tableau.clear()
                self.market.extend(to_market)
                self.discard.extend(to_discard)
                if token:
                    self.players[seat]["bust"] += 1
                    self.supply[1] -= 1
                self.gains(event.gains)
            case Stopped(seat=seat, take=take, cards=cards, to_discard=to_discard):
                self.tableau.clear()
                self.discard.extend(to_discard)
                if take == "numbers":
                    self.players[seat]["cards"].extend(cards)
                    self.phase = "buy"
                else:
                    self.market.extend(cards)
                self.gains(event.gains)
            case CardBought(seat=seat, card=card, payment=payment):
                self.pay(seat, payment.currency, payment.bust)
                owned = self.players[seat]["cards"]
                for spent in payment.cards:
                    owned.remove(spent)
                owned.append(card)
                self.market.remove(card)
                self.discard.extend(payment.cards)
                self.after_buy()
            case BuyDeclined():
                self.after_buy()
            case FinalBuyStarted(order=order):
                self.phase, self.drawn, self.final_queue = "final_buy", False, list(order)
            case GameFinished(results=results):
                self.phase, self.results = "finished", results
            case _:
                self.fold_seat(event)

    def fold_seat(self, event: Event) -> None:
        """Who plays a seat: a bot took it over (timeouts, or its player resigned), or its
        player took it back. (`timed_out` changes nothing: the move the bot made for the
        seat follows in its own events.)"""
        match event:
            case SeatTakenOver(seat=seat, bot=bot, reason=reason):
                player = self.players[seat]
                player["stand_in"] = bot
                player["resigned" if reason == "resigned" else "taken_over"] = True
            case SeatReclaimed(seat=seat):
                self.players[seat]["stand_in"] = None

    def view(self) -> PublicView:
        auction = self.auction
        if self.phase == "auction":
            assert auction is not None
            to_act = auction["bidders"][auction["turn"]]
        elif self.phase == "final_buy":
            to_act = self.final_queue[0]
        elif self.phase == "finished":
            to_act = None
        else:
            to_act = self.active_seat
        return PublicView(
            version=self.version,
            status="finished" if self.phase == "finished" else "active",
            phase=self.phase,  # type: ignore[arg-type]
            rules=self.rules,
            starting_seat=self.starting_seat,
            active_seat=self.active_seat,
            to_act=to_act,
            drawn=self.drawn,
            draw_pile_size=self.pile,
            last_turn=self.pile == 0,
            tableau=tuple(self.tableau),
            market=tuple(self.market),
            discard=tuple(self.discard),
            supply=Supply(currency=self.supply[0], bust=self.supply[1]),
            players=tuple(
                Player(
                    seat=i,
                    name=p["name"],
                    bot=p["bot"],
                    currency=p["currency"],
                    bust=p["bust"],
                    cards=tuple(p["cards"]),
                    stand_in=p["stand_in"],
                    taken_over=p["taken_over"],
                    resigned=p["resigned"],
                )
                for i, p in enumerate(self.players)
            ),
            auction=None
            if auction is None
            else AuctionView(
                card=auction["card"],
                high_bid=auction["high"],
                high_bidder=auction["who"],
                to_act=auction["bidders"][auction["turn"]],
                bidders=tuple(auction["bidders"]),
            ),
            final_queue=tuple(self.final_queue),
            results=self.results,
        )


def replay(events: Iterable[Event]) -> Iterator[PublicView]:
    """The public state after each action: one view per game version (0, 1, 2 ...)."""
    table: _Table | None = None
    pending = False
    for event in events:
        if table is None:
            if not isinstance(event, GameStarted):
                raise ValueError("an event log starts with game_started")
            table = _Table(event)
            pending = True
            continue
        if event.version != table.version:
            yield table.view()
        table.fold(event)
        pending = True
    if table is not None and pending:
        yield table.view()


def rebuild(events: Iterable[Event]) -> PublicView:
    """The public state at the end of an event log."""
    last = None
    for last in replay(events):  # noqa: B007 - only the last view is wanted
        pass
    if last is None:
        raise ValueError("an empty event log")
    return last
