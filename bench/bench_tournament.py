"""How many rounds a tournament needs to rank bots of known strength (issue 25):
`python bench/bench_tournament.py [--tournaments T] [--rounds R] [--cache PATH] [--luck]
[--formats swiss,round_robin] [--modes duplicate:matchpoints,duplicate:points,fresh:points]
[--ranked-by points|margin]` (`--formats` and `--modes` choose some; separate runs with
separate caches run side by side).

16 bot entrants, four of each level (master > expert > basic > random, the known order),
tables of 4, T tournaments per format (swiss, round_robin) and deal mode (duplicate with
the standings by matchpoints first, duplicate by place points first, fresh). Tournament i
has the seed `bench/{i}` in every format and mode and seeds its entrants in a shuffled
order (`bench/{i}/entrants`). After each round r = 1..R the standings are compared with
the known order:

- `gamma`: over the pairs of entrants of different levels, (concordant - discordant) /
  (concordant + discordant), a pair concordant when the higher-standing entrant has the
  stronger level. This is Kendall's tau-b between standing and level rank divided by its
  ceiling: with 16 entrants in 4 tied levels and no tied standings, tau-b is at most
  96 / sqrt(96 * 120) = 0.894, so tau-b itself never reaches 0.9.
- `tau_b`: Kendall's tau-b between standing position and level rank (ties in level).
- `levels`: Kendall's tau-b between the four levels ordered by their entrants' mean
  position and the known order (1 when the four levels come out in the right order).

Prints, per format and mode, the mean of each over the tournaments after each round (with
the half-width of its 95% interval, 1.96 standard errors, for gamma and levels), then one
table of the first round where each mean reaches 0.9, every format and mode side by side.

Then how much of a seat's luck a duplicate deal shares (`shared_luck`): each seat-game's
place points less the mean over every game played with the same level in that seat
against the same levels (the lineup's expectation), and the correlation of that residual
between two holders of the same seat of the same deal at tables with different lineups.
It is what duplicate scoring can remove: near 0 means the deal does not repeat a seat's
luck at another table (in TEN every table draws the same pile in the same order, but who
draws which card depends on every stop and bid before it).

Bots are deterministic on a deal (the random bot's stream comes from the deal's seed), so
games are cached by (deal seed, levels in seat order): duplicate tables with the same
levels in the same seats are one game; `--cache PATH` keeps that cache in a JSON file
(read at start, written as games are played) so a rerun replays nothing. No assertions: a
report. 16 tournaments x 10 rounds play about 3,200 distinct games, about 25 minutes of
a loaded machine's core without the cache (a game of four bots takes 0.1-0.8 s, the
master's the longest); from a full cache, about 2 minutes.

`--luck`: luck-adjusted standings too (`standings_by`, domain/tournaments/rules.py). Every
game is also reviewed (`domain.bots.review.review`: each seat's luck-adjusted rank and
score, about 2 s a game), the tournaments are paired as luck-adjusted ones are (swiss: by
the luck-adjusted standings), and after each round both standings, by results and
luck-adjusted, are computed from the same games and measured; the summary has a row for
each. The reviews' results are cached in `PATH.luck` beside `--cache` (delete it after a
change of the review's luck estimate: the games' cache stays valid, the bots being
deterministic).

`--levels master,expert,basic`: a field of those levels only (four entrants each, so 12),
to measure a field without random movers.

Every standings is measured ranked both ways (`Settings.ranked_by`): by place points
first, and by the summed game margins first; the Swiss rounds are paired by the standings
ranked as `--ranked-by` says (default points).

`--pairs`: gamma split by pair of levels too (each pair's share of concordant pairs, as
2p - 1), with gamma over every pair but expert-basic (the two levels the ratings' ladder
finds equal on results, `bench_ratings_luck.py`); and, over the games the tournaments
played, each level's mean game margin (a seat's score less the mean of its table's other
scores) with its standard deviation, by results and luck-adjusted: how far apart two
levels are on average against how much one game varies, which sets the rounds a pair
needs whatever the standings' arithmetic.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.bots.review import review
from domain.bots.simulation import play_game
from domain.game.rng import SeededRandom
from domain.tournaments.rules import (
    Adjusted,
    Entrant,
    Round,
    Settings,
    TableResult,
    margins,
    next_round,
    place_points,
    standings,
)

LEVELS = ("master", "expert", "basic", "random")  # the known order, strongest first
FORMATS = ("swiss", "round_robin")
# deal mode and the standings' first key in duplicate mode
MODES = (("duplicate", "matchpoints"), ("duplicate", "points"), ("fresh", "points"))
GOAL = 0.9
SAVE_EVERY = 50  # new games between writes of the cache file
Game = tuple[tuple[int, int], ...]  # per seat (rank, score)
Luck = tuple[tuple[int, float], ...]  # per seat (luck-adjusted rank, luck-adjusted score)
BY = ("results", "luck_adjusted")  # the standings measured with --luck
RANKED_BY = ("points", "margin", "strength")  # the standings' first key, each measured
Kind = tuple[str, str]  # (standings_by, ranked_by)


class Cache:
    """Games by (deal seed, levels in seat order), optionally kept in a JSON file; with
    `luck`, each game's luck-adjusted results too (kept in `PATH.luck`)."""

    def __init__(self, path: str | None, luck: bool = False) -> None:
        self.path = path
        self.luck = luck
        self.games: dict[tuple[str, tuple[str, ...]], Game] = {}
        self.adjusted: dict[tuple[str, tuple[str, ...]], Luck] = {}
        self.new = 0
        for rows, into in (
            (self._rows(path), self.games),
            (self._rows(self.luck_path), self.adjusted),
        ):
            for deal, levels, seats in rows:
                into[(deal, tuple(levels))] = tuple((r, s) for r, s in seats)

    @property
    def luck_path(self) -> str | None:
        return f"{self.path}.luck" if self.path and self.luck else None

    @staticmethod
    def _rows(path: str | None) -> list:
        return msgspec.json.decode(Path(path).read_bytes()) if path and os.path.exists(path) else []

    def play(self, deal: str, levels: tuple[str, ...]) -> Game:
        key = (deal, levels)
        if key not in self.games or (self.luck and key not in self.adjusted):
            game = play_game(levels, deal)
            results = sorted(game.state.results, key=lambda r: r.seat)
            self.games[key] = tuple((r.rank, r.score) for r in results)
            if self.luck:
                seats = sorted(review(game.events).seats, key=lambda s: s.seat)
                self.adjusted[key] = tuple((s.adjusted_rank, s.adjusted_score) for s in seats)
            self.new += 1
            if self.new % SAVE_EVERY == 0:
                self.save()
        return self.games[key]

    def save(self) -> None:
        for path, kept in ((self.path, self.games), (self.luck_path, self.adjusted)):
            if not path:
                continue
            rows = [(deal, levels, seats) for (deal, levels), seats in kept.items()]
            tmp = f"{path}.tmp"
            Path(tmp).write_bytes(msgspec.json.encode(rows))
            os.replace(tmp, path)


def tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b of two paired lists (ties in either)."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else 0.0


def gamma(level_ranks: list[int]) -> float:
    """Goodman-Kruskal gamma of the standings (best first) against the level ranks."""
    concordant = discordant = 0
    for a, b in itertools.combinations(level_ranks, 2):
        concordant += a < b
        discordant += a > b
    return (concordant - discordant) / (concordant + discordant)


def pair_gamma(level_ranks: list[int], a: int, b: int) -> float:
    """Gamma over the pairs of one entrant of level `a` and one of level `b` (a < b, a the
    stronger): 2 * (the share standing in the known order) - 1."""
    concordant = discordant = 0
    for i, j in itertools.combinations(level_ranks, 2):
        if {i, j} == {a, b}:
            concordant += i == a
            discordant += i == b
    return (concordant - discordant) / (concordant + discordant)


class Field:
    """The field's levels (`--levels`, strongest first, four entrants each) and what is
    measured of them: the pairs of levels, `equal` (expert and basic, counted equal by
    "gamma, basic = expert"; None without them: then it is gamma) and the `measures`."""

    def __init__(self, levels: tuple[str, ...]) -> None:
        self.use(levels)

    def use(self, levels: tuple[str, ...]) -> None:
        self.levels = levels
        self.pairs = tuple(itertools.combinations(range(len(levels)), 2))
        both = {"expert", "basic"} <= set(levels)
        self.equal = (levels.index("expert"), levels.index("basic")) if both else None
        self.measures = (
            "gamma",
            "tau_b",
            "levels",
            "gamma, basic = expert",
            *tuple(f"{levels[a]}-{levels[b]}" for a, b in self.pairs),
        )


FIELD = Field(LEVELS)  # main() sets the one `--levels` asks for
WITH_INTERVAL = {"gamma", "levels", "gamma, basic = expert"}


def measures(level_ranks: list[int]) -> tuple[float, ...]:
    """(`FIELD.measures`) of standings given as level ranks, best first."""
    positions = list(range(len(level_ranks)))
    mean_position = [
        statistics.mean(p for p, r in zip(positions, level_ranks, strict=True) if r == level)
        for level in range(len(FIELD.levels))
    ]
    pairs = {(a, b): pair_gamma(level_ranks, a, b) for a, b in FIELD.pairs}
    weight = {(a, b): level_ranks.count(a) * level_ranks.count(b) for a, b in FIELD.pairs}
    known = [p for p in FIELD.pairs if p != FIELD.equal]
    return (
        gamma(level_ranks),
        tau_b(positions, level_ranks),
        tau_b(mean_position, list(range(len(FIELD.levels)))),
        sum(pairs[p] * weight[p] for p in known) / sum(weight[p] for p in known),
        *(pairs[p] for p in FIELD.pairs),
    )


def tournament(
    settings: Settings,
    index: int,
    cache: Cache,
    used: set[tuple[str, tuple[str, ...]]],
    kinds: tuple[Kind, ...] = (("results", "points"),),
) -> dict[Kind, list[tuple[float, ...]]]:
    """Per standings of `kinds` (`Settings.standings_by`, `Settings.ranked_by`), the measures
    after each round of one tournament, paired as `settings` says (each game's key added to
    `used`)."""
    pool = [Entrant(id=f"{level}{k}", bot=level) for level in FIELD.levels for k in range(4)]
    entrants = SeededRandom(f"bench/{index}/entrants").shuffled(pool)
    level_of = {e.id: e.bot for e in entrants}
    rounds: list[Round] = []
    results: list[TableResult] = []
    out: dict[Kind, list[tuple[float, ...]]] = {kind: [] for kind in kinds}
    for _ in range(settings.rounds):
        played = next_round(settings, entrants, rounds, results)
        rounds.append(played)
        for table in played.tables:
            key = (table.deal, tuple(level_of[e] for e in table.seats))
            used.add(key)
            game = cache.play(*key)
            luck = cache.adjusted.get(key) if cache.luck else None
            results.append(
                TableResult(
                    round=played.number,
                    table=table.number,
                    deal=table.deal,
                    seats=table.seats,
                    ranks=tuple(rank for rank, _ in game),
                    scores=tuple(score for _, score in game),
                    adjusted=None
                    if luck is None
                    else Adjusted(
                        ranks=tuple(r for r, _ in luck), scores=tuple(s for _, s in luck)
                    ),
                )
            )
        for kind in kinds:
            counted = msgspec.structs.replace(settings, standings_by=kind[0], ranked_by=kind[1])
            order = standings(counted, entrants, rounds, results)
            out[kind].append(measures([FIELD.levels.index(level_of[s.entrant]) for s in order]))
    return out


def half_width(values: list[float]) -> float:
    """Half the width of the 95% interval of the mean (1.96 standard errors)."""
    return 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def report(
    name: str, per_tournament: list[list[tuple[float, ...]]], pairs: bool = False
) -> dict[str, int]:
    """Prints the means per round (with `pairs`, of every measure); returns the first
    round each mean reaches the goal."""
    rounds = len(per_tournament[0])
    print(f"{name}")
    print(f"  {'round':<22}" + " ".join(f"{r + 1:>5}" for r in range(rounds)))
    firsts = {}
    for m, label in enumerate(FIELD.measures if pairs else FIELD.measures[:3]):
        values = [[t[r][m] for t in per_tournament] for r in range(rounds)]
        row = [statistics.mean(v) for v in values]
        firsts[label] = next((r + 1 for r, v in enumerate(row) if v >= GOAL), 0)
        print(f"  {label:<22}" + " ".join(f"{v:5.3f}" for v in row))
        if label in WITH_INTERVAL:
            print(f"  {'  +-':<22}" + " ".join(f"{half_width(v):5.3f}" for v in values))
    return firsts


def level_margins(cache: Cache, used: set[tuple[str, tuple[str, ...]]]) -> None:
    """Prints each level's mean game margin and its standard deviation over the games of
    `used`, by results and (where reviewed) luck-adjusted; and the standard deviation
    within a lineup (pooled about the mean of the games of that level against the same
    levels): the spread left once who an entrant met is taken out."""
    kinds = (("results", cache.games), ("luck-adjusted", cache.adjusted))
    print(
        "  per game, over the games played: each level's margin, mean (95%), sd, and sd"
        " within a lineup"
    )
    for label, kept in kinds:
        by_lineup: dict[tuple[str, tuple[str, ...]], list[float]] = defaultdict(list)
        for key in used:
            if key not in kept:
                continue
            levels = key[1]
            for seat, margin in enumerate(margins([s for _, s in kept[key]])):
                others = tuple(sorted(levels[:seat] + levels[seat + 1 :]))
                by_lineup[(levels[seat], others)].append(margin)
        if not by_lineup:
            continue
        cells = []
        for level in FIELD.levels:
            groups = [v for (lv, _), v in by_lineup.items() if lv == level]
            every = [x for v in groups for x in v]
            if len(every) < 2:
                continue
            squares = sum((x - statistics.mean(v)) ** 2 for v in groups for x in v)
            within = math.sqrt(squares / sum(len(v) - 1 for v in groups))
            cells.append(
                f"{level} {statistics.mean(every):+.2f} ± {half_width(every):.2f}"
                f" sd {statistics.stdev(every):.2f} / {within:.2f}"
            )
        print(f"    {label:<14} " + "; ".join(cells))


def shared_luck(
    cache: Cache, used: dict[str, set[tuple[str, tuple[str, ...]]]]
) -> tuple[int, float]:
    """(pairs, correlation) of the place points' residuals (less the lineup's mean over
    the games played) of two holders of one seat of one duplicate deal, different lineups."""
    rows = []
    duplicate = used["duplicate"]
    for deal, levels in used["duplicate"] | used["fresh"]:
        game = cache.games[(deal, levels)]
        points = place_points([rank for rank, _ in game])
        for seat, level in enumerate(levels):
            lineup = (level, tuple(sorted(levels[:seat] + levels[seat + 1 :])))
            rows.append(((deal, levels) in duplicate, deal, seat, lineup, points[seat]))
    by_lineup: dict[tuple, list[float]] = defaultdict(list)
    for _, _, _, lineup, points in rows:
        by_lineup[lineup].append(points)
    expected = {lineup: statistics.mean(v) for lineup, v in by_lineup.items()}
    holders: dict[tuple[str, int], list[tuple[tuple, float]]] = defaultdict(list)
    for is_duplicate, deal, seat, lineup, points in rows:
        if is_duplicate:
            holders[(deal, seat)].append((lineup, points - expected[lineup]))
    xs, ys = [], []
    for group in holders.values():
        for (lineup_a, a), (lineup_b, b) in itertools.permutations(group, 2):
            if lineup_a != lineup_b:
                xs.append(a)
                ys.append(b)
    return len(xs) // 2, statistics.correlation(xs, ys) if len(xs) > 2 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cache", help="a JSON file of the games played (kept across runs)")
    parser.add_argument(
        "--luck",
        action="store_true",
        help="luck-adjusted standings too, from the same games (each game reviewed)",
    )
    parser.add_argument("--formats", default=",".join(FORMATS), help="of " + ",".join(FORMATS))
    parser.add_argument(
        "--modes",
        default=",".join(f"{mode}:{primary}" for mode, primary in MODES),
        help="deal modes and the standings' first key, of "
        + ",".join(f"{mode}:{primary}" for mode, primary in MODES),
    )
    parser.add_argument(
        "--ranked-by",
        choices=RANKED_BY,
        default="points",
        help="the first key of the standings the swiss rounds are paired by (each is measured)",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="gamma per pair of levels, and each level's game margins (module docstring)",
    )
    parser.add_argument(
        "--levels",
        default=",".join(LEVELS),
        help="the field's levels, four entrants each, of (and in the order of) " + ",".join(LEVELS),
    )
    args = parser.parse_args()
    levels = tuple(args.levels.split(","))
    if len(levels) < 2 or [v for v in LEVELS if v in levels] != list(levels):
        parser.error(f"--levels: two or more of {LEVELS}, strongest first")
    FIELD.use(levels)
    formats = args.formats.split(",")
    modes = [tuple(m.split(":")) for m in args.modes.split(",")]
    if not set(formats) <= set(FORMATS) or not set(modes) <= set(MODES):
        parser.error(f"--formats of {FORMATS}, --modes of {MODES}")
    cache = Cache(args.cache, luck=args.luck)
    by = BY if args.luck else ("results",)
    kinds = tuple(itertools.product(by, RANKED_BY))
    print(
        f"{4 * len(FIELD.levels)} entrants (4 each of {', '.join(FIELD.levels)}), tables of 4, "
        f"{args.tournaments} tournaments x {args.rounds} rounds per format and deal mode"
        + (" (paired as luck-adjusted tournaments; both standings measured)" if args.luck else "")
        + f", swiss paired by {args.ranked_by}"
    )
    summary = []
    used: dict[str, set[tuple[str, tuple[str, ...]]]] = {"duplicate": set(), "fresh": set()}
    for fmt, (mode, primary) in itertools.product(formats, modes):
        start, before = time.process_time(), set(cache.games)
        runs = []
        keys: set[tuple[str, tuple[str, ...]]] = set()
        for i in range(args.tournaments):
            settings = Settings(
                format=fmt,
                deal_mode=mode,
                duplicate_primary=primary,  # type: ignore[arg-type]
                rounds=args.rounds,
                seed=f"bench/{i}",
                standings_by=by[-1],  # type: ignore[arg-type]
                ranked_by=args.ranked_by,
            )
            runs.append(tournament(settings, i, cache, keys, kinds))
        used[mode] |= keys
        for kind in kinds:
            name = f"{fmt} / {mode}" + (f" (by {primary})" if mode == "duplicate" else "")
            name += f" [{kind[0].replace('_', '-')}, {kind[1]}]"
            measured = [run[kind] for run in runs]
            firsts = report(name, measured, args.pairs)
            summary.append((name, firsts, statistics.mean(t[-1][0] for t in measured)))
        if args.pairs:
            level_margins(cache, keys)
        played = len(set(cache.games) - before)
        print(f"  ({played} games played, {time.process_time() - start:.0f} s cpu)")
    cache.save()
    print(f"\nfirst round where the mean reaches {GOAL} (- for none in {args.rounds} rounds)")
    width = 66
    print(
        f"  {'format / deals (ranked by)':<{width}} {'gamma':>6} {'levels':>7} {'gamma at end':>13}"
    )
    for name, firsts, last in summary:
        g, lv = firsts["gamma"] or "-", firsts["levels"] or "-"
        print(f"  {name:<{width}} {g:>6} {lv:>7} {last:>13.3f}")
    if not used["duplicate"]:
        return
    pairs, correlation = shared_luck(cache, used)
    print(
        f"\nshared luck: correlation of place-point residuals of two holders of one seat of"
        f" one duplicate deal (different lineups): {correlation:.3f} over {pairs} pairs"
    )


if __name__ == "__main__":
    main()
