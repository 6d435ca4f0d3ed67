"""The basic bot's shortcuts give the answers of the plain computations they replace:
bust odds by the tableau's sums, the cached scores, and the buy phase's bound."""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

import msgspec
import pytest
from msgspec.structs import replace

from domain.bots.basic import _best_buy, basic_bot, basic_policy, bot_rng
from domain.bots.odds import TOKENS_PER_POINT, bust_odds, bust_risk, unseen_cards
from domain.bots.simulation import play_game
from domain.game.cards import ALL_CODES, NUMBER_CARDS, WILDS, deck_for
from domain.game.engine import bust_kind, information_state, tableau_sums
from domain.game.legal import legal_actions
from domain.game.model import CURRENCY_CAP, Bid, Buy, Decline, Draw, GameState, Pass, Stop
from domain.game.scoring import best_total, cached_best_total


def _views(seeds: range, players: int = 4) -> list[tuple[GameState, int]]:
    """(view, seat) before every action of seeded basic games."""
    seen: list[tuple[GameState, int]] = []

    def keep(before, seat, _action, _after) -> None:  # type: ignore[no-untyped-def]
        seen.append((information_state(before), seat))

    for seed in seeds:
        play_game(["basic"] * players, f"caches/{seed}", on_action=keep)
    return seen


def _plain_odds(view: GameState, unseen: Counter[str]) -> tuple[int, int, int, int]:
    """(unseen, numbers, currency, wild) counted card by card with `engine.bust_kind`."""
    counts = Counter()
    for code, count in unseen.items():
        kind = "wild" if code in WILDS else bust_kind((*view.tableau, code))
        counts[kind] += count
    return sum(unseen.values()), counts["numbers"], counts["currency"], counts["wild"]


def test_bust_odds_agree_with_bust_kind_card_by_card_on_any_tableau() -> None:
    (view, _seat), *_ = _views(range(1))
    rng = random.Random(5)
    codes = sorted(ALL_CODES - WILDS)
    for _ in range(400):
        # tableaus with the same sums from different cards, in any order (the cache's key)
        tableau = tuple(rng.choice(codes) for _ in range(rng.randrange(0, 6)))
        unseen = Counter({code: rng.randrange(0, 4) for code in sorted(ALL_CODES)})
        probe = replace(view, tableau=tableau)
        total, numbers, currency, wild = _plain_odds(probe, unseen)
        odds = bust_odds(probe, unseen)
        assert odds.unseen == total
        if total:
            assert (odds.numbers, odds.currency, odds.wild) == (
                Fraction(numbers, total),
                Fraction(currency, total),
                Fraction(wild, total),
            )


def test_bust_risk_is_the_bust_odds_sum_on_played_views() -> None:
    draws = [v for v, _ in _views(range(3)) if v.phase == "draw"]
    assert draws
    for view in draws:
        assert bust_risk(view) == bust_odds(view).bust
        total, numbers, currency, _wild = _plain_odds(view, unseen_cards(view))
        assert bust_risk(view) == (Fraction(numbers + currency, total) if total else 0)


@pytest.mark.parametrize(
    "limit", [0.0, 0.1, 0.3, 1 / 3, 0.5, 1.0, -0.2, math.inf, -math.inf, math.nan]
)
def test_the_basic_bot_draws_when_the_bust_risk_is_below_its_limit(limit: float) -> None:
    # the bot compares in integers (`odds.bust_counts`); the rule is the Fraction's
    bot = basic_policy(risk_limit=limit)
    draws = [(v, s) for v, s in _views(range(2)) if v.phase == "draw" and v.drawn]
    assert draws
    drew = 0
    for view, seat in draws:
        can_draw = bool(view.draw_pile)
        expected = can_draw and bust_risk(view) < limit
        drew += expected
        assert isinstance(bot(view, seat, bot_rng("s", 0)), Draw) == expected
    assert drew or limit <= 0.1 or math.isnan(limit)


def test_an_unknown_code_among_the_unseen_is_refused_as_the_engine_refuses_it() -> None:
    (view, _seat), *_ = _views(range(1))
    with pytest.raises(KeyError):
        bust_kind((*view.tableau, "X9"))
    with pytest.raises(KeyError):
        bust_odds(view, Counter({"X9": 1}))


def test_the_cached_score_is_the_score() -> None:
    rng = random.Random(8)
    codes = sorted(ALL_CODES - {f"${v}" for v in range(1, 6)})
    for _ in range(300):
        cards = tuple(rng.choice(codes) for _ in range(rng.randrange(0, 25)))
        for bonus in (0, 1, 3):
            assert cached_best_total(cards, bonus) == best_total(cards, bonus)


def _plain_best_buy(view: GameState, seat: int) -> object:
    """Every priced purchase scored: the first with the highest gain above 0, or Decline."""
    me = view.players[seat]
    bonus = view.rules.perfect_bonus
    base = best_total(me.cards, bonus)
    best: tuple[int, object] = (0, Decline())
    for action in legal_actions(view, seat):
        if not isinstance(action, Buy) or action.payment is None:
            continue
        after = list(me.cards)
        for spent in action.payment.cards:
            after.remove(spent)
        gain = best_total([*after, action.card], bonus) - base
        if gain > best[0]:
            best = (gain, action)
    return best[1]


@pytest.mark.parametrize("players", [2, 4])
def test_the_bounded_buy_is_the_plain_buy(players: int) -> None:
    buys = [(v, s) for v, s in _views(range(6), players) if v.phase in ("buy", "final_buy")]
    assert len(buys) > 20
    spent = 0
    for view, seat in buys:
        chosen = _best_buy(view, seat, legal_actions(view, seat, priced=False))
        assert chosen == _plain_best_buy(view, seat)
        spent += isinstance(chosen, Buy) and bool(chosen.payment and chosen.payment.cards)
    assert spent  # purchases paid with cards were compared too


def test_the_basic_auction_bids_what_the_plain_worth_says() -> None:
    """The basic bot's auction: a pass or the bid that the card's worth, scored in full,
    gives (its least bid when it bids last, else its limit)."""
    decided = 0
    passes = 0
    for view, seat in _views(range(4)):
        if view.phase != "auction":
            continue
        assert view.auction is not None
        action = basic_bot(view, seat, bot_rng("caches", view.version))
        me = view.players[seat]
        bonus = view.rules.perfect_bonus
        base = best_total(me.cards, bonus)
        worth = best_total([*me.cards, view.auction.card], bonus) - base
        limit = max(worth, 1) * TOKENS_PER_POINT - 1
        bids = [a for a in legal_actions(view, seat) if isinstance(a, Bid) and a.amount <= limit]
        last = view.auction.bidders[-1] == seat
        assert action == ((bids[0] if last else bids[-1]) if bids else Pass())
        decided += 1
        passes += not bids
    assert decided > 50
    assert 0 < passes < decided  # passes and bids were compared


def _plain_unseen(view: GameState) -> Counter[str]:
    """The standard deck minus every visible card, counted at once."""
    shown = Counter([*view.tableau, *view.market, *view.discard])
    for player in view.players:
        shown.update(player.cards)
    if view.auction is not None:
        shown[view.auction.card] += 1
    deck = Counter(deck_for(len(view.players)))
    return Counter({code: deck[code] - shown[code] for code in deck if deck[code] > shown[code]})


def test_unseen_cards_are_the_deck_less_what_is_shown_whatever_view_came_before() -> None:
    views = [v for v, _ in _views(range(2))] + [v for v, _ in _views(range(2), players=2)]
    rng = random.Random(3)
    # in play order (the collections kept from one view to the next), shuffled, and
    # decoded copies (the same content in other objects)
    shuffled = rng.sample(views, len(views))
    copies = [msgspec.json.decode(msgspec.json.encode(v), type=GameState) for v in views]
    for view in [*views, *shuffled, *copies]:
        assert unseen_cards(view) == _plain_unseen(view)
    # an explicit deck showing more copies than the standard one
    view = views[len(views) // 2]
    extra = replace(view, tableau=(*view.tableau, "R1", "R1", "R1", "R1", "R1", "R1", "R1"))
    assert unseen_cards(extra) == _plain_unseen(extra)
    assert "R1" not in unseen_cards(extra)


def test_the_basic_stop_takes_what_the_plain_gain_says() -> None:
    """A stop with no room for currency is made without scoring: the same take as the
    gain computed in full."""
    stops = 0
    roomless = 0
    for view, seat in _views(range(4)):
        if view.phase != "draw" or not view.drawn:
            continue
        action = basic_bot(view, seat, bot_rng("caches", view.version))
        if not isinstance(action, Stop):
            continue
        me = view.players[seat]
        bonus = view.rules.perfect_bonus
        numbers = [c for c in view.tableau if c in NUMBER_CARDS]
        _, money = tableau_sums(view.tableau)
        gain = best_total([*me.cards, *numbers], bonus) - best_total(me.cards, bonus)
        room = min(money, CURRENCY_CAP - me.currency)
        take = gain * TOKENS_PER_POINT >= room or gain > 0
        assert action.take == ("numbers" if take else "currency")
        stops += 1
        roomless += room <= 0
    assert stops > 50
    assert roomless  # the shortcut was taken
