"""Thousands of seeded games between bots, checking after every action:

- every invariant of rules.md section 8;
- that `legal_actions` and `apply` agree: every listed action applies, and a sample of
  actions that are not listed (and actions by seats whose turn it is not) are refused;
- that the public state rebuilt from the event log equals the live public view;
- that nothing public ever contains the secret draw pile order;
- that every game ends, with results.
"""

from __future__ import annotations

import msgspec
import pytest

from domain.bots.basic import BOTS
from domain.game.cards import NUMBER_CARDS, deck_for
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.errors import RuleError
from domain.game.invariants import violations
from domain.game.legal import legal_actions
from domain.game.model import Bid, Buy, Decline, Draw, Pass, Stop
from domain.game.replay import replay
from domain.game.rng import SeededRandom
from domain.game.views import public_view

GAMES = 3000
CHUNKS = 30
SORTED_NUMBERS = sorted(NUMBER_CARDS)


def listed_key(action) -> tuple:
    match action:
        case Bid(amount=amount):
            return ("bid", amount)
        case Buy(card=card):
            return ("buy", card)
        case Stop(take=take):
            return ("stop", take)
        case _:
            return (type(action).__name__,)


def unlisted_probes(state, seat: int, rng: SeededRandom) -> list:
    player = state.players[seat]
    power = player.currency + 3 * player.bust
    probes = [
        Draw(),
        Stop(take="numbers"),
        Stop(take="currency"),
        Pass(),
        Decline(),
        Bid(amount=rng.randbelow(power + 5) - 2),
        Buy(card=rng.choice(SORTED_NUMBERS)),
    ]
    if state.market:
        probes.append(Buy(card=rng.choice(state.market)))
    return probes


def refusal(state, seat: int, action) -> RuleError:
    """The RuleError `apply` raises (what `pytest.raises` checks, without its bookkeeping: it
    runs some 1,800 times a game, a tenth of this test's time)."""
    try:
        apply(state, seat, action)
    except RuleError as error:
        return error
    raise AssertionError(f"seat {seat}'s {action!r} applied: a RuleError was expected")


def play_checked(game_no: int) -> int:
    n = 1 + game_no % 5
    rng = SeededRandom(f"levels/{game_no}")
    levels = [rng.choice(("random", "basic")) for _ in range(n)]
    seed = f"random-play/{game_no}"
    state, events = new_game([(f"p{i}", level) for i, level in enumerate(levels)], seed)
    deck = deck_for(n)
    views = [public_view(state)]
    actions = 0
    while (seat := to_act(state)) is not None:
        listed = legal_actions(state, seat)
        assert listed, f"game {game_no}: seat {seat} must decide but has no legal action"
        for action in listed:  # every listed action applies
            after, _ = apply(state, seat, action)
            assert after.version == state.version + 1
        keys = {listed_key(a) for a in listed}
        for probe in unlisted_probes(state, seat, rng):
            if listed_key(probe) not in keys:
                refusal(state, seat, probe)
        for other in range(n):
            if other != seat:
                assert refusal(state, other, listed[0]).code == "not_your_turn"
        view = information_state(state)
        action = BOTS[levels[seat]](view, seat, rng)
        state, produced = apply(state, seat, action)
        events.extend(produced)
        actions += 1
        found = violations(state, deck)
        assert not found, f"game {game_no} after {action!r}: {found}"
        views.append(public_view(state))
        assert actions < 5000, f"game {game_no} does not end"
    assert state.phase == "finished"
    assert state.results is not None
    assert len(state.results) == n
    assert any(r.winner for r in state.results)
    rebuilt = list(replay(events))
    assert rebuilt == views, f"game {game_no}: the event log does not rebuild the public state"
    encoded = msgspec.json.encode([views, events])
    assert b'"draw_pile"' not in encoded
    assert b'"seed"' not in encoded
    assert seed.encode() not in encoded
    return actions


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_games_keep_every_invariant(chunk: int) -> None:
    per_chunk = GAMES // CHUNKS
    total = sum(play_checked(g) for g in range(chunk * per_chunk, (chunk + 1) * per_chunk))
    assert total > per_chunk * 10  # games really were played
