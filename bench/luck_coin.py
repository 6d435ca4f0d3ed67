"""Would counting the random bot's coin as luck take more of the results' spread out? Research
for the luck-adjusted results (`domain.bots.review`), measured against the luck in use.

    PYTHONPATH=. .venv/bin/python bench/luck_coin.py [--games 400] [--jobs 2]

AIVAT (Burch et al. 2018), whose control variate the review's luck is, counts as chance not
only the cards but every action of a player whose policy is known: the term is the value of
the action taken less the policy's expectation of it. The service knows one such policy, the
random bot's (uniform over the unpriced legal actions, `basic.random_bot`). This plays
four-player games of the four levels (seats rotated, seeds `luck-coin/i`), reviews each, and
at every decision of a random seat with a choice adds, for every seat, the value (`luck.value`,
the review's value of the cards) of the position the action taken leads to less the mean over
the legal actions: a draw is worth the draw's expectation over the cards (`luck.outcome`),
any other action the position it leads to with what needs no chance played out
(`master.settle`). The term has expectation 0 whatever the value, as the cards' luck has.

Prints the variance of the margins (about each level's mean in its lineup) left by the
review's luck, and by the luck and the coin together, over the margins' own, in all and per
level. Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from domain.bots import luck
from domain.bots.master import settle
from domain.bots.review import _chosen, _draw_values, _mean, _steps, review
from domain.bots.simulation import play_game
from domain.game.engine import apply
from domain.game.legal import legal_actions, with_payment
from domain.game.model import Action, Bid, Buy, Draw, GameState

LEVELS = ("random", "basic", "expert", "master")
Row = tuple[int, str, float, float, float]  # lineup, level, margin, luck, coin


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
    lineup = i % len(LEVELS)
    levels = LEVELS[lineup:] + LEVELS[:lineup]
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
    return [
        (lineup, levels[s], seats[s].margin, seats[s].luck, coin[s]) for s in range(len(levels))
    ]


def left(rows: list[Row], taken: int) -> float:
    """The variance left (about each level's mean in its lineup) with `taken` of the luck
    and the coin out (0: none, 1: the luck, 2: both), over the margins'."""
    groups: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for lineup, level, margin, card_luck, coin in rows:
        out = (0.0, card_luck, card_luck + coin)[taken]
        groups.setdefault((lineup, level), []).append((margin, margin - out))
    raw: list[float] = []
    adjusted: list[float] = []
    for members in groups.values():
        for column, into in ((0, raw), (1, adjusted)):
            mean = statistics.fmean(m[column] for m in members)
            into.extend(m[column] - mean for m in members)
    return statistics.fmean(x * x for x in adjusted) / statistics.fmean(x * x for x in raw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = [row for game in pool.map(game_rows, range(args.games)) for row in game]
    print(f"{args.games} games of {', '.join(LEVELS)} (seats rotated), reviewed and the coin "
          f"counted in {time.perf_counter() - started:.0f} s")  # fmt: skip
    print("| seats | variance left: luck | luck and coin |")
    print("|---|---|---|")
    print(f"| all | {left(rows, 1):.3f} | {left(rows, 2):.3f} |")
    for level in LEVELS:
        mine = [r for r in rows if r[1] == level]
        print(f"| {level} | {left(mine, 1):.3f} | {left(mine, 2):.3f} |")


if __name__ == "__main__":
    main()
