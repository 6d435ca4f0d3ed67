"""Learn `domain.bots.luck`'s weights from self-play, and say how much of the results'
spread the luck they give takes out on games they were not fitted on.

    PYTHONPATH=. .venv/bin/python bench/train_luck.py [--games 240] [--held-out 120] \
        [--players 1,2,3,4,5] [--jobs 2] [--write]

For each player count, `--games` games (seeds `luck-train/{n}/{i}`) are played with the
simulator, each with one level at every seat (basic, expert, master in turn): what the luck
is for is telling apart players of about the same strength, and at such tables the spread
of the results is the cards' and the decisions' noise, not a difference of strength (a
table of mixed levels adds that difference, which no luck explains and which drowns the
fit). At every card drawn, each seat's `luck.relative_features` of the position the
card led to (`luck.outcome`) less their expectation over the cards the draw could bring;
summed over a game (each times the share of the pile left and its complement: the
weights' two ends), they are the regressors of the seat's final margin less the mean
margin of its level at that player count. `WEIGHTS[n]` is the least-squares fit (a small
ridge keeps it defined). The weights have no effect on the luck's expectation (0 whatever
they are); they decide how much spread it explains.

On `--held-out` other games (seeds `luck-test/{n}/{i}`) it prints, per player count, the
variance of the final margin (less its level's mean) and of the margin less the luck, their
ratio, and the same with the weights in use (`luck_table.WEIGHTS`) and with the luck the
review counted before any weights (the drawer's better stop after the card, unsettled, by
`winning.margins`), each on held-out tables of both kinds (`--tables`: the kinds fitted on;
`mixed`, levels of MIXED in turn with the seats rotated, each seat's margin centred on its
level's mean in that lineup). `--write` writes the weights
to `domain/bots/luck_table.py`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from domain.bots.luck import FEATURES, outcome, pile_share, relative_features, value
from domain.bots.luck_table import WEIGHTS
from domain.bots.odds import chance_outcomes
from domain.bots.simulation import play_game
from domain.bots.winning import margins
from domain.game.engine import apply, evolve, to_act
from domain.game.legal import legal_actions
from domain.game.linear import solve
from domain.game.model import CardDrawn, Draw, GameState, Stop

TABLE = Path(__file__).resolve().parent.parent / "domain" / "bots" / "luck_table.py"
EQUAL = ("basic", "expert", "master")
MIXED = ("random", "basic", "expert", "master")  # a mixed table: these, in turn, seats rotated
RIDGE = 1e-3
F = len(FEATURES)

# one seat of one game: its level, final margin, regressors (2F), the review's luck with
# the weights in use, and the luck the review counted before the weights
Row = tuple[str, float, list[float], float, float]


def levels_of(n: int, i: int, kind: str = "equal") -> list[str]:
    """Game i's levels by seat: one level at every seat (`equal`), or `mixed`: n levels of
    MIXED in turn from the i-th, then the seats rotated game by game."""
    if kind == "equal":
        return [EQUAL[i % len(EQUAL)]] * n
    start = (i // n) % len(MIXED)
    chosen = [MIXED[(start + k) % len(MIXED)] for k in range(n)]
    return chosen[i % n :] + chosen[: i % n]


def _before_weights(state: GameState, seat: int, card: str) -> tuple[float, ...]:
    """The margins the review valued a card by before the weights: drawn, unsettled, and
    the drawer's better stop if it may stop (for the comparison only)."""
    after, _ = apply(state, seat, Draw(), card=card)
    if after.phase == "draw" and after.drawn and to_act(after) == seat:
        stops = [
            margins(apply(after, seat, a)[0]) for a in legal_actions(after, seat) if type(a) is Stop
        ]
        return max(stops, key=lambda m: m[seat])
    return margins(after)


def game_rows(args: tuple[int, int, str, str]) -> list[Row]:
    n, i, stem, kind = args
    levels = levels_of(n, i, kind)
    seed = f"{stem}/{n}/{i}" if kind == "equal" else f"{stem}/{kind}/{n}/{i}"
    sim = play_game(levels, seed)
    x = [[0.0] * (2 * F) for _ in range(n)]
    luck = [0.0] * n
    before = [0.0] * n
    state: GameState | None = None
    for event in sim.events:
        if state is not None and type(event) is CardDrawn:
            seat, share = event.seat, pile_share(state)
            outcomes = chance_outcomes(state)
            cards = dict(outcomes)
            if event.card in cards:
                positions = {c: outcome(state, seat, c) for c, _ in outcomes}
                feats = {c: relative_features(pos) for c, pos in positions.items()}
                vals = {c: value(pos, share) for c, pos in positions.items()}
                old = {c: _before_weights(state, seat, c) for c, _ in outcomes}
                for s in range(n):
                    for f in range(F):
                        delta = feats[event.card][s][f] - sum(
                            float(p) * feats[c][s][f] for c, p in outcomes
                        )
                        x[s][2 * f] += delta * (1 - share)
                        x[s][2 * f + 1] += delta * share
                    luck[s] += vals[event.card][s] - sum(float(p) * vals[c][s] for c, p in outcomes)
                    before[s] += old[event.card][s] - sum(float(p) * old[c][s] for c, p in outcomes)
        state = evolve(state, event)
    assert state is not None
    final = margins(state)
    # the level a seat's margin is centred on: with the table's lineup (a mixed one)
    lineup = "" if kind == "equal" else "/" + ",".join(sorted(levels))
    return [(levels[s] + lineup, final[s], x[s], luck[s], before[s]) for s in range(n)]


def centred(rows: list[Row]) -> list[float]:
    """Each seat's final margin less the mean of its level's (at this player count)."""
    by_level: dict[str, list[float]] = {}
    for level, m, *_ in rows:
        by_level.setdefault(level, []).append(m)
    means = {level: statistics.fmean(ms) for level, ms in by_level.items()}
    return [m - means[level] for level, m, *_ in rows]


def fit(rows: list[Row]) -> list[float]:
    """Least squares (ridge RIDGE) of the centred margins on the regressors."""
    y = centred(rows)
    p = len(rows[0][2])  # 2 F here; another bench's bases (luck_values.py) have their own
    a = [[RIDGE if r == c else 0.0 for c in range(p)] for r in range(p)]
    b = [0.0] * p
    for (_, _, x, _, _), yi in zip(rows, y, strict=True):
        for r in range(p):
            b[r] += x[r] * yi
            for c in range(p):
                a[r][c] += x[r] * x[c]
    return solve(a, b)


def spread(rows: list[Row], luck: list[float]) -> tuple[float, float, float]:
    y = centred(rows)
    raw = statistics.pvariance(y)
    adjusted = statistics.pvariance([a - b for a, b in zip(y, luck, strict=True)])
    return raw, adjusted, adjusted / raw


def play(n: int, games: int, stem: str, jobs: int, kinds: tuple[str, ...]) -> list[Row]:
    with ProcessPoolExecutor(jobs) as pool:
        return [
            row
            for rows in pool.map(
                game_rows, [(n, i, stem, kind) for kind in kinds for i in range(games)]
            )
            for row in rows
        ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=240)
    parser.add_argument("--held-out", type=int, default=120)
    parser.add_argument("--players", default="1,2,3,4,5")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--tables",
        default="equal",
        help="the tables fitted on: equal (one level at every seat), mixed, or equal,mixed",
    )
    args = parser.parse_args()
    kinds = tuple(args.tables.split(","))
    table: dict[int, list[tuple[float, float]]] = {}
    for n in (int(x) for x in args.players.split(",")):
        t0 = time.perf_counter()
        rows = play(n, args.games, "luck-train", args.jobs, kinds)
        w = fit(rows)
        weights = [(round(w[2 * f], 4), round(w[2 * f + 1], 4)) for f in range(F)]
        table[n] = weights
        print(
            f"{n} players: weights (pile empty, pile full) "
            + ", ".join(
                f"{name} {a:+.3f} {b:+.3f}" for name, (a, b) in zip(FEATURES, weights, strict=True)
            )
        )
        for kind in ("equal", "mixed"):  # held out: both kinds, whichever were fitted on
            test = play(n, args.held_out, "luck-test", args.jobs, (kind,))
            fitted = [sum(wi * xi for wi, xi in zip(w, x, strict=True)) for _, _, x, _, _ in test]
            raw, adj, ratio = spread(test, fitted)
            _, in_use, in_use_ratio = spread(test, [row[3] for row in test])
            _, old_adj, old_ratio = spread(test, [row[4] for row in test])
            print(
                f"  held out, {kind} tables ({args.held_out} games, {len(test)} seats): variance "
                f"of the margin {raw:.2f}; less the luck {adj:.2f} (ratio {ratio:.3f}); less "
                f"the luck of the weights in use {in_use:.2f} (ratio {in_use_ratio:.3f}); less "
                f"the luck counted before {old_adj:.2f} (ratio {old_ratio:.3f}); "
                f"{time.perf_counter() - t0:.0f} s",
                flush=True,
            )
    if args.write:
        write(table, " ".join(sys.argv[1:]))


def write(table: dict[int, list[tuple[float, float]]], argv: str) -> None:
    lines = [
        f'"""`domain.bots.luck`\'s weights, written by `bench/train_luck.py {argv}` (do not edit).',
        "",
        'WEIGHTS[n][f]: for n players, feature f\'s (`luck.FEATURES`) weight (pile empty, pile full)."""',
        "",
        "WEIGHTS: dict[int, tuple[tuple[float, float], ...]] = {",
    ]
    kept = {n: list(w) for n, w in WEIGHTS.items()}  # the player counts not trained now stay
    kept.update(table)
    for n in sorted(kept):
        lines.append(f"    {n}: (")
        lines.extend(f"        ({a!r}, {b!r})," for a, b in kept[n])
        lines.append("    ),")
    lines.append("}")
    TABLE.write_text("\n".join(lines) + "\n")
    print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()
