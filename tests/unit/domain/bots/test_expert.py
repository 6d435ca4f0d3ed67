"""The `expert` bot: legal moves, the public view only, no randomness, replays.

Until "expert" is a `BotLevel` (a seat may then name it), these games seat humans and
play the expert's and the basic bot's moves for them (`drive`).
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from domain.bots.basic import BOTS, bot_rng
from domain.bots.expert import expert_bot
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.legal import legal_actions
from domain.game.model import Bid, Draw, GameState, Pass, Stop
from domain.game.rng import SeededRandom

PLAYERS = {"expert": expert_bot, "basic": BOTS["basic"]}


def drive(lineup: tuple[str, ...], seed: str, state: GameState | None = None) -> GameState:
    """A whole game whose seats play `lineup`'s bots, each move's random source from the
    seed and version as the service's (`bot_rng`)."""
    if state is None:
        state, _ = new_game([(f"p{i}", None) for i in range(len(lineup))], seed)
    while (seat := to_act(state)) is not None:
        move = PLAYERS[lineup[seat]](
            information_state(state), seat, bot_rng(state.seed, state.version)
        )
        state, _ = apply(state, seat, move)
    return state


@pytest.mark.parametrize("players", [1, 2, 4])
def test_the_expert_plays_whole_games_with_legal_moves_seen_only_through_the_view(
    players: int,
) -> None:
    """At every decision: its move is one of the seat's legal actions, and the same move
    comes from a state whose pile holds the same cards in another order (it cannot read
    the pile's order) and from another random source (it uses none)."""
    lineup = [("expert", "basic")[i % 2] for i in range(players)]
    state, _ = new_game([(f"b{i}", None) for i in range(players)], f"x/{players}")
    decisions = 0
    while (seat := to_act(state)) is not None:
        view = information_state(state)
        if lineup[seat] == "expert":
            action = expert_bot(view, seat, bot_rng(state.seed, state.version))
            assert action in legal_actions(view, seat)
            other = replace(state, draw_pile=tuple(reversed(state.draw_pile)))
            assert expert_bot(information_state(other), seat, SeededRandom("other")) == action
            decisions += 1
        else:
            action = BOTS["basic"](view, seat, bot_rng(state.seed, state.version))
        state, _ = apply(state, seat, action)
    assert decisions > 20
    assert state.results is not None


def test_a_game_of_experts_replays_exactly() -> None:
    lineup = ("expert", "expert", "basic")
    first, second = drive(lineup, "replay"), drive(lineup, "replay")
    assert first == second
    assert first.phase == "finished"


def test_the_expert_beats_basic_on_a_few_duplicate_deals() -> None:
    """A smoke test of strength (the figures come from the simulator, bench/README.md):
    over 6 deals played from both seats the expert wins more than half the games."""
    wins = 0.0
    for deal in range(6):
        for lineup in (("expert", "basic"), ("basic", "expert")):
            results = drive(lineup, f"strength/{deal}").results or ()
            winners = [r.seat for r in results if r.winner]
            wins += sum(1 / len(winners) for s in winners if lineup[s] == "expert")
    assert wins > 6


def test_the_expert_stops_on_a_tableau_that_busts_on_most_cards() -> None:
    """R5, B5 drawn (10 in numbers, no currency) onto runs R1-R4 and B1-B4: any number
    card busts; the expert keeps its two points, and takes them as numbers."""
    state, _ = new_game([("a", None), ("b", None)], "stop", starting_seat=0)
    held = ("R1", "R2", "R3", "R4", "B1", "B2", "B3", "B4")
    pile = [c for c in state.draw_pile if c not in {*held, "R5", "B5"}]
    state = replace(
        state,
        draw_pile=("R5", "B5", *pile),
        players=(replace(state.players[0], cards=held), state.players[1]),
    )
    for _ in range(2):
        state, _ = apply(state, 0, Draw())
    assert state.tableau == ("R5", "B5")
    action = expert_bot(information_state(state), 0, SeededRandom("s"))
    assert action == Stop(take="numbers")


def test_the_expert_draws_when_nothing_is_at_stake() -> None:
    """A first card of currency $1: stopping brings one token, drawing risks nearly
    nothing (the standard deck's unseen cards bust it with no chance)."""
    state, _ = new_game([("a", None), ("b", None)], "draw", starting_seat=0)
    state = replace(state, draw_pile=("$1", *[c for c in state.draw_pile if c != "$1"][:60]))
    state, _ = apply(state, 0, Draw())
    assert expert_bot(information_state(state), 0, SeededRandom("s")) == Draw()


def test_the_expert_answers_an_auction_with_a_bid_or_a_pass() -> None:
    view_state, _ = new_game([("a", None), ("b", None)], "auction", starting_seat=0)
    state = replace(view_state, draw_pile=("W#", *view_state.draw_pile))
    state, _ = apply(state, 0, Draw())
    assert state.phase == "auction"
    seat = to_act(state)
    assert seat == 1
    action = expert_bot(information_state(state), seat, SeededRandom("s"))
    assert type(action) in (Bid, Pass)
