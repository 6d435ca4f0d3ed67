"""Would a richer value of the cards take more of the results' spread out? Research for the
luck's value (`domain.bots.luck`), measured on held-out games, against the one in use.

    PYTHONPATH=. .venv/bin/python bench/luck_values.py [--players 4] [--games 300] \
        [--held-out 150] [--jobs 2] [--cache /tmp/ten-luck-values]
    python3 bench/luck_values.py --gbm [--cache ...]   # numpy and scikit-learn, see below

Plays self-play games as `bench/train_luck.py` does (seeds `luck-train/...` to fit,
`luck-test/...` to measure; tables of one level at every seat, `equal`, and of the four
levels with the seats rotated, `mixed`). At every card drawn it settles every card the draw
could bring (`luck.outcome`) and keeps, per seat, twelve raw counts of each position
(`RAW`: the seven of `luck.FEATURES`, then currency tokens, cards held, the points one
affordable card of the market would add, the same for any card, and the seat's turns until
it acts), the cards' probabilities and the card drawn; and each seat's final margin. Kept
in `--cache` (a pickle per set of games; delete it to play again).

Then, each value's luck (the drawn card's value less the values' expectation over the
cards, summed over a game) is taken out of the margins of the held-out games, and it prints
the variance left over the margins' (about each level's mean in its lineup), for tables of
both kinds:

- linear values, `train_luck.py`'s fit (least squares of the margins on the summed
  differences of the features): the seven features at the pile's two ends (the value in
  use, refitted here), at three and five points of the pile (hat functions), with the five
  other counts, with each seat's distance to the best other seat in points and power, with
  signed squares; each fitted on equal tables (as today) and on equal and mixed ones;
- `--gbm`: a gradient-boosted regression (scikit-learn's `HistGradientBoostingRegressor`)
  of a seat's final margin on the position the drawn card led to (its twelve counts, the
  other seats' mean and the differences, the best other seat's points and power, the
  pile's share), trained on every draw of the training games, its values centred over the
  seats. That step needs numpy and scikit-learn, which the project does not: run it with
  any Python that has them (`python3 -m venv /tmp/gbm && /tmp/gbm/bin/pip install numpy
  scikit-learn`); it reads only the cache.

Whatever the value, the luck has expectation 0 (a control variate); these figures say only
how much of the spread each would take out. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from array import array
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the domain is imported where it runs: --gbm reads the cache without it
    from domain.game.model import GameState

RAW = (
    "points",
    "power",
    "spare",
    "distinct",
    "wilds",
    "near",
    "bust",
    "currency",
    "cards",
    "gain",  # the most points one affordable card of the market adds (price <= power + cards)
    "gain_any",  # the same for any card of the market
    "turns",  # seats to the left of the one to act
)
K = len(RAW)
# the linear values' candidates per seat: the RAW counts less the other seats' mean (12),
# points and power less the best other seat's (2), signed squares of the first two (2)
CANDIDATES = K + 4
SCHEMES = (2, 3, 5)  # points of the pile's share the linear weights are read at


def hats(share: float, points: int) -> list[float]:
    """Hat functions of the pile's share at `points` evenly spaced points (2: its two ends)."""
    if points == 2:
        return [1 - share, share]
    return [max(0.0, 1 - abs(share - j / (points - 1)) * (points - 1)) for j in range(points)]


def raw(position: GameState) -> list[list[float]]:
    """Each seat's RAW counts of `position`."""
    from domain.bots.luck import features
    from domain.game.scoring import cached_best_total

    bonus = position.rules.perfect_bonus
    n = len(position.players)
    market = set(position.market)
    out = []
    for s, p in enumerate(position.players):
        f = list(features(p, bonus))
        owned = set(p.cards)
        afford = p.bidding_power + len(p.cards)
        gain = gain_any = 0
        for c in market:
            if c in owned:
                continue
            g = cached_best_total((*p.cards, c), bonus) - int(f[0])
            gain_any = max(gain_any, g)
            if int(c[1]) <= afford:
                gain = max(gain, g)
        turns = (s - position.active_seat) % n
        out.append(
            [*f, float(p.currency), float(len(p.cards)), float(gain), float(gain_any), float(turns)]
        )
    return out


def candidates(counts: list[list[float]]) -> list[list[float]]:
    """Each seat's CANDIDATES from the seats' RAW counts."""
    from domain.game.results import margins as seat_margins

    n = len(counts)
    rel = list(zip(*(seat_margins(column) for column in zip(*counts, strict=True)), strict=True))
    out = []
    for s in range(n):
        others = [counts[t] for t in range(n) if t != s]
        best = [counts[s][k] - (max(o[k] for o in others) if others else 0.0) for k in (0, 1)]
        out.append([*rel[s], *best, rel[s][0] * abs(rel[s][0]), rel[s][1] * abs(rel[s][1])])
    return out


def game(args: tuple[int, int, str, str]) -> dict:
    """One game's record: levels (with the lineup for a mixed table), final margins, each
    draw's (share, probabilities, index drawn, RAW of every outcome as float32 bytes), and
    per scheme and seat the summed differences of the candidates at the scheme's points."""
    from train_luck import levels_of

    from domain.bots.luck import outcome, pile_share
    from domain.bots.odds import chance_outcomes
    from domain.bots.simulation import play_game
    from domain.bots.winning import margins
    from domain.game.engine import evolve
    from domain.game.model import CardDrawn

    n, i, stem, kind = args
    levels = levels_of(n, i, kind)
    sim = play_game(levels, f"{stem}/{n}/{i}" if kind == "equal" else f"{stem}/{kind}/{n}/{i}")
    sums = {k: [[0.0] * (CANDIDATES * k) for _ in range(n)] for k in SCHEMES}
    draws = []
    state = None
    for event in sim.events:
        if state is not None and type(event) is CardDrawn:
            share, outcomes = pile_share(state), chance_outcomes(state)
            cards = [c for c, _ in outcomes]
            if event.card in cards:
                counts = {c: raw(outcome(state, event.seat, c)) for c in cards}
                cand = {c: candidates(counts[c]) for c in cards}
                for s in range(n):
                    delta = [
                        cand[event.card][s][j] - sum(float(p) * cand[c][s][j] for c, p in outcomes)
                        for j in range(CANDIDATES)
                    ]
                    for k in SCHEMES:
                        h = hats(share, k)
                        row = sums[k][s]
                        for j in range(CANDIDATES):
                            for q in range(k):
                                row[j * k + q] += delta[j] * h[q]
                buf = array("f", [x for c in cards for seat in counts[c] for x in seat])
                probs = [float(p) for _, p in outcomes]
                draws.append((share, probs, cards.index(event.card), buf.tobytes()))
        state = evolve(state, event)
    lineup = "" if kind == "equal" else "/" + ",".join(sorted(levels))
    return {
        "levels": [level + lineup for level in levels],
        "final": list(margins(state)),
        "kind": kind,
        "sums": sums,
        "draws": draws,
    }


def games(n: int, count: int, stem: str, jobs: int, cache: Path) -> list[dict]:
    path = cache / f"{stem}-{n}-{count}.pickle"
    if path.exists():
        return pickle.loads(path.read_bytes())
    t0 = time.perf_counter()
    args = [(n, i, stem, kind) for kind in ("equal", "mixed") for i in range(count)]
    with ProcessPoolExecutor(jobs) as pool:
        played = list(pool.map(game, args, chunksize=2))
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(played))
    print(f"played {len(played)} games ({stem}) in {time.perf_counter() - t0:.0f} s -> {path}")
    return played


def rows(played: list[dict], points: int = 2, columns: tuple[int, ...] = ()) -> list:
    """`train_luck.Row`s of every seat (level, final margin, regressors: the summed
    differences of `columns` at `points` points of the pile; no luck of their own)."""
    return [
        (level, m, [seat[j * points + q] for j in columns for q in range(points)], 0.0, 0.0)
        for g in played
        for level, m, seat in zip(g["levels"], g["final"], g["sums"][points], strict=True)
    ]


def ratios(played: list[dict], luck: list[float]) -> str:
    """The variance of the margins less the luck over theirs (each about its level's mean in
    its lineup: `train_luck.spread`), per kind of table."""
    from train_luck import spread

    kind = _kinds(played)
    seats = rows(played)
    parts = []
    for k in ("equal", "mixed"):
        chosen = [i for i, ki in enumerate(kind) if ki == k]
        ratio = spread([seats[i] for i in chosen], [luck[i] for i in chosen])[2]
        parts.append(f"{k} {ratio:.3f}")
    return ", ".join(parts)


LINEAR = (  # name, candidate columns, points of the pile
    ("the seven features, two ends (in use)", tuple(range(7)), 2),
    ("the seven, three points", tuple(range(7)), 3),
    ("the seven, five points", tuple(range(7)), 5),
    ("the twelve counts, three points", tuple(range(K)), 3),
    ("twelve + distance to the best seat", (*range(K), K, K + 1), 3),
    ("twelve + signed squares", (*range(K), K + 2, K + 3), 3),
    ("all sixteen, three points", tuple(range(CANDIDATES)), 3),
    ("all sixteen, five points", tuple(range(CANDIDATES)), 5),
)


def linear(train: list[dict], test: list[dict]) -> None:
    from train_luck import fit

    for name, columns, points in LINEAR:
        fitting, held = rows(train, points, columns), rows(test, points, columns)
        for fitted_on in ("equal", "equal,mixed"):
            w = fit([row for row, g in zip(fitting, _kinds(train), strict=True) if g in fitted_on])
            luck = [sum(wi * xi for wi, xi in zip(w, row[2], strict=True)) for row in held]
            print(
                f"{name:42s} {len(w):3d} weights, fitted on {fitted_on:11s}: {ratios(test, luck)}",
                flush=True,
            )


def _kinds(played: list[dict]) -> list[str]:
    return [g["kind"] for g in played for _ in g["final"]]


def gbm(train: list[dict], test: list[dict]) -> None:
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingRegressor

    def inputs(f: np.ndarray, share: float) -> np.ndarray:
        n = f.shape[-2]
        others = (f.sum(-2, keepdims=True) - f) / max(n - 1, 1)
        best = np.stack([np.delete(f, s, axis=-2).max(-2) for s in range(n)], -2)[..., :2]
        pile = np.full((*f.shape[:-1], 1), share, np.float32)
        return np.concatenate([f, others, f - others, best, pile], -1)

    def positions(g: dict):
        n = len(g["final"])
        for share, probs, drawn, buf in g["draws"]:
            yield (
                share,
                np.array(probs),
                drawn,
                np.frombuffer(buf, np.float32).reshape(len(probs), n, K),
            )

    for fitted_on in ("equal", "equal,mixed"):
        xs, ys = [], []
        for g in train:
            if g["kind"] in fitted_on:
                for share, _, drawn, f in positions(g):
                    xs.append(inputs(f[drawn], share))
                    ys.append(np.array(g["final"]))
        x, y = np.concatenate(xs), np.concatenate(ys)
        for rounds, leaves in ((200, 15), (400, 31)):
            model = HistGradientBoostingRegressor(
                max_iter=rounds, learning_rate=0.05, max_leaf_nodes=leaves, random_state=0
            ).fit(x, y)
            luck = []
            for g in test:
                total = np.zeros(len(g["final"]))
                for share, probs, drawn, f in positions(g):
                    v = model.predict(inputs(f, share).reshape(-1, x.shape[1])).reshape(f.shape[:2])
                    v -= v.mean(1, keepdims=True)
                    total += v[drawn] - probs @ v
                luck.extend(total.tolist())
            name = f"boosted trees, {rounds} x {leaves} leaves ({len(y)} positions)"
            print(f"{name:42s}      fitted on {fitted_on:11s}: {ratios(test, luck)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=300, help="training games of each kind")
    parser.add_argument("--held-out", type=int, default=150, help="held-out games of each kind")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ten-luck-values"))
    parser.add_argument(
        "--gbm", action="store_true", help="the boosted trees (numpy, scikit-learn)"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # train_luck, run from anywhere
    train = games(args.players, args.games, "luck-train", args.jobs, args.cache)
    test = games(args.players, args.held_out, "luck-test", args.jobs, args.cache)
    print(
        f"{args.players} players; fitted on {len(train)} games, held out {len(test)}; "
        "variance of the margin less the luck over the margin's, held out:"
    )
    if args.gbm:
        gbm(train, test)
    else:
        linear(train, test)


if __name__ == "__main__":
    main()
