"""`ten-sim`: play N games between bots and print what rule variants and bots do.

python -m service.simulator --games 1000 --players 4 --bots random,basic --seed 1
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

from domain.model import Busted, Rules, TurnStarted
from domain.simulation import play_game


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ten-sim", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    parser.add_argument("--players", type=int, default=4, choices=range(1, 6))
    parser.add_argument(
        "--bots",
        default="random",
        help="bot level per seat, comma separated; cycled over the seats (default random)",
    )
    parser.add_argument("--seed", default="1", help="base seed; game i uses '<seed>/<i>'")
    parser.add_argument("--perfect-bonus", type=int, default=1)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    levels = [level.strip() for level in args.bots.split(",") if level.strip()]
    bots = [levels[i % len(levels)] for i in range(args.players)]
    rules = Rules(perfect_bonus=args.perfect_bonus)
    scores: list[list[int]] = [[] for _ in bots]
    wins = [0.0] * len(bots)
    actions = turns = busts = ties = 0
    started = time.perf_counter()
    for i in range(args.games):
        game = play_game(bots, f"{args.seed}/{i}", rules=rules)
        actions += game.actions
        turns += sum(isinstance(e, TurnStarted) for e in game.events)
        busts += sum(isinstance(e, Busted) for e in game.events)
        results = game.state.results or ()
        winners = [r.seat for r in results if r.winner]
        ties += len(winners) > 1
        for r in results:
            scores[r.seat].append(r.score)
        for seat in winners:
            wins[seat] += 1 / len(winners)
    elapsed = time.perf_counter() - started
    print(f"games            {args.games} ({args.players} players: {', '.join(bots)})")
    print(f"games per second {args.games / elapsed:,.1f}")
    print(f"actions per game {actions / args.games:.1f}")
    print(f"bust rate        {busts / max(turns, 1):.3f} of turns")
    print(f"tied games       {ties / args.games:.3f}")
    for seat, level in enumerate(bots):
        print(
            f"seat {seat} {level:<7} mean score {statistics.fmean(scores[seat]):6.2f}"
            f"  win share {wins[seat] / args.games:.3f}"
        )


if __name__ == "__main__":
    main()
