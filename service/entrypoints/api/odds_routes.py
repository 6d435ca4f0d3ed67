"""The odds of the next card: exact, from public information only (`domain.bots.odds`)."""

from __future__ import annotations

import asyncio
import threading
from fractions import Fraction

import msgspec

from domain.bots.odds import bust_odds, draw_value
from domain.game.engine import information_state
from domain.game.model import GameState
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.identity import PLAYER_TOKEN
from service.entrypoints.api.parameters import SEAT_TOKEN, GameId
from service.entrypoints.api.problems import get_game_part
from service.entrypoints.api.routes import live_game

_OUT = {"frozen": True, "kw_only": True}


class BustOut(msgspec.Struct, **_OUT):
    numbers: float
    currency: float
    total: float


class DrawValueOut(msgspec.Struct, **_OUT):
    stop: float | None
    draw: float | None
    advantage: float | None


class OddsView(msgspec.Struct, **_OUT):
    """The next draw, for the seat whose turn it is in the draw phase."""

    seat: int
    unseen: int
    bust: BustOut
    wild: float
    value: DrawValueOut


class OddsOut(msgspec.Struct, **_OUT):
    game_id: str
    version: int
    odds: OddsView | None


def _float(value: Fraction | float) -> float:
    return round(float(value), 6)


def _maybe(value: Fraction | float | None) -> float | None:
    return None if value is None else _float(value)


_CACHE_SIZE = 512
_cache: dict[tuple[str, int], OddsView | None] = {}  # (game id, version) -> odds, oldest first
_lock = threading.Lock()  # computed in worker threads


def _odds(game_id: str, state: GameState) -> OddsView | None:
    """The odds of `state`, remembered per game version: every watcher of a game asking
    after each move costs one computation."""
    key = (game_id, state.version)
    with _lock:
        if key in _cache:
            return _cache[key]
    odds = _compute(state)
    with _lock:
        while len(_cache) >= _CACHE_SIZE:
            del _cache[next(iter(_cache))]
        _cache[key] = odds
    return odds


def _compute(state: GameState) -> OddsView | None:
    if state.phase != "draw":
        return None
    view = information_state(state)
    odds = bust_odds(view)
    value = draw_value(view)
    advantage = None if value.draw is None or value.stop is None else value.draw - value.stop
    return OddsView(
        seat=view.active_seat,
        unseen=odds.unseen,
        bust=BustOut(
            numbers=_float(odds.numbers),
            currency=_float(odds.currency),
            total=_float(odds.bust),
        ),
        wild=_float(odds.wild),
        value=DrawValueOut(
            stop=_maybe(value.stop), draw=_maybe(value.draw), advantage=_maybe(advantage)
        ),
    )


@get_game_part(
    "/v1/games/{game_id:str}/odds",
    401,
    operation_id="getOdds",
    summary="The odds of the next card",
    description="For the seat whose turn it is in the draw phase: the probability that the "
    "next card busts it, by numbers and by currency, the chance of a wild card (an auction), "
    "and the value in points of stopping now against the expected value of drawing exactly "
    "one more card and then stopping (`advantage` = draw - stop: positive, drawing is worth "
    "more). Exact, computed from public information only: the standard deck for the player "
    "count minus every card in view, so two games whose draw piles hold the same cards in "
    "any order get the same odds. A hand-made deck's game gets the same public computation. "
    "`odds` is null outside a live game's draw phase. A game of a tournament round whose "
    "deal is still being played at another table is 403 `game_embargoed` to all but the "
    "platform and its own players.",
    tags=["games"],
    security=[{}, {SEAT_TOKEN: []}, {PLAYER_TOKEN: []}],
    before_request=authenticate,
)
async def odds(request: AuthenticatedRequest, game_id: GameId) -> OddsOut:
    record = await live_game(request, game_id)
    state = record.state
    # the search runs off the event loop: tens of milliseconds of CPU at worst
    view = (
        None
        if state is None or record.stopped
        else await asyncio.to_thread(_odds, record.id, state)
    )
    version = record.version if state is None else state.version
    return OddsOut(game_id=record.id, version=version, odds=view)
