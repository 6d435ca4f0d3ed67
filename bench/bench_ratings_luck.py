"""Ratings by results against ratings by luck-adjusted places, on a ladder of bots of known
strength: `python bench/bench_ratings_luck.py [--games N] [--jobs J]`.

A pool of players, `--copies` of each level of `--tiers` (default two each of random, basic,
expert, master), plays seeded four-player games (`domain.bots.simulation.play_game`), four
distinct players a game drawn from the pool by the game's seed; each game is reviewed
(`domain.bots.review.review`). From the same games, two ladders with the service's one rule
(`service.history.ratings.rate`, `predict`): plain (places: the results' ranks) and adjusted
(places: the review's `adjusted_rank`, what TEN_RATINGS_BY=luck_adjusted rates by). Printed
in one run, for each:

- games to the right order: over `--orders` random orderings of the games (the first is
  the games' own order), the share of orderings whose ladder has the right order after n
  games; the answer is the smallest n from which that share stays at 95% or more up to the
  last game (else "not reached"). The right order is the tiers' (`--tiers`, weakest first,
  `<` between tiers, `=` within one): every player of a tier has a lower ordinal (the
  leaderboard's mu - 3 sigma) than every player of a stronger tier; players of one tier are
  not compared. Default `random<basic=expert<master`: basic and expert were measured to tie
  on results, so no order between them is right or wrong.
- held-out log-loss: before each game is rated, `predict` gives each seat's chance to win
  from the ratings so far; the loss is -ln of the chance given to the game's actual winner
  (by results; a shared win: the winners' chances summed), averaged over every game of every
  ordering, and over the second half of the games alone (ln 4 = 1.386: a coin of four sides).
- each level's mean rating (mu) after the games in their own order.

Reviews take about 0.5-2 s of CPU each: `--jobs` processes compute them, and each reviewed game
is kept in `--cache` (a JSON-lines file under /tmp by default; '' for none), keyed by the
review module's source (a change of the luck estimate reviews again), the seed, the game's
number and players; a second run with more games reviews only the new ones. No
assertions: a report (bench/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import math
import random
import statistics
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from domain.bots import luck as luck_module
from domain.bots import luck_table
from domain.bots import review as review_module
from domain.bots.review import review
from domain.bots.simulation import play_game
from service.history.ratings import PRIOR, RatedSeat, Rating, predict, rate

SEATS = 4
CONFIDENCE = 0.95
DEFAULT_CACHE = "/tmp/ten-bench-ratings-luck.jsonl"


def parse_tiers(text: str) -> list[list[str]]:
    """'random<basic=expert<master' -> [['random'], ['basic', 'expert'], ['master']]."""
    return [tier.split("=") for tier in text.split("<")]


def players_of(tiers: list[list[str]], copies: int) -> dict[str, str]:
    """Player -> its level: `copies` players of each level."""
    return {f"{level}#{c}": level for tier in tiers for level in tier for c in range(1, copies + 1)}


def seated(seed: str, g: int, players: Sequence[str]) -> list[str]:
    """The game's four players, drawn (in seat order) by its seed."""
    return random.Random(f"{seed}/{g}/seats").sample(list(players), SEATS)


def one_game(job: tuple[str, int, list[str]]) -> dict[str, object]:
    """Play and review one game (in a worker process): each seat's result rank and
    luck-adjusted rank, seat order."""
    seed, g, levels = job
    game = play_game(levels, f"{seed}/{g}")
    assert game.state.results is not None
    results = {r.seat: r.rank for r in game.state.results}
    reviewed = review(game.events)
    adjusted = {s.seat: s.adjusted_rank for s in reviewed.seats}
    return {
        "results": [results[s] for s in range(SEATS)],
        "adjusted": [adjusted[s] for s in range(SEATS)],
    }


def review_version() -> str:
    """The digest of the review's and the luck's sources (their weights included): cached
    reviews of another luck estimate are not used."""
    sources = "".join(inspect.getsource(m) for m in (review_module, luck_module, luck_table))
    return hashlib.sha256(sources.encode()).hexdigest()[:16]


def reviewed_games(
    seed: str, count: int, players: dict[str, str], cache: str, jobs: int
) -> list[dict[str, object]]:
    """Every game's players and ranks: from the cache when there, else played and reviewed
    (in `jobs` processes) and added to it."""
    version = review_version()
    kept: dict[str, dict[str, object]] = {}
    path = Path(cache) if cache else None
    if path is not None and path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            kept[row["key"]] = row
    tables = [seated(seed, g, sorted(players)) for g in range(count)]
    keys = [f"{version}|{seed}|{g}|{','.join(t)}" for g, t in enumerate(tables)]
    missing = [g for g, key in enumerate(keys) if key not in kept]
    if missing:
        print(f"reviewing {len(missing)} games ({len(kept)} cached) in {jobs} process(es)...")
        work = [(seed, g, [players[p] for p in tables[g]]) for g in missing]
        with ProcessPoolExecutor(jobs) as pool:
            out = path.open("a") if path is not None else None
            try:
                for g, found in zip(missing, pool.map(one_game, work, chunksize=1), strict=True):
                    row = {"key": keys[g], **found}
                    kept[keys[g]] = row
                    if out is not None:
                        out.write(json.dumps(row) + "\n")
                        out.flush()
            finally:
                if out is not None:
                    out.close()
    return [{"players": tables[g], **kept[keys[g]]} for g in range(count)]


def table_of(game: dict[str, object], places: str) -> list[RatedSeat]:
    players, ranks = game["players"], game[places]
    assert isinstance(players, list)
    assert isinstance(ranks, list)
    return [RatedSeat(player_id=p, rank=r) for p, r in zip(players, ranks, strict=True)]


def right_order(
    ratings: dict[str, Rating], tiers: list[list[str]], players: dict[str, str]
) -> bool:
    """Every player of a tier below every player of each stronger tier, by ordinal; a
    player not rated yet: not ordered (False)."""
    if len(ratings) < len(players):
        return False
    tier_of = {level: k for k, tier in enumerate(tiers) for level in tier}
    best = [-math.inf] * len(tiers)
    worst = [math.inf] * len(tiers)
    for pid, r in ratings.items():
        k = tier_of[players[pid]]
        best[k] = max(best[k], r.ordinal)
        worst[k] = min(worst[k], r.ordinal)
    return all(best[k] < worst[k + 1] for k in range(len(tiers) - 1))


def ladder(
    games: list[dict[str, object]], order: list[int], places: str, tiers, players
) -> tuple[list[bool], list[float], dict[str, Rating]]:
    """The games in `order` rated by `places`: after each, whether the order is right; each
    game's log-loss of the prediction made before it was rated; the ratings at the end."""
    ratings: dict[str, Rating] = {}
    right, losses = [], []
    for g in order:
        game = games[g]
        table = table_of(game, places)
        chances = predict([ratings.get(s.player_id, PRIOR) for s in table]).win
        results = game["results"]
        assert isinstance(results, list)
        won = sum(c for c, r in zip(chances, results, strict=True) if r == 1)
        losses.append(-math.log(max(won, 1e-12)))
        ratings.update((o.player_id, o.after) for o in rate(ratings, table))
        right.append(right_order(ratings, tiers, players))
    return right, losses, ratings


def needed(shares: list[float]) -> str:
    """The smallest n from which the share stays at CONFIDENCE or more to the end."""
    n = len(shares)
    while n > 0 and shares[n - 1] >= CONFIDENCE:
        n -= 1
    return "not reached" if n == len(shares) else str(n + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--tiers", default="random<basic=expert<master")
    parser.add_argument("--copies", type=int, default=2, help="players of each level")
    parser.add_argument("--orders", type=int, default=200, help="orderings of the games")
    parser.add_argument("--seed", default="bench-ratings-luck")
    parser.add_argument("--jobs", type=int, default=1, help="processes reviewing the games")
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="reviewed games ('' : none)")
    args = parser.parse_args()
    tiers = parse_tiers(args.tiers)
    players = players_of(tiers, args.copies)
    games = reviewed_games(args.seed, args.games, players, args.cache, args.jobs)
    n = len(games)
    differ = sum(g["results"] != g["adjusted"] for g in games)
    print(
        f"{n} four-player games of {len(players)} players ({args.copies} per level), "
        f"tiers {args.tiers}; {differ} games placed otherwise by luck; "
        f"{args.orders} orderings (the first: the games' own)"
    )
    rng = random.Random(f"{args.seed}/orders")
    orders = [list(range(n))]
    for _ in range(args.orders - 1):
        order = list(range(n))
        rng.shuffle(order)
        orders.append(order)
    print(
        f"{'places':10} {'games to right order':>21} {'log-loss all':>13} {'2nd half':>9}  mu per level (own order)"
    )
    for places, name in (("results", "plain"), ("adjusted", "adjusted")):
        right_at = [0] * n
        all_losses, late = [], []
        end: dict[str, Rating] = {}
        for k, order in enumerate(orders):
            right, losses, ratings = ladder(games, order, places, tiers, players)
            for i, ok in enumerate(right):
                right_at[i] += ok
            all_losses.extend(losses)
            late.extend(losses[n // 2 :])
            if k == 0:
                end = ratings
        shares = [c / len(orders) for c in right_at]
        levels = [level for tier in tiers for level in tier]
        mus = "  ".join(
            f"{level} {statistics.fmean(r.mu for p, r in end.items() if players[p] == level):.2f}"
            for level in levels
            if any(players[p] == level for p in end)
        )
        print(
            f"{name:10} {needed(shares):>21} {statistics.fmean(all_losses):13.4f} "
            f"{statistics.fmean(late) if late else float('nan'):9.4f}  {mus}"
        )
        print(f"{'':10} right order after {n} games in {shares[-1]:.0%} of the orderings")


if __name__ == "__main__":
    main()
