"""Learn `domain.bots.winning`'s table from self-play, and say how well it predicts.

    .venv/bin/python bench/train_win_chances.py [--games 200] [--held-out 100] [--write]

For each player count 2-5, `--games` games of `expert` bots are played with the simulator
(seeds `win-train/{n}/{i}`); at the start of every turn the seats' equities
(`expert.equity`) and the share of the pile left are kept, with the game's result (1 shared
among the winners). `beta` of `domain.bots.winning` is fitted per player count as a piecewise
linear function of the pile's share (`KNOTS` knots) by maximum likelihood (Newton's method,
with a small penalty on the difference of neighbouring knots so that sparse knots follow
their neighbours). Then `--held-out` other games (seeds `win-test/{n}/{i}`) are predicted:
the mean log loss and Brier score of the model against the uniform guess (1/n each), and
the calibration (predicted against observed win share, by decile of the prediction).
`--write` writes the table to `domain/bots/win_table.py`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from domain.bots.expert import equity
from domain.bots.simulation import play_game
from domain.bots.win_table import KNOTS
from domain.bots.winning import chances, interpolated, knot
from domain.game.cards import deck_for
from domain.game.linear import solve

SMOOTH = 2.0  # the penalty on (beta[k+1] - beta[k])**2 (in log-likelihood units)
TABLE = Path(__file__).resolve().parent.parent / "domain" / "win_table.py"

Sample = tuple[float, tuple[float, ...], tuple[float, ...]]  # share, equities, outcome


def samples(players: int, seeds: list[str]) -> list[Sample]:
    deck = len(deck_for(players))
    out: list[Sample] = []
    for seed in seeds:
        seen: list[tuple[float, tuple[float, ...]]] = []

        def keep(_before, _seat, _action, after, seen=seen) -> None:
            if after.phase == "draw" and not after.drawn:  # a turn starts
                bonus = after.rules.perfect_bonus
                seen.append(
                    (len(after.draw_pile) / deck, tuple(equity(p, bonus) for p in after.players))
                )

        game = play_game(["expert"] * players, seed, on_action=keep)
        assert game.state.results is not None
        winners = [r.seat for r in game.state.results if r.winner]
        outcome = tuple(1 / len(winners) if s in winners else 0.0 for s in range(players))
        out.extend((share, equities, outcome) for share, equities in seen)
    return out


def fit(data: list[Sample]) -> list[float]:
    table = [0.5] * KNOTS
    for _ in range(30):
        grad = [0.0] * KNOTS
        hess = [[0.0] * KNOTS for _ in range(KNOTS)]
        for share, equities, outcome in data:
            k, t = knot(share)
            p = chances(interpolated(table, share), equities)
            mean = sum(pi * e for pi, e in zip(p, equities, strict=True))
            g = sum(y * e for y, e in zip(outcome, equities, strict=True)) - mean
            h = -(sum(pi * e * e for pi, e in zip(p, equities, strict=True)) - mean * mean)
            for j, wj in ((k, 1 - t), (k + 1, t)):
                grad[j] += wj * g
                for i, wi in ((k, 1 - t), (k + 1, t)):
                    hess[j][i] += wj * wi * h
        for k in range(KNOTS - 1):  # the smoothness penalty
            d = table[k + 1] - table[k]
            grad[k] += 2 * SMOOTH * d
            grad[k + 1] -= 2 * SMOOTH * d
            hess[k][k] -= 2 * SMOOTH
            hess[k + 1][k + 1] -= 2 * SMOOTH
            hess[k][k + 1] += 2 * SMOOTH
            hess[k + 1][k] += 2 * SMOOTH
        step = solve(hess, grad)
        table = [max(b - s, 0.0) for b, s in zip(table, step, strict=True)]
        if max(abs(s) for s in step) < 1e-7:
            break
    return table


def report(players: int, table: list[float], data: list[Sample]) -> None:
    loss = brier = base_loss = base_brier = 0.0
    bins = [[0.0, 0.0, 0] for _ in range(10)]  # predicted sum, observed sum, count
    for share, equities, outcome in data:
        p = chances(interpolated(table, share), equities)
        for pi, y in zip(p, outcome, strict=True):
            loss -= y * math.log(max(pi, 1e-12))
            base_loss -= y * math.log(1 / players)
            brier += (pi - y) ** 2
            base_brier += (1 / players - y) ** 2
            b = bins[min(int(pi * 10), 9)]
            b[0] += pi
            b[1] += y
            b[2] += 1
    n = len(data)
    print(
        f"{players} players, {n} held-out positions: log loss {loss / n:.3f} "
        f"(uniform {base_loss / n:.3f}), Brier {brier / n:.3f} (uniform {base_brier / n:.3f})"
    )
    print(
        "  calibration (predicted -> observed, positions): "
        + ", ".join(f"{p / c:.2f}->{o / c:.2f} ({c})" for p, o, c in bins if c)
    )


def write(tables: dict[int, list[float]], command: str) -> None:
    rows = "\n".join(
        f"    {n}: ({', '.join(f'{b:.4f}' for b in table)})," for n, table in tables.items()
    )
    TABLE.write_text(
        f'''"""`domain.bots.winning`'s table, written by `{command}` (do not edit).

BETA[n][k]: beta for n players at the k-th of KNOTS knots of the pile's share left
(0, 0.1, ..., 1: the end of the pile first)."""

KNOTS = {KNOTS}
BETA: dict[int, tuple[float, ...]] = {{
    1: ({", ".join(["0.0"] * KNOTS)}),
{rows}
}}
'''
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--held-out", type=int, default=100)
    parser.add_argument("--write", action="store_true", help="write domain/bots/win_table.py")
    args = parser.parse_args()
    tables = {}
    for players in range(2, 6):
        start = time.process_time()
        train = samples(players, [f"win-train/{players}/{i}" for i in range(args.games)])
        test = samples(players, [f"win-test/{players}/{i}" for i in range(args.held_out)])
        tables[players] = table = fit(train)
        print(
            f"{players} players: {args.games} + {args.held_out} games, {len(train)} positions "
            f"fitted in {time.process_time() - start:.0f} s CPU; beta by pile share 0..1: "
            + " ".join(f"{b:.2f}" for b in table)
        )
        report(players, table, test)
        sys.stdout.flush()
    if args.write:
        write(tables, " ".join(["bench/train_win_chances.py", *sys.argv[1:]]))
        print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()
