"""What a seat or a spectator may see: everything but the draw pile's order and the seed."""

from __future__ import annotations

import msgspec

from domain.game.engine import to_act
from domain.game.model import Phase, Player, Result, Rules

_VIEW = {"frozen": True, "kw_only": True}


class AuctionView(msgspec.Struct, **_VIEW):
    card: str
    high_bid: int
    high_bidder: int | None
    to_act: int
    bidders: tuple[int, ...]


class Supply(msgspec.Struct, **_VIEW):
    currency: int
    bust: int


class PublicView(msgspec.Struct, frozen=True):
    """Built positionally by `public_view` (fields in this order): msgspec matches keyword
    arguments field by field, which made a view, and so every bot's move, much dearer."""

    version: int
    status: str  # "active" | "finished"
    phase: Phase
    rules: Rules
    starting_seat: int
    active_seat: int
    to_act: int | None
    drawn: bool  # the active player has drawn this turn (so may stop)
    draw_pile_size: int
    last_turn: bool
    tableau: tuple[str, ...]
    market: tuple[str, ...]
    discard: tuple[str, ...]
    supply: Supply
    players: tuple[Player, ...]  # a seat holds nothing secret
    auction: AuctionView | None
    final_queue: tuple[int, ...]
    results: tuple[Result, ...] | None


def public_view(state) -> PublicView:
    """The public projection of a `GameState` (the same for every seat and spectator)."""
    auction = state.auction
    return PublicView(
        state.version,
        "finished" if state.phase == "finished" else "active",  # status
        state.phase,
        state.rules,
        state.starting_seat,
        state.active_seat,
        to_act(state),
        state.drawn,
        len(state.draw_pile),  # draw_pile_size
        not state.draw_pile,  # last_turn
        state.tableau,
        state.market,
        state.discard,
        Supply(currency=state.supply_currency, bust=state.supply_bust),
        state.players,
        None
        if auction is None
        else AuctionView(
            card=auction.card,
            high_bid=auction.high_bid,
            high_bidder=auction.high_bidder,
            to_act=auction.bidders[auction.turn],
            bidders=auction.bidders,
        ),
        state.final_queue,
        state.results,
    )
