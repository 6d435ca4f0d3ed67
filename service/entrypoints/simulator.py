"""`ten-sim`: compare bots over duplicate deals with the seats rotated.

python -m service.entrypoints.simulator --games 2000 --players 2 --bots expert,basic --seed 1

The lineup (`--bots`, cycled over the seats) plays duplicate deals: for deal `d` every
distinct rotation of the lineup over the seats plays the same game seed `<seed>/<d>`,
hence the same shuffled deck and the same starting seat, so each bot plays the same
cards from every seat and luck of the deal cancels out. `--games` is rounded up to whole
deals. Games are spread over `--workers` processes; the figures do not depend on how
many (each game is determined by its seed and lineup).

Printed: games per second, actions per game, the bust rate (busts per turn), the share
of tied games, mean score and win share per seat, and per bot level its win share per
seat it held (a tie split between the winners; par is 1 / players) with a 95% confidence
interval. The interval is a normal approximation over deals: each deal gives the level
one share (its wins over the deal's rotations divided by the seats it held), the deals
are independent while the rotations of one deal are not, so the interval is the mean
share +- 1.96 standard errors of the per-deal shares.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Sequence
from multiprocessing import Pool

import msgspec

from domain.bots.simulation import play_game
from domain.game.model import BOT_LEVELS, Busted, Rules, TurnStarted


class GameSummary(msgspec.Struct, frozen=True):
    bots: tuple[str, ...]
    actions: int
    turns: int
    busts: int
    scores: tuple[int, ...]
    shares: tuple[float, ...]  # the win share of each seat (ties split)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ten-sim", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    parser.add_argument("--players", type=int, default=4, choices=range(1, 6))
    parser.add_argument(
        "--bots",
        default="random",
        help="bot level per seat, comma separated; cycled over the seats (default random)",
    )
    parser.add_argument("--seed", default="1", help="base seed; deal d uses '<seed>/<d>'")
    parser.add_argument("--perfect-bonus", type=int, default=1)
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: cores)"
    )
    return parser.parse_args(argv)


def rotations(lineup: Sequence[str]) -> list[tuple[str, ...]]:
    """The distinct rotations of a lineup over the seats, the lineup itself first."""
    out: list[tuple[str, ...]] = []
    for shift in range(len(lineup)):
        rotated = tuple(lineup[shift:]) + tuple(lineup[:shift])
        if rotated not in out:
            out.append(rotated)
    return out


def play_deal(lineup: tuple[str, ...], seed: str, perfect_bonus: int) -> list[GameSummary]:
    """Every rotation of the lineup on one deal (the same game seed)."""
    rules = Rules(perfect_bonus=perfect_bonus)
    summaries = []
    for bots in rotations(lineup):
        game = play_game(bots, seed, rules=rules)
        results = sorted(game.state.results or (), key=lambda r: r.seat)
        winners = sum(r.winner for r in results)
        summaries.append(
            GameSummary(
                bots=bots,
                actions=game.actions,
                turns=sum(isinstance(e, TurnStarted) for e in game.events),
                busts=sum(isinstance(e, Busted) for e in game.events),
                scores=tuple(r.score for r in results),
                shares=tuple(1 / winners if r.winner else 0.0 for r in results),
            )
        )
    return summaries


def _play_deal(job: tuple[tuple[str, ...], str, int]) -> list[GameSummary]:
    return play_deal(*job)


def level_shares(deal: list[GameSummary], level: str) -> float:
    """A level's win share per seat held over one deal's rotations."""
    won = sum(
        s for game in deal for bot, s in zip(game.bots, game.shares, strict=True) if bot == level
    )
    held = sum(game.bots.count(level) for game in deal)
    return won / held


def interval(shares: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% normal-approximation interval."""
    mean = statistics.fmean(shares)
    if len(shares) < 2:
        return mean, math.inf
    return mean, 1.96 * statistics.stdev(shares) / math.sqrt(len(shares))


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    levels = [level.strip() for level in args.bots.split(",") if level.strip()]
    lineup = tuple(levels[i % len(levels)] for i in range(args.players))
    unknown = sorted(set(lineup) - set(BOT_LEVELS))
    if unknown:  # refused here: a worker's RuleError does not cross the process boundary
        raise SystemExit(
            f"unknown bot levels: {', '.join(unknown)} (known: {', '.join(BOT_LEVELS)})"
        )
    per_deal = len(rotations(lineup))
    deals = max(1, -(-args.games // per_deal))
    jobs = [(lineup, f"{args.seed}/{d}", args.perfect_bonus) for d in range(deals)]
    started = time.perf_counter()
    if args.workers > 1:
        with Pool(args.workers) as pool:
            played = pool.map(_play_deal, jobs, chunksize=max(1, deals // (8 * args.workers)))
    else:
        played = [_play_deal(job) for job in jobs]
    elapsed = time.perf_counter() - started
    report(lineup, played, elapsed)


def report(lineup: tuple[str, ...], played: list[list[GameSummary]], elapsed: float) -> None:
    games = [game for deal in played for game in deal]
    n = len(games)
    print(f"games            {n} ({len(played)} deals x {len(games) // len(played)} rotations)")
    print(f"lineup           {', '.join(lineup)} (rotated over {len(lineup)} seats)")
    print(f"games per second {n / elapsed:,.1f}")
    print(f"actions per game {sum(g.actions for g in games) / n:.1f}")
    busts, turns = sum(g.busts for g in games), sum(g.turns for g in games)
    print(f"bust rate        {busts / max(turns, 1):.3f} of turns")
    print(f"tied games       {sum(max(g.shares) < 1 for g in games) / n:.3f}")
    for seat in range(len(lineup)):
        mean = statistics.fmean(g.scores[seat] for g in games)
        share = sum(g.shares[seat] for g in games) / n
        print(f"seat {seat}           mean score {mean:6.2f}  win share {share:.3f}")
    for level in dict.fromkeys(lineup):
        mean, half = interval([level_shares(deal, level) for deal in played])
        scores = [s for g in games for b, s in zip(g.bots, g.scores, strict=True) if b == level]
        print(
            f"bot {level:<8}     mean score {statistics.fmean(scores):6.2f}"
            f"  win share per seat {mean:.3f} +- {half:.3f} (95%; par {1 / len(lineup):.3f})"
        )


if __name__ == "__main__":
    main()
