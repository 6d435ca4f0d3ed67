"""Would counting the random bot's coin as luck take more of the results' spread out? Research
for the luck-adjusted results (`domain.bots.review`), measured against the luck in use.

    PYTHONPATH=. .venv/bin/python bench/luck_coin.py [--games 400] [--jobs 2]

AIVAT (Burch et al. 2018), whose control variate the review's luck is, counts as chance not
only the cards but every action of a player whose policy is known: the term is the value of
the action taken less the policy's expectation of it. The service knows one such policy, the
random bot's (uniform over the unpriced legal actions, `basic.random_bot`). This plays
`train_luck.py`'s mixed four-player tables (`levels_of`: the four levels, seats rotated;
seeds `luck-coin/i`), reviews each, and
at every decision of a random seat with a choice adds, for every seat, the value (`luck.value`,
the review's value of the cards) of the position the action taken leads to less the mean over
the legal actions: a draw is worth the draw's expectation over the cards (`luck.outcome`),
any other action the position it leads to with what needs no chance played out
(`master.settle`). The term has expectation 0 whatever the value, as the cards' luck has.

Prints the variance of the margins (about each level's mean, `train_luck.spread`) left by
the review's luck, and by the luck and the coin together, over the margins' own, in all and
per level. Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from domain.bots import luck
from domain.bots.master import settle
from domain.bots.review import _chosen, _draw_values, _mean, _steps, review
from domain.bots.simulation import play_game
from domain.game.engine import apply
from domain.game.legal import legal_actions, with_payment
from domain.game.model import Action, Bid, Buy, Draw, GameState

PLAYERS = 4
Row = tuple[str, float, float, float]  # level, margin, luck, coin (`train_luck.Row`'s first two)


def _unpriced(action: Action) -> Action:
    """The action as the random bot draws it (a bid or a buy names no payment)."""
    if type(action) is Bid:
        return Bid(amount=action.amount)
    if type(action) is Buy:
        return Buy(card=action.card)
    return action


def _values(state: GameState, seat: int, actions: list[Action]) -> list[tuple[float, ...]]:
    """Each seat's value of the position each action leads to (module docstring)."""
    share = luck.pile_share(state)
    return [
        _mean(_draw_values(state, seat).values())
        if type(a) is Draw
        else luck.value(settle(apply(state, seat, with_payment(state, seat, a))[0]), share)
        for a in actions
    ]


def game_rows(i: int) -> list[Row]:
    from train_luck import levels_of

    levels = levels_of(PLAYERS, i, "mixed")
    played = play_game(levels, f"luck-coin/{i}")
    seats = sorted(review(played.events).seats, key=lambda s: s.seat)
    coin = [0.0] * len(levels)
    for state, event in _steps(played.events):
        if event is None:
            continue
        seat: int = event.seat  # type: ignore[attr-defined]
        if state.players[seat].bot != "random":
            continue
        actions = legal_actions(state, seat, priced=False)
        if len(actions) < 2:
            continue
        values = _values(state, seat, actions)
        chosen = values[actions.index(_unpriced(_chosen(event)))]
        for s in range(len(levels)):
            coin[s] += chosen[s] - statistics.fmean(v[s] for v in values)
    return [(levels[s], seats[s].margin, seats[s].luck, coin[s]) for s in range(len(levels))]


def left(rows: list[Row]) -> tuple[float, float]:
    """The variance left (`train_luck.spread`) with the luck out, and with the luck and the
    coin out, over the margins'."""
    from train_luck import spread

    return (
        spread(rows, [r[2] for r in rows])[2],
        spread(rows, [r[2] + r[3] for r in rows])[2],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # train_luck, run from anywhere
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = [row for game in pool.map(game_rows, range(args.games)) for row in game]
    print(f"{args.games} mixed tables of {PLAYERS}, reviewed and the coin counted in "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    print("| seats | variance left: luck | luck and coin |")
    print("|---|---|---|")
    print("| all | {:.3f} | {:.3f} |".format(*left(rows)))
    for level in sorted({r[0] for r in rows}):
        print("| {} | {:.3f} | {:.3f} |".format(level, *left([r for r in rows if r[0] == level])))


if __name__ == "__main__":
    main()
