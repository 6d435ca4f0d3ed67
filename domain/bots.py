"""Server-side players. A bot sees only the public view (and its own random source).

- `random`: uniform over the legal actions.
- `basic`: stops when the chance that the next card busts, counted from the cards not
  yet seen, is too high; bids up to what a wild card is worth to its runs; buys the card
  that raises its score most.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from domain.cards import NUMBER_CARDS, WILDS, deck_for
from domain.engine import tableau_sums
from domain.legal import (
    action_for,
    buyable_cards,
    choices_of,
    legal_actions,
    legal_choices,
    make_action,
)
from domain.model import (
    BUST_LIMIT,
    BUST_TOKEN_VALUE,
    CURRENCY_CAP,
    Action,
    Bid,
    Buy,
    Decline,
    Draw,
    GameState,
    Pass,
    Stop,
)
from domain.payments import token_payment
from domain.rng import SeededRandom
from domain.scoring import best_total
from domain.views import PublicView

Bot = Callable[[PublicView, int, SeededRandom], Action]

RISK_LIMIT = 0.3  # the basic bot stops when the next draw busts with this chance or more
TOKENS_PER_POINT = 3  # what a point of score is worth in tokens (cards cost 1-9 to buy)


def random_bot(view: PublicView, seat: int, rng: SeededRandom) -> Action:
    choices = legal_choices(view, seat)
    if not choices:
        raise ValueError("it is not this seat's decision")
    return make_action(view, seat, rng.choice(choices))


def random_move(state: GameState, seat: int, rng: SeededRandom) -> Action:
    """`random_bot(public_view(state), seat, rng)` without building the view, for the
    seat whose decision it is: the same action from the same random source. It reads
    only what the view shows (phase, drawn, the draw pile's size, the players, the
    highest bid, the market, the rules), never the draw pile's order or the seed."""
    phase = state.phase
    randbelow = rng.randbelow
    if phase == "draw":
        # the choices of `choices_of`, picked by index without building them
        if not state.drawn:
            randbelow(1)  # the stream moves as for a pick among one choice
            return _DRAW
        if state.draw_pile:
            return _DRAW_OR_STOP[randbelow(3)]
        return _STOP_ONLY[randbelow(2)]
    auction = state.auction
    me = state.players[seat]
    if phase == "auction":
        # pass, then every bid from the highest bid + 1 to the bidding power
        high = 0 if auction is None else auction.high_bid
        bids = me.currency + BUST_TOKEN_VALUE * me.bust - high
        index = randbelow(1 + bids if bids > 0 else 1)
        if index == 0:
            return _PASS
        amount = high + index
        return Bid(amount=amount, payment=token_payment(amount, me.currency, me.bust))
    if phase in ("buy", "final_buy"):
        # decline, then the buyable cards (`choices_of`), picked by index
        cards = buyable_cards(me, state.market)
        index = randbelow(len(cards) + 1)
        return action_for(me, state.rules, ("buy", cards[index - 1]) if index else _DECLINE_CHOICE)
    choices = choices_of(
        state.phase,
        state.drawn,
        len(state.draw_pile),
        me,
        0 if auction is None else auction.high_bid,
        state.market,
    )
    if not choices:
        raise ValueError("it is not this seat's decision")
    return action_for(me, state.rules, choices[rng.randbelow(len(choices))])


_DRAW = Draw()
_DRAW_OR_STOP = (_DRAW, Stop(take="numbers"), Stop(take="currency"))
_STOP_ONLY = _DRAW_OR_STOP[1:]
_PASS = Pass()
_DECLINE_CHOICE = ("decline", 0)


def unseen_cards(view: PublicView) -> Counter[str]:
    """Cards of the standard deck not visible anywhere: what the draw pile may hold."""
    unseen = Counter(deck_for(len(view.players)))
    unseen.subtract(view.tableau)
    unseen.subtract(view.market)
    unseen.subtract(view.discard)
    if view.auction is not None:
        unseen[view.auction.card] -= 1
    for player in view.players:
        unseen.subtract(player.cards)
    return +unseen  # drop zero and negative counts (explicit decks can differ from the standard)


def bust_risk(view: PublicView) -> float:
    """The chance that the next card drawn busts the active player."""
    unseen = unseen_cards(view)
    total = sum(unseen.values())
    if total == 0:
        return 0.0
    numbers, money = tableau_sums(view.tableau)
    busting = 0
    for code, count in unseen.items():
        if code in NUMBER_CARDS:
            if numbers + int(code[1]) - money >= BUST_LIMIT:
                busting += count
        elif code not in WILDS and money + int(code[1]) >= BUST_LIMIT:
            busting += count
    return busting / total


def basic_bot(view: PublicView, seat: int, rng: SeededRandom) -> Action:
    actions = legal_actions(view, seat)
    if not actions:
        raise ValueError("it is not this seat's decision")
    me = view.players[seat]
    bonus = view.rules.perfect_bonus
    if view.phase == "draw":
        can_draw = any(isinstance(a, Draw) for a in actions)
        if can_draw and (not view.drawn or bust_risk(view) < RISK_LIMIT):
            return Draw()
        numbers = [c for c in view.tableau if c in NUMBER_CARDS]
        _, money = tableau_sums(view.tableau)
        gain = best_total([*me.cards, *numbers], bonus) - best_total(me.cards, bonus)
        room = min(money, CURRENCY_CAP - me.currency)
        take_numbers = gain * TOKENS_PER_POINT >= room or gain > 0
        return Stop(take="numbers" if take_numbers else "currency")
    if view.phase == "auction":
        assert view.auction is not None
        card = view.auction.card
        worth = best_total([*me.cards, card], bonus) - best_total(me.cards, bonus)
        # a wild card that adds nothing now can still fill a gap later
        limit = max(worth, 1) * TOKENS_PER_POINT - 1
        bids = [a for a in actions if isinstance(a, Bid) and a.amount <= limit]
        return bids[0] if bids else Pass()
    # buy phase: the purchase that raises the score most, if any
    base = best_total(me.cards, bonus)
    best: tuple[int, Action] = (0, Decline())
    for action in actions:
        if not isinstance(action, Buy) or action.payment is None:
            continue
        after = list(me.cards)
        for spent in action.payment.cards:
            after.remove(spent)
        after.append(action.card)
        gain = best_total(after, bonus) - base
        if gain > best[0]:
            best = (gain, action)
    return best[1]


BOTS: dict[str, Bot] = {"random": random_bot, "basic": basic_bot}


def bot_rng(seed: str, version: int) -> SeededRandom:
    """The random source of the bot moving at `version`: derived from the game's seed, so a
    game replays exactly, yet a different stream from the shuffle's."""
    return SeededRandom(f"bot/{version}/{seed}")
