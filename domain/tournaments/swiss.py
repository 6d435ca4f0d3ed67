"""Swiss pairing: who sits out (`bye_entrants`) and the tables formed from the standings
(`swiss_tables`: the fewest repeated meetings, then the closest places), by a bounded,
deterministic local search."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from domain.game.rng import SeededRandom

SEARCH_BUDGET = 100_000  # about the swaps weighed per grouping of a round (`_search`)
TABU_TENURE = 5  # steps before an entrant may go back to a table it left (`_untangle`)


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
