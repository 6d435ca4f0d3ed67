"""The engine's fast paths against the general code they shortcut, on many states:

- `apply`'s lean handlers (draws, stops, bids, passes, buys, declines, the end of an
  auction) against `_Turn`, the general path, for every legal action (refused ones too);
- `score_collection` of collections without numbered wildcards or `W#` (scored colour
  by colour) against the general scorer;
- `spend_order` of such collections against `general_spend_order`;
- the scorer's pick when one numbered wildcard or `W#` is all the colours can share
  (`_one_shared`) against its branch-and-bound (`_search`);
- the placement of a single numbered wildcard or `W#` (`_place_one`) against the
  matching (`_place`);
- the buy choices' price limit (`highest_price`) against `choose_buy_mix`;
- `play_game` (its handlers called past `apply`'s turn check, random seats moved by
  `random_move`) against a loop of bots on the public view and `apply`;
- the shuffle (blocks hashed at once, no rejection check when none can be rejected)
  against the shuffle drawing one number at a time as `randbelow` does.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from domain import cards as C
from domain.bots import BOTS, random_move
from domain.engine import _Turn, apply, new_game, to_act
from domain.errors import RuleError
from domain.legal import legal_actions, legal_choices
from domain.model import Action, Bid, Buy, Decline, Draw, GameState, Pass, Payment, Stop
from domain.payments import choose_buy_mix, general_spend_order, highest_price, spend_order
from domain.rng import SeededRandom
from domain.scoring import (
    _COLOR_WEIGHT,
    _POP,
    _candidates,
    _one_shared,
    _parse,
    _place,
    _place_one,
    _score_general,
    _search,
    score_collection,
)
from domain.simulation import SimulatedGame, play_game
from domain.views import public_view

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


def one_shared_lists(seed: int, count: int) -> list[tuple[list[list[tuple]], int, bool]]:
    """(candidate lists, W# copies, composite values?) of random collections whose
    candidates can use one numbered wildcard or `W#` between them, with composite values
    (score_collection) and plain scores (best_total)."""
    rng = random.Random(seed)
    numbers = sorted(C.NUMBER_CARDS)
    color_wilds = sorted(C.COLOR_WILDS)
    shared = sorted(C.NUMBER_WILDS | {C.FULL_WILD})
    out = []
    for i in range(count):
        owned = [rng.choice(numbers) for _ in range(rng.randint(0, 30))]
        owned += [rng.choice(color_wilds) for _ in range(rng.randint(0, 3))]
        owned += rng.sample(shared, 1 if i % 3 else 2)
        held, cwild, full, masks = _parse(owned)
        bonus = i % 3
        for composite, weights in ((True, _COLOR_WEIGHT), (False, (-1, -1, -1, -1))):
            lists = [
                _candidates(held[c], cwild[c], masks[0], full, bonus=bonus, weight=weights[c])
                for c in range(4)
            ]
            usable = 0
            for lst in lists:
                for cand in lst:
                    usable |= cand[2]
            if _POP[usable] + full == 1:
                out.append((lists, full, composite))
    return out


def test_one_shared_wild_is_the_search() -> None:
    cases = one_shared_lists(3, 3000)
    assert len(cases) > 3000  # most of the 6000 lists (the rest share two wild cards)
    choices = 0
    for lists, full, composite in cases:
        best, picks = _search(lists, full, 1)
        chosen = _one_shared(lists)
        assert sum(cand[0] for cand in chosen) == best
        if composite:  # no ties: the very same candidates
            assert chosen == [lst[i] for lst, i in zip(lists, picks, strict=True)]
        choices += any(len(lst) > 1 for lst in lists)
    assert choices > 1000  # cases where some colour could take the wild card


def test_highest_price_is_where_choose_buy_mix_pays() -> None:
    """The buy choices list the market cards up to `highest_price`: the prices for which
    `choose_buy_mix` finds a payment."""
    payable = 0
    for currency in range(12):
        for bust in range(16):
            for cards in range(25):
                top = highest_price(currency, bust, cards)
                for price in range(1, 40):
                    mix = choose_buy_mix.__wrapped__(price, currency, bust, cards)
                    assert (mix is not None) == (price <= top), (price, currency, bust, cards)
                    payable += mix is not None
    assert 0 < payable < 12 * 16 * 25 * 39


def reference_game(bots: list[str], seed: str) -> bytes:
    """`play_game` through the general paths: every move from the bot on the public
    view, applied by `apply`."""
    state, events = new_game([(f"bot{i}", level) for i, level in enumerate(bots)], seed)
    rng = SeededRandom(f"bots/{seed}")
    actions = 0
    while (seat := to_act(state)) is not None:
        action = BOTS[bots[seat]](public_view(state), seat, rng)
        state, produced = apply(state, seat, action)
        events.extend(produced)
        actions += 1
    return msgspec.msgpack.encode(SimulatedGame(state=state, events=events, actions=actions))


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_play_game_is_the_general_turn_loop(players: int) -> None:
    for game in range(4):
        bots = ["random" if (seat + game) % 3 else "basic" for seat in range(players)]
        seed = f"loop/{players}/{game}"
        assert msgspec.msgpack.encode(play_game(bots, seed)) == reference_game(bots, seed)


def test_buy_choices_are_the_cards_choose_buy_mix_pays() -> None:
    buy_phases = listed = 0
    for game in range(12):
        players = 2 + game % 4
        state, _ = new_game([(f"p{i}", "random") for i in range(players)], f"buys/{game}")
        rng = SeededRandom(f"buys-rng/{game}")
        while (seat := to_act(state)) is not None:
            if state.phase in ("buy", "final_buy"):
                me = state.players[seat]
                expected = [
                    ("buy", card)
                    for card in sorted(set(state.market))
                    if card not in me.cards
                    and choose_buy_mix.__wrapped__(
                        int(card[1]), me.currency, me.bust, len(me.cards)
                    )
                ]
                choices = legal_choices(public_view(state), seat)
                assert choices == [("decline", 0), *expected]
                buy_phases += 1
                listed += len(expected)
            state, _ = apply(state, seat, random_move(state, seat, rng))
    assert buy_phases > 100
    assert listed > 500


def test_shuffle_is_the_one_by_one_shuffle() -> None:
    """`shuffled` hashes its blocks at once and draws without rejection checks when none
    can be rejected; `_shuffled_one_by_one` draws as randbelow does. Same result, same
    stream after (numbers left over from earlier draws included)."""
    for size in (0, 1, 2, 3, 5, 8, 41, 96, 129, 300):
        for seed in range(12):
            fast, slow = SeededRandom(f"shuffle/{seed}"), SeededRandom(f"shuffle/{seed}")
            for _ in range(seed % 6):  # leave 0-3 numbers of a block pending
                assert fast.randbelow(7) == slow.randbelow(7)
            items = list(range(size))
            assert fast.shuffled(items) == slow._shuffled_one_by_one(list(items))
            assert [fast.randbelow(1000) for _ in range(9)] == [
                slow.randbelow(1000) for _ in range(9)
            ]


def test_shuffle_with_a_rejected_number_is_the_one_by_one_shuffle() -> None:
    top = 1 << 64
    for size in (4, 10, 40):
        for reject_at in range(size - 1):
            fast, slow = SeededRandom("reject"), SeededRandom("reject")
            # the next numbers of the stream: one that randbelow(size - reject_at) rejects
            numbers = list(range(10**15, 10**15 + size - 1))
            numbers[reject_at] = top - 1
            fast._pending[:] = numbers[::-1]
            slow._pending[:] = numbers[::-1]
            items = list(range(size))
            assert fast.shuffled(items) == slow._shuffled_one_by_one(list(items))
            assert fast.randbelow(10**6) == slow.randbelow(10**6)


def test_one_unit_placed_as_the_matching_places_it() -> None:
    rng = random.Random(5)
    placed = 0
    for c in range(4):
        for usable_c in range(512):
            units = [0, 0, 0, 0]
            units[c] = 1
            usable = [rng.randrange(512) for _ in range(4)]
            usable[c] = usable_c
            for masks in (
                (usable_c, 0, 0, 0),
                (usable_c | rng.randrange(512), 0, 0, 0),
                (511, usable_c, 0, 0),
            ):
                assert _place_one(c, usable) == _place(units, usable, masks)
                placed += bool(usable_c)
    assert placed > 5000
