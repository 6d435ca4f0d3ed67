"""The engine's fast paths against the general code they shortcut, on many states:

- `apply`'s lean handlers (draws, stops, bids, passes, buys, declines, the end of an
  auction) against `_Turn`, the general path, for every legal action (refused ones too);
- `score_collection` of collections without numbered wildcards or `W#` (scored colour
  by colour) against the general scorer;
- `spend_order` of such collections against `general_spend_order`.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from domain import cards as C
from domain.bots import random_move
from domain.engine import _Turn, apply, new_game, to_act
from domain.errors import RuleError
from domain.legal import legal_actions
from domain.model import Action, Bid, Buy, Decline, Draw, GameState, Pass, Payment, Stop
from domain.payments import general_spend_order, spend_order
from domain.rng import SeededRandom
from domain.scoring import _score_general, score_collection

pytestmark = pytest.mark.unit


def general_apply(state: GameState, action: Action) -> bytes:
    """The outcome of `action` through `_Turn` alone: the new state and events, or the
    refusal, encoded for comparison."""
    turn = _Turn(state)
    try:
        if isinstance(action, Draw):
            turn.draw()
        elif isinstance(action, Stop):
            turn.stop(action.take)
        elif isinstance(action, Bid):
            turn.bid(action)
        elif isinstance(action, Pass):
            turn.pass_()
        elif isinstance(action, Buy):
            turn.buy(action)
        else:
            assert isinstance(action, Decline)
            turn.decline()
    except RuleError as error:
        return msgspec.json.encode([error.code, str(error)])
    return msgspec.json.encode(turn.finish())


def fast_apply(state: GameState, seat: int, action: Action) -> bytes:
    try:
        return msgspec.json.encode(apply(state, seat, action))
    except RuleError as error:
        return msgspec.json.encode([error.code, str(error)])


def probes(state: GameState, seat: int) -> list[Action]:
    """Every legal action, and actions of every kind the rules refuse here."""
    actions: list[Action] = list(legal_actions(state, seat))
    actions += [Draw(), Stop(take="numbers"), Stop(take="currency"), Pass(), Decline()]
    actions += [Bid(amount=1), Bid(amount=99)]
    for card in state.market[:2]:
        actions.append(Buy(card=card))
        actions.append(Buy(card=card, payment=Payment(currency=0, bust=0, cards=())))
    actions.append(Buy(card="R9"))
    return actions


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_lean_apply_is_the_general_path(players: int) -> None:
    kinds: set[str] = set()
    for game in range(3):
        state, _ = new_game([(f"p{i}", "random") for i in range(players)], f"lean/{players}/{game}")
        rng = SeededRandom(f"lean-rng/{players}/{game}")
        while (seat := to_act(state)) is not None:
            for action in probes(state, seat):
                assert fast_apply(state, seat, action) == general_apply(state, action), action
            action = random_move(state, seat, rng)
            state, events = apply(state, seat, action)
            kinds.update(type(event).__name__ for event in events)
    # the paths taken: every kind of event the lean handlers produce
    assert {
        "CardDrawn",
        "AuctionStarted",
        "Busted",
        "Stopped",
        "TurnStarted",
        "BidPlaced",
        "BidPassed",
        "AuctionWon",
        "WildDiscarded",
        "CardBought",
        "BuyDeclined",
        "FinalBuyStarted",
        "GameFinished",
    } <= kinds or players == 1


def random_collections(seed: int, count: int) -> list[tuple[str, ...]]:
    rng = random.Random(seed)
    numbers = sorted(C.NUMBER_CARDS)
    color_wilds = sorted(C.COLOR_WILDS)
    wilds = sorted(C.WILDS)
    out = []
    for i in range(count):
        owned = [rng.choice(numbers) for _ in range(rng.randint(0, 30))]
        if i % 2:
            owned += [rng.choice(color_wilds) for _ in range(rng.randint(1, 5))]
        if i % 5 == 0:
            owned += [rng.choice(wilds) for _ in range(rng.randint(1, 3))]
        out.append(tuple(sorted(owned)))
    return out


def test_score_by_colour_is_the_general_scorer() -> None:
    for i, owned in enumerate(random_collections(1, 3000)):
        bonus = i % 3
        assert score_collection(owned, bonus) == _score_general(owned, bonus), owned
        assert score_collection(iter(owned), bonus) == _score_general(owned, bonus)


def test_score_by_colour_refuses_what_the_general_scorer_refuses() -> None:
    with pytest.raises(ValueError, match="perfect_bonus"):
        score_collection(["R1", "R#"], -1)
    with pytest.raises(ValueError, match="not a number card"):
        score_collection(["R1", "$3"])


def test_spend_order_is_the_general_order() -> None:
    for i, owned in enumerate(random_collections(2, 3000)):
        bonus = i % 3
        assert spend_order.__wrapped__(owned, bonus) == general_spend_order(owned, bonus), owned
