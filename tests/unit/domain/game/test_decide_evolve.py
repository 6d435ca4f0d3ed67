"""The engine's split (issue 24): `decide` gives the facts, `evolve` is the only change.

Over seeded games of random and basic bots, after every action and for every action
listed to the seat:

- `apply` equals `decide` folded by `evolve` (the same state, the public events being
  the facts without the private ones);
- the public log folded by `evolve` from `game_started` gives the state as the players
  know it, `information_state` of the live state (its pile `HIDDEN`, no seed, no payment
  named by a bidder, no clock: the only secrets);
- a draw on that state with the live pile's top card as the chance outcome gives the
  live draw's events.
"""

from __future__ import annotations

from fractions import Fraction

import msgspec
import pytest

from domain.bots.basic import BOTS
from domain.bots.odds import chance_outcomes
from domain.game.engine import (
    HIDDEN,
    PaymentNamed,
    apply,
    decide,
    evolve,
    information_state,
    new_game,
    to_act,
)
from domain.game.legal import legal_actions
from domain.game.model import AuctionWon, Bid, CardDrawn, Draw, GameState, Pass, TokenPayment
from domain.game.rng import SeededRandom

GAMES = 60


def folded(state: GameState, facts) -> GameState:
    for fact in facts:
        state = evolve(state, fact)
    return state


def test_apply_is_decide_folded_by_evolve_and_the_log_folds_to_what_players_know() -> None:
    private = draws = 0
    for game in range(GAMES):
        n = 1 + game % 5
        rng = SeededRandom(f"split/{game}")
        levels = [rng.choice(("random", "basic")) for _ in range(n)]
        state, log = new_game([(f"p{i}", lv) for i, lv in enumerate(levels)], f"split/{game}")
        public = folded(evolve(None, log[0]), log[1:])
        while (seat := to_act(state)) is not None:
            assert public == information_state(state), f"game {game} v{state.version}"
            for action in legal_actions(state, seat):
                facts = decide(state, seat, action)
                after, events = apply(state, seat, action)
                assert folded(state, facts) == after
                assert events == [f for f in facts if type(f) is not PaymentNamed]
                private += len(facts) - len(events)
            if state.phase == "draw" and state.draw_pile:
                top = state.draw_pile[0]
                chance = apply(public, seat, Draw(), card=top)[1]
                assert chance == apply(state, seat, Draw())[1]
                draws += 1
            action = BOTS[levels[seat]](information_state(state), seat, rng)
            state, events = apply(state, seat, action)
            public = folded(public, events)
        assert public == information_state(state)
        assert msgspec.json.encode(public) == msgspec.json.encode(information_state(state))
    assert private > 0
    assert draws > 0


def test_a_draw_from_a_hidden_pile_needs_its_outcome_and_a_dealt_pile_refuses_one() -> None:
    state, log = new_game([("a", None), ("b", None)], "hidden", starting_seat=0)
    public = folded(evolve(None, log[0]), log[1:])
    with pytest.raises(ValueError, match="hidden"):
        decide(public, 0, Draw())
    with pytest.raises(ValueError, match="dealt"):
        decide(state, 0, Draw(), card=state.draw_pile[0])
    other = next(c for c in state.draw_pile if c != state.draw_pile[0])
    after, events = apply(public, 0, Draw(), card=other)
    assert type(events[0]) is CardDrawn
    assert events[0].card == other
    assert after.draw_pile == (HIDDEN,) * (len(state.draw_pile) - 1)


def test_a_payment_named_with_a_bid_stays_private_until_the_auction_is_won() -> None:
    deck = ["W5", "B1", "B2", "B3"]
    state, _ = new_game([("a", None), ("b", None)], "named", deck=deck, starting_seat=0)
    state, _ = apply(state, 0, Draw())
    named = TokenPayment(currency=2, bust=0)
    facts = decide(state, 1, Bid(amount=2, payment=named))
    assert PaymentNamed(payment=named) in facts
    state, events = apply(state, 1, Bid(amount=2, payment=named))
    assert all(type(e) is not PaymentNamed for e in events)
    assert b'"payment"' not in msgspec.json.encode(events)
    assert state.auction is not None
    assert state.auction.high_payment == named
    state, events = apply(state, 0, Pass())
    won = [e for e in events if type(e) is AuctionWon]
    assert won
    assert won[0].payment == named
    assert won[0].seat == 1


def test_the_bots_are_given_the_game_as_its_players_know_it(monkeypatch) -> None:
    """The turn loop and the clock hand a bot the information state: no pile order, no
    seed, nothing a player does not know."""
    from domain.bots import clock, simulation
    from domain.game.model import DeadlineClock

    seen: list[GameState] = []

    def recording(level):
        bot = BOTS[level]

        def play(view, seat, rng):
            seen.append(view)
            return bot(view, seat, rng)

        return play

    monkeypatch.setattr(simulation, "BOTS", {k: recording(k) for k in BOTS})
    monkeypatch.setattr(clock, "BOTS", {k: recording(k) for k in BOTS})
    state, _ = new_game([("me", None), ("b", "basic"), ("c", "expert")], "info", starting_seat=1)
    state, _ = simulation.play_bots(state)
    state = clock.start_clock(state, DeadlineClock(hours=1), 0)
    state, _ = clock.time_out(state, 7200)
    assert len(seen) > 2
    for view in seen:
        assert set(view.draw_pile) == {HIDDEN}
        assert view.seed == ""
        assert view.clock is None


def test_the_draw_is_a_chance_node_over_the_unseen_cards() -> None:
    """Its outcomes are the unseen cards with their probabilities (summing to 1); in a
    dealt game the card the service draws is always one of them."""
    for game in range(20):
        n = 2 + game % 4
        rng = SeededRandom(f"chance/{game}")
        state, _ = new_game([(f"p{i}", "basic") for i in range(n)], f"chance/{game}")
        while (seat := to_act(state)) is not None:
            if state.phase == "draw" and state.draw_pile:
                outcomes = dict(chance_outcomes(information_state(state)))
                assert sum(outcomes.values()) == 1
                assert state.draw_pile[0] in outcomes
                assert outcomes == {
                    card: Fraction(state.draw_pile.count(card), len(state.draw_pile))
                    for card in state.draw_pile
                }
            state, _ = apply(state, seat, BOTS["basic"](information_state(state), seat, rng))
        assert chance_outcomes(information_state(state)) == ()
