"""Tournaments of several rounds: pairing, seats, deals, scoring, standings.

Pure and deterministic: every choice left to chance comes from `SeededRandom` on the
tournament's seed, so the same settings, entrants and results give the same rounds.

Rules stated:

- Formats. `swiss`: each round, tables are formed from the standings (`swiss_tables`: the
  fewest repeated meetings, then the tables closest in the standings);
  `round_robin`: tables come from a fixed schedule (`round_robin_groups`), the standings
  aside.
- Byes. When the entrants do not fill whole tables, `len(entrants) % table_size` sit out:
  the lowest in the standings who have had the fewest byes (`bye_entrants`); a bye scores
  the points of a median place (`BYE_POINTS`: the mean of a table's place points) and, in
  duplicate mode, half a matchpoint; it adds no game score and no opponents.
- Deals. `duplicate`: every table of a round plays one deal, the seed
  `{seed}/round/{r}` (the engine's pile and starting seat depend only on the seed and the
  player count); `fresh`: each table its own seed `{seed}/round/{r}/table/{t}`.
- Seats. Each table's seats are assigned so each entrant holds each seat as evenly as the
  rounds allow (`assign_seats`).
- Points per game: place p of N scores N - p (4 players: 3/2/1/0); tied places share the
  mean of the points of the places they span (`place_points`).
- Matchpoints (duplicate): per deal and seat, an entrant's game score against every other
  entrant who held that seat of that deal: 1 per score beaten, 0.5 per tie, divided by the
  number compared (so 0..1 per deal; 0.5 with no one to compare) (`matchpoints`).
- Standings (`standings`): first the primary score, points (in duplicate mode,
  matchpoints when `duplicate_primary` says so: duplicate tournaments created while
  matchpoints came first keep them first), then the other of the two, then Buchholz (the
  sum of the primary scores of every opponent met, once per meeting), then the total game
  score, then the seeding (the entrants' order as given). Points come first in duplicate
  mode too because they rank the players better (why: docs/design-notes.md).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Literal

import msgspec

from domain.game.model import Result
from domain.game.rng import SeededRandom

Format = Literal["swiss", "round_robin"]
DealMode = Literal["duplicate", "fresh"]
SEARCH_BUDGET = 100_000  # about the swaps weighed per grouping of a round (`_search`)
TABU_TENURE = 5  # steps before an entrant may go back to a table it left (`_untangle`)


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    format: Format = "swiss"
    deal_mode: DealMode = "duplicate"
    table_size: int = 4  # 2 to 5
    rounds: int = 5
    seed: str = "tournament"
    # duplicate mode: the standings' first key, matchpoints second ("matchpoints": the
    # reverse, as duplicate tournaments were ranked before points came first; they keep it)
    duplicate_primary: Literal["matchpoints", "points"] = "points"

    def __post_init__(self) -> None:
        if not 2 <= self.table_size <= 5:
            raise ValueError("table_size must be between 2 and 5")


class Entrant(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    bot: str | None = None  # a bot level, or None for a human


class Table(msgspec.Struct, frozen=True, kw_only=True):
    number: int  # 0, 1, ... within the round
    seats: tuple[str, ...]  # entrant ids in seat order
    deal: str  # the game's seed


class Round(msgspec.Struct, frozen=True, kw_only=True):
    number: int  # 1, 2, ...
    tables: tuple[Table, ...]
    byes: tuple[str, ...] = ()


class TableResult(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    table: int
    deal: str
    seats: tuple[str, ...]  # entrant ids in seat order
    ranks: tuple[int, ...]  # per seat, 1 = first; tied seats share a rank
    scores: tuple[int, ...]  # per seat, the game score


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    entrant: str
    points: float
    matchpoints: float
    buchholz: float
    score: int
    position: int  # 1, 2, ... (no ties: the last tie-break is the seeding)


def bye_points(table_size: int) -> float:
    """The points of a median place: the mean of a table's place points."""
    return (table_size - 1) / 2


# ---------------------------------------------------------------- scoring


def place_points(ranks: Sequence[int]) -> tuple[float, ...]:
    """Place p of N scores N - p; seats tied at rank k spanning m places share the mean of
    the points of places k .. k + m - 1."""
    n = len(ranks)
    tied = Counter(ranks)
    return tuple(sum(n - p for p in range(rank, rank + tied[rank])) / tied[rank] for rank in ranks)


def table_result(round_number: int, table: Table, results: Sequence[Result]) -> TableResult:
    """A table's result from the engine's final results (in seat order)."""
    by_seat = sorted(results, key=lambda r: r.seat)
    return TableResult(
        round=round_number,
        table=table.number,
        deal=table.deal,
        seats=table.seats,
        ranks=tuple(r.rank for r in by_seat),
        scores=tuple(r.score for r in by_seat),
    )


def matchpoints(results: Sequence[TableResult]) -> dict[tuple[int, str], float]:
    """(round, entrant) -> matchpoints of that game, 0..1: per deal and seat, 1 per other
    holder of that seat beaten on game score, 0.5 per tie, over the number compared
    (0.5 when no one else held it)."""
    holders: dict[tuple[str, int], list[tuple[int, str, int]]] = defaultdict(list)
    for result in results:
        for seat, (entrant, score) in enumerate(zip(result.seats, result.scores, strict=True)):
            holders[(result.deal, seat)].append((result.round, entrant, score))
    out: dict[tuple[int, str], float] = {}
    for group in holders.values():
        for round_number, entrant, score in group:
            others = [s for r, e, s in group if (r, e) != (round_number, entrant)]
            won = sum(1.0 if score > s else 0.5 if score == s else 0.0 for s in others)
            out[(round_number, entrant)] = won / len(others) if others else 0.5
    return out


def standings(
    settings: Settings,
    entrants: Sequence[Entrant],
    rounds: Sequence[Round],
    results: Sequence[TableResult],
) -> list[Standing]:
    """The standings after the rounds given, best first (tie-breaks: module docstring)."""
    ids = [e.id for e in entrants]
    points = dict.fromkeys(ids, 0.0)
    marks = dict.fromkeys(ids, 0.0)
    score = dict.fromkeys(ids, 0)
    for result in results:
        for entrant, pts in zip(result.seats, place_points(result.ranks), strict=True):
            points[entrant] += pts
        for entrant, game_score in zip(result.seats, result.scores, strict=True):
            score[entrant] += game_score
    for (_, entrant), mp in matchpoints(results).items():
        marks[entrant] += mp
    for played in rounds:
        for entrant in played.byes:
            points[entrant] += bye_points(settings.table_size)
            marks[entrant] += 0.5
    by_marks = settings.deal_mode == "duplicate" and settings.duplicate_primary == "matchpoints"
    primary, secondary = (marks, points) if by_marks else (points, marks)
    buchholz = dict.fromkeys(ids, 0.0)
    for entrant, other in _meetings(rounds):
        buchholz[entrant] += primary[other]
    seeding = {entrant: i for i, entrant in enumerate(ids)}
    order = sorted(
        ids,
        key=lambda e: (-primary[e], -secondary[e], -buchholz[e], -score[e], seeding[e]),
    )
    return [
        Standing(
            entrant=e,
            points=points[e],
            matchpoints=marks[e],
            buchholz=buchholz[e],
            score=score[e],
            position=i + 1,
        )
        for i, e in enumerate(order)
    ]


def _meetings(rounds: Sequence[Round]) -> Iterator[tuple[str, str]]:
    """(entrant, opponent) for every pair at a table, both ways, once per meeting."""
    for played in rounds:
        for table in played.tables:
            yield from itertools.permutations(table.seats, 2)


def meeting_counts(rounds: Sequence[Round]) -> Counter[frozenset[str]]:
    """How often each pair of entrants has shared a table."""
    return Counter(frozenset(pair) for pair in _meetings(rounds) if pair[0] < pair[1])


def seat_counts(rounds: Sequence[Round]) -> dict[str, Counter[int]]:
    """entrant -> how often it has held each seat index."""
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    for played in rounds:
        for table in played.tables:
            for seat, entrant in enumerate(table.seats):
                counts[entrant][seat] += 1
    return counts


# ---------------------------------------------------------------- pairing


def bye_entrants(order: Sequence[str], byes_had: Mapping[str, int], count: int) -> list[str]:
    """The `count` entrants who sit out: the fewest byes so far first, then the lowest in
    `order` (the standings, best first)."""
    last_first = list(reversed(order))
    ranked = sorted(last_first, key=lambda e: (byes_had.get(e, 0), last_first.index(e)))
    return ranked[:count]


def swiss_tables(
    order: Sequence[str], met: Mapping[frozenset[str], int], size: int
) -> list[tuple[str, ...]]:
    """Tables of `size` from `order` (best first; a multiple of `size`): a grouping with the
    fewest repeated meetings (a pair counted as often as it has met), then the closest in
    the standings (the least sum, over the pairs at a table, of the squared distance of
    their places in `order`), as found by a bounded, deterministic search (`_search`).
    Each table lists its members in `order`; the tables come in the order of their best."""
    if len(order) % size:
        raise ValueError("the entrants seated must fill whole tables")
    n = len(order)
    place = {entrant: i for i, entrant in enumerate(order)}
    repeat = size * n**3  # a repeated meeting costs more than any grouping's distances
    cost = [[(i - j) ** 2 for j in range(n)] for i in range(n)]
    for pair, times in met.items():
        a, b = (place.get(entrant) for entrant in pair)
        if a is not None and b is not None:
            cost[a][b] = cost[b][a] = (a - b) ** 2 + repeat * times
    tables = _search(cost, size, repeat)
    return [tuple(order[i] for i in members) for members in sorted(map(sorted, tables))]


def _search(cost: list[list[int]], size: int, repeat: int) -> list[list[int]]:
    """A grouping of entrants 0 .. n - 1 (by place) into tables of `size` of low total cost
    (the sum of `cost` over the pairs at each table), deterministic and bounded
    (`SEARCH_BUDGET` swaps weighed): `_greedy`, then the swaps between two tables that
    lower the cost (`_Grouping.descend`), then a tabu search for a grouping without repeats
    (`_untangle`), then seeded kicks each followed by a descent (`_kick`). It stops early
    at a grouping with no repeat and the standings' own blocks' distances: none costs
    less."""
    n = len(cost)
    grouping = _Grouping(cost, _greedy(cost, size, repeat))
    if len(grouping.tables) < 2:
        return grouping.tables
    grouping.descend(set(range(len(grouping.tables))), [])
    grouping = _untangle(grouping, repeat, SEARCH_BUDGET // 2)
    least = n // size * sum((j - i) ** 2 for i, j in itertools.combinations(range(size), 2))
    total = grouping.total()
    rng = SeededRandom("swiss_tables")
    while total > least and grouping.weighed < SEARCH_BUDGET:
        total += _kick(grouping, size, repeat, rng)
    return grouping.tables


def _greedy(cost: list[list[int]], size: int, repeat: int) -> list[list[int]]:
    """The best entrant not seated sits with the next ones who add the fewest repeated
    meetings, the nearest in the standings first."""
    rest = list(range(len(cost)))
    tables = []
    while rest:
        table = [rest.pop(0)]
        while len(table) < size:
            added = [sum(cost[x][m] for m in table) // repeat for x in rest]
            table.append(rest.pop(added.index(min(added))))
        tables.append(table)
    return tables


class _Grouping:
    """Tables of entrants and, per entrant and table, the sum of the entrant's costs with
    that table's members (`near`): what a swap changes in O(1), kept in O(n) a swap."""

    def __init__(self, cost: list[list[int]], tables: list[list[int]], weighed: int = 0) -> None:
        self.cost = cost
        self.tables = tables
        self.where = [0] * len(cost)
        for t, members in enumerate(tables):
            for x in members:
                self.where[x] = t
        self.near = [
            [sum(row[y] for y in members if y != x) for members in tables]
            for x, row in enumerate(cost)
        ]
        self.weighed = weighed  # swaps weighed so far

    def total(self) -> int:
        return sum(near[t] for near, t in zip(self.near, self.where, strict=True)) // 2

    def repeated(self, repeat: int) -> list[int]:
        """The entrants at a table with someone they have met."""
        pairs = zip(self.near, self.where, strict=True)
        return [x for x, (near, t) in enumerate(pairs) if near[t] >= repeat]

    def change(self, x: int, y: int) -> int:
        """How much swapping x and y (at different tables) changes the total cost."""
        a, b = self.where[x], self.where[y]
        near_x, near_y = self.near[x], self.near[y]
        return near_x[b] - near_x[a] + near_y[a] - near_y[b] - 2 * self.cost[x][y]

    def swap(self, x: int, y: int) -> None:
        a, b = self.where[x], self.where[y]
        self.tables[a][self.tables[a].index(x)] = y
        self.tables[b][self.tables[b].index(y)] = x
        self.where[x], self.where[y] = b, a
        cost_x, cost_y = self.cost[x], self.cost[y]
        for z, near in enumerate(self.near):
            moved = cost_y[z] - cost_x[z]
            near[a] += moved
            near[b] -= moved

    def best_swap(self, x: int) -> tuple[int, int]:
        """(change, y): the swap of x with an entrant of another table that lowers the
        total cost most, or (0, -1) when none lowers it."""
        a, near, cost_x = self.where[x], self.near, self.cost[x]
        near_x = near[x]
        best, partner = 0, -1
        for b, members in enumerate(self.tables):
            if b == a:
                continue
            base = near_x[b] - near_x[a]
            for y in members:
                near_y = near[y]
                change = base + near_y[a] - near_y[b] - 2 * cost_x[y]
                if change < best:
                    best, partner = change, y
        self.weighed += len(self.cost)
        return best, partner

    def descend(self, dirty: set[int], swaps: list[tuple[int, int]]) -> int:
        """Swaps that lower the total cost, from the tables in `dirty`, until none does (a
        swap between two tables can only start to lower the cost when one of them
        changes, and a changed table is dirty again). Returns the change; logs the swaps."""
        total = 0
        while dirty:
            a = min(dirty)
            dirty.discard(a)
            i = 0
            while i < len(self.tables[a]):
                x = self.tables[a][i]
                change, y = self.best_swap(x)
                if y < 0:
                    i += 1
                    continue
                dirty.add(self.where[y])
                swaps.append((x, y))
                self.swap(x, y)
                total += change
                i = 0
        return total


def _untangle(grouping: _Grouping, repeat: int, budget: int) -> _Grouping:
    """A tabu search while a meeting repeats, within `budget` swaps weighed: each step
    makes the swap, of an entrant in a repeated meeting with one of another table, that
    changes the total cost least, even upwards, except one that sends an entrant back to
    a table it left in the last `TABU_TENURE` steps (unless the cost falls below the
    best yet). Returns the best grouping seen, descended."""
    if not grouping.repeated(repeat):
        return grouping
    where, near, cost = grouping.where, grouping.near, grouping.cost
    total = best = grouping.total()
    best_tables = [list(t) for t in grouping.tables]
    left: dict[tuple[int, int], int] = {}  # (entrant, table) -> the last step it left it
    step = 0
    while grouping.weighed < budget and (repeated := grouping.repeated(repeat)):
        step += 1
        move, pick = 0, (-1, -1)
        for x in repeated:
            a, near_x, cost_x = where[x], near[x], cost[x]
            for y, b in enumerate(where):
                if b == a:
                    continue
                near_y = near[y]
                change = near_x[b] - near_x[a] + near_y[a] - near_y[b] - 2 * cost_x[y]
                if pick[0] >= 0 and change >= move:
                    continue
                last = max(left.get((x, b), -TABU_TENURE), left.get((y, a), -TABU_TENURE))
                if step - last > TABU_TENURE or total + change < best:
                    move, pick = change, (x, y)
            grouping.weighed += len(where)
        x, y = pick
        if x < 0:
            break
        left[(x, where[x])] = left[(y, where[y])] = step
        grouping.swap(x, y)
        total += move
        if total < best:
            best, best_tables = total, [list(t) for t in grouping.tables]
    found = _Grouping(cost, best_tables, grouping.weighed)
    found.descend(set(range(len(best_tables))), [])
    return found


def _kick(grouping: _Grouping, size: int, repeat: int, rng: SeededRandom) -> int:
    """Swaps an entrant in a repeated meeting (any entrant, when none is) with one drawn
    from another table (when none is repeated, one within twice a table's size of places),
    even at a cost, then descends from the two tables; keeps the result when the total
    cost did not rise, else undoes it. Returns the change."""
    n, where = len(grouping.cost), grouping.where
    repeated = grouping.repeated(repeat)
    x = rng.choice(repeated or range(n))
    pool = range(n) if repeated else range(max(0, x - 2 * size), min(n, x + 2 * size + 1))
    y = rng.choice([y for y in pool if where[y] != where[x]])
    grouping.weighed += n
    change = grouping.change(x, y)
    swaps = [(x, y)]
    dirty = {where[x], where[y]}
    grouping.swap(x, y)
    change += grouping.descend(dirty, swaps)
    if change <= 0:
        return change
    for a, b in reversed(swaps):
        grouping.swap(a, b)
    return 0


_GF4_MUL = ((0, 0, 0, 0), (0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2))  # GF(4): + is xor


def _field(size: int) -> tuple[Callable[[int, int], int], Callable[[int, int], int]]:
    """Addition and multiplication of the field of `size` elements (2, 3, 4 or 5)."""
    if size == 4:
        return (lambda a, b: a ^ b), (lambda a, b: _GF4_MUL[a][b])
    return (lambda a, b: (a + b) % size), (lambda a, b: (a * b) % size)


def affine_round(ids: Sequence[str], size: int, index: int) -> list[tuple[str, ...]]:
    """For size**2 entrants: round `index` (0 .. size) of the affine plane of order `size`:
    entrant x * size + y is the point (x, y); round k < size has the lines y = k x + c,
    round size the lines x = c. Over the size + 1 rounds every pair meets exactly once."""
    add, mul = _field(size)
    if index == size:
        return [tuple(ids[c * size + y] for y in range(size)) for c in range(size)]
    return [tuple(ids[x * size + add(mul(index, x), c)] for x in range(size)) for c in range(size)]


def circle_round(ids: Sequence[str], index: int) -> tuple[list[tuple[str, ...]], list[str]]:
    """Round `index` (0 .. n - 2, n even after a bye is added for an odd count) of the
    circle method: the first entrant stays, the others turn one place a round; the pairs
    are first with last, second with second last...; who meets the added bye sits out."""
    seats: list[str | None] = [*ids, None] if len(ids) % 2 else list(ids)
    n = len(seats)
    turn = index % (n - 1)
    rotated = [seats[0], *(seats[1:][-turn:] + seats[1:][:-turn] if turn else seats[1:])]
    pairs: list[tuple[str, ...]] = []
    byes: list[str] = []
    for i in range(n // 2):
        a, b = rotated[i], rotated[n - 1 - i]
        if a is None or b is None:
            byes.append(a if b is None else b)  # type: ignore[arg-type]
        else:
            pairs.append((a, b))
    return pairs, byes


def round_robin_groups(
    settings: Settings, ids: Sequence[str], rounds: Sequence[Round], number: int
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The tables and byes of round `number` by the schedule, the standings aside: tables
    of 2, the circle method (every pair once in n - 1 rounds, n rounded up to even);
    size**2 entrants, the affine plane (every pair once in size + 1 rounds); past the end,
    the schedule starts over. Otherwise the fewest byes sit out (the last seeded first) and
    the rest are grouped as `swiss_tables` groups them (the fewest repeats), in a
    seeded shuffle of the round instead of the standings."""
    size = settings.table_size
    if size == 2:
        return circle_round(ids, number - 1)
    if len(ids) == size * size:
        return affine_round(ids, size, (number - 1) % (size + 1)), []
    byes_had = Counter(e for played in rounds for e in played.byes)
    sitting = bye_entrants(ids, byes_had, len(ids) % size)
    order = SeededRandom(f"{settings.seed}/round/{number}/order").shuffled(
        [e for e in ids if e not in sitting]
    )
    return swiss_tables(order, meeting_counts(rounds), size), sitting


def assign_seats(
    groups: Sequence[Sequence[str]], counts: Mapping[str, Counter[int]], rng: SeededRandom
) -> list[tuple[str, ...]]:
    """Each table's seat order: of all orders, one where the most times an entrant has
    held its seat beyond its least held seat is least, then the sum of those excesses, a
    tie drawn from `rng`. Greedy round by round: a later table can find its entrants short
    of the same seat, so the counts can differ by more than one."""
    seated = []
    for group in groups:
        excess = _seat_excess(counts, group)
        orders = list(itertools.permutations(group))
        cost = [_seat_cost(excess, o) for o in orders]
        least = min(cost)
        best = [o for o, c in zip(orders, cost, strict=True) if c == least]
        seated.append(rng.choice(best))
    return seated


def _seat_excess(counts: Mapping[str, Counter[int]], group: Sequence[str]) -> dict[str, list[int]]:
    """entrant -> per seat of the table, how many more times it has held that seat than
    its least held seat."""
    excess = {}
    for entrant in group:
        mine = counts.get(entrant, Counter())
        held = [mine[seat] for seat in range(len(group))]
        excess[entrant] = [h - min(held) for h in held]
    return excess


def _seat_cost(excess: Mapping[str, Sequence[int]], order: Sequence[str]) -> tuple[int, int]:
    """The excess of each entrant at its seat (`_seat_excess`): the most, then the sum."""
    held = [excess[entrant][seat] for seat, entrant in enumerate(order)]
    return max(held), sum(held)


def deal_seed(settings: Settings, number: int, table: int) -> str:
    """The game's seed: one deal per round in duplicate mode, one per table in fresh."""
    if settings.deal_mode == "duplicate":
        return f"{settings.seed}/round/{number}"
    return f"{settings.seed}/round/{number}/table/{table}"


def next_round(
    settings: Settings,
    entrants: Sequence[Entrant],
    rounds: Sequence[Round],
    results: Sequence[TableResult],
) -> Round:
    """Round len(rounds) + 1 from the rounds played and their results. Swiss: the byes
    (`bye_entrants`) and tables (`swiss_tables`) from the standings; round robin: by the
    schedule (`round_robin_groups`). Then seats (`assign_seats`) and deals (`deal_seed`)."""
    number = len(rounds) + 1
    size = settings.table_size
    ids = [e.id for e in entrants]
    if len(ids) < size:
        raise ValueError("fewer entrants than a table's seats")
    if settings.format == "swiss":
        order = [s.entrant for s in standings(settings, entrants, rounds, results)]
        byes_had = Counter(e for played in rounds for e in played.byes)
        sitting = bye_entrants(order, byes_had, len(ids) % size)
        playing = [e for e in order if e not in sitting]
        groups = swiss_tables(playing, meeting_counts(rounds), size)
    else:
        groups, sitting = round_robin_groups(settings, ids, rounds, number)
    rng = SeededRandom(f"{settings.seed}/round/{number}/seats")
    seated = assign_seats(groups, seat_counts(rounds), rng)
    tables = tuple(
        Table(number=t, seats=seats, deal=deal_seed(settings, number, t))
        for t, seats in enumerate(seated)
    )
    return Round(number=number, tables=tables, byes=tuple(sitting))
