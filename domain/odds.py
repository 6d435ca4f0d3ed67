"""The odds of the draw phase, computed exactly from the public view (no sampling).

Everything here reads only a `PublicView`: never the draw pile's order, never the seed.

- `unseen_cards(view)`: the multiset of cards not yet seen, that is the standard deck for
  the player count minus every visible card (tableau, market, discard, every collection,
  the card being auctioned). In a game dealt from the standard deck this is exactly the
  draw pile's content, so every probability below is exact. A game created with an
  explicit (custom) deck may hold other cards: the view cannot know which, so the same
  public computation is returned anyway (the odds of a pile holding the unseen cards of
  the standard deck), and they may then be wrong.
- `bust_odds(view)`: the probability that the next card busts the active seat, split by
  numbers and by currency (and the chance of a wild card, which starts an auction).
- `draw_value(view)`: the expected value of drawing against stopping (below).
- `determinize(view, pile)`: a game state the view could come from, with a given pile:
  the odds (and the `expert` bot's search) apply the engine's own rules to it.

Value of drawing against stopping, for the seat `s` whose turn it is, in the draw phase:

- A seat's holding is worth `points + tokens / TOKENS_PER_POINT` where `points` is the
  best score of its collection (`scoring.best_total`) and `tokens` its bidding power
  (currency tokens + 3 per bust token, `Player.bidding_power`).
- An outcome (the state after an action) is worth, to `s`, the change of `s`'s holding
  minus the mean change of the other seats' holdings (nothing is subtracted in a
  one-player game). Tokens count as the engine hands them out (the cap of 10, the
  supply, 3.6), because outcomes are computed by `engine.apply`.
- `stop` = the best of the two rewards now: max over `Stop(numbers)`, `Stop(currency)`
  of the value of the state right after the stop (the buy phase that follows a stop
  for numbers is not counted: it is a later decision, which can always be declined).
  `None` when the seat may not stop (nothing drawn yet this turn).
- `draw` = the expected value, over the next card `c` drawn uniformly from the unseen
  cards, of the best stop right after exactly one more draw:
  - `c` busts the tableau: the value of the bust (the bust token taken, the currency
    the other seats gain after a bust by numbers, the cards lost to the market);
  - `c` is a wild card: an auction starts and the tableau stays as it is; the auction's
    result depends on bids, not on chance, so it counts for nothing, and the outcome is
    the best stop with the tableau unchanged (0 with an empty tableau);
  - otherwise: the best stop with `c` added to the tableau (also when `c` was the last
    card and the seat must stop).
  `None` when the seat cannot draw (the pile is empty or nothing is unseen).
- `advantage = draw - stop` (positive: drawing is worth more), `None` if either is.

All values are `Fraction`s: exact.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

import msgspec

from domain.cards import WILDS, deck_for
from domain.engine import apply, bust_kind
from domain.model import Auction, Draw, GameState, Player, Stop
from domain.scoring import best_total
from domain.views import PublicView

TOKENS_PER_POINT = 3  # what a point of score is worth in tokens (cards cost 1-9 to buy)

# (players before, players after, seat, rules' perfect bonus) -> the outcome's value to seat
Valuation = Callable[[Sequence[Player], Sequence[Player], int, int], Fraction | float]


class BustOdds(msgspec.Struct, frozen=True, kw_only=True):
    """The next card's odds for the active seat (exact fractions of `unseen` cards)."""

    unseen: int  # cards not yet seen
    numbers: Fraction  # the next card busts by numbers
    currency: Fraction  # the next card busts by currency
    wild: Fraction  # the next card is a wild card (an auction, no bust)

    @property
    def bust(self) -> Fraction:
        return self.numbers + self.currency


class DrawValue(msgspec.Struct, frozen=True, kw_only=True):
    """`draw_value`'s result (module docstring): in points, exact."""

    stop: Fraction | float | None  # floats only from a valuation that gives floats
    draw: Fraction | float | None

    @property
    def advantage(self) -> Fraction | float | None:
        if self.stop is None or self.draw is None:
            return None
        return self.draw - self.stop


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


def bust_odds(view: PublicView, unseen: Counter[str] | None = None) -> BustOdds:
    """The chance that the next card drawn busts the active seat's tableau, by numbers and
    by currency (`engine.bust_kind` on the tableau plus that card), and that it is a wild
    card. All zero when nothing is unseen."""
    if unseen is None:
        unseen = unseen_cards(view)
    total = sum(unseen.values())
    counts = {"numbers": 0, "currency": 0, "wild": 0}
    for code, count in unseen.items():
        kind = "wild" if code in WILDS else bust_kind((*view.tableau, code))
        if kind is not None:
            counts[kind] += count
    if total == 0:
        return BustOdds(unseen=0, numbers=Fraction(0), currency=Fraction(0), wild=Fraction(0))
    return BustOdds(
        unseen=total,
        numbers=Fraction(counts["numbers"], total),
        currency=Fraction(counts["currency"], total),
        wild=Fraction(counts["wild"], total),
    )


def bust_risk(view: PublicView) -> Fraction:
    """The chance that the next card drawn busts the active seat (either way)."""
    return bust_odds(view).bust


def holding(player: Player, perfect_bonus: int) -> Fraction:
    """A seat's holding in points: its best score plus its bidding power in points."""
    return best_total(player.cards, perfect_bonus) + Fraction(
        player.bidding_power, TOKENS_PER_POINT
    )


def net_value(
    before: Sequence[Player], after: Sequence[Player], seat: int, perfect_bonus: int
) -> Fraction:
    """The value to `seat` of going from `before` to `after`: its holding's change minus
    the mean change of the other seats' holdings (module docstring)."""
    changes = [
        Fraction(0) if old is new else holding(new, perfect_bonus) - holding(old, perfect_bonus)
        for old, new in zip(before, after, strict=True)
    ]
    others = len(changes) - 1
    mine = changes[seat]
    if others == 0:
        return mine
    return mine - (sum(changes) - mine) / others


def determinize(view: PublicView, pile: Sequence[str]) -> GameState:
    """A game state the public view could come from, with `pile` (top card first) as its
    draw pile and no seed. The high bidder of an auction is taken to have named no payment
    (the engine then picks it)."""
    auction = view.auction
    return GameState(
        rules=view.rules,
        seed="",
        draw_pile=tuple(pile),
        players=view.players,
        starting_seat=view.starting_seat,
        active_seat=view.active_seat,
        phase=view.phase,
        drawn=view.drawn,
        tableau=view.tableau,
        market=view.market,
        discard=view.discard,
        supply_currency=view.supply.currency,
        supply_bust=view.supply.bust,
        auction=None
        if auction is None
        else Auction(
            card=auction.card,
            bidders=auction.bidders,
            turn=auction.bidders.index(auction.to_act),
            high_bid=auction.high_bid,
            high_bidder=auction.high_bidder,
        ),
        final_queue=view.final_queue,
        version=view.version,
        results=view.results,
    )


_STOPS = (Stop(take="numbers"), Stop(take="currency"))
_DRAW = Draw()


def stop_values(state: GameState, value: Valuation = net_value) -> dict[str, Fraction | float]:
    """The `value` of each of the two rewards for the active seat of `state` (in the draw
    phase, with something drawn): of the states right after `Stop(numbers)` and
    `Stop(currency)`, by take."""
    seat = state.active_seat
    bonus = state.rules.perfect_bonus
    return {
        s.take: value(state.players, apply(state, seat, s)[0].players, seat, bonus) for s in _STOPS
    }


def stop_value(state: GameState, value: Valuation = net_value) -> Fraction | float:
    """The better of the two rewards (`stop_values`)."""
    return max(stop_values(state, value).values())


def draw_value(
    view: PublicView, value: Valuation = net_value, unseen: Counter[str] | None = None
) -> DrawValue:
    """The value of stopping now against the expected value of the best stop after exactly
    one more draw (module docstring), for the seat whose turn it is. `value` prices an
    outcome (`net_value` unless a bot brings its own); `unseen` is the multiset the next
    card comes from (`unseen_cards(view)` unless given)."""
    if view.phase != "draw":
        raise ValueError("odds are for the draw phase")
    seat = view.active_seat
    bonus = view.rules.perfect_bonus
    filler = ("$1",) * max(view.draw_pile_size - 1, 0)  # the order below the top is unused
    now = determinize(view, ("$1", *filler))
    if not now.drawn:  # what stopping after a wild card's auction would bring
        now = msgspec.structs.replace(now, drawn=True)
    stop_now = stop_value(now, value)
    if unseen is None:
        unseen = unseen_cards(view)
    total = sum(unseen.values())
    draw: Fraction | float | None = None
    if total and view.draw_pile_size:
        expected: Fraction | float = Fraction(0)
        for code, count in sorted(unseen.items()):
            if code in WILDS:
                outcome = stop_now
            else:
                after, _ = apply(determinize(view, (code, *filler)), seat, _DRAW)
                if after.tableau:
                    outcome = stop_value(after, value)
                else:  # busted: the turn is over
                    outcome = value(view.players, after.players, seat, bonus)
            expected += count * outcome  # exact with `net_value` (Fractions)
        draw = expected / total
    return DrawValue(stop=stop_now if view.drawn else None, draw=draw)
