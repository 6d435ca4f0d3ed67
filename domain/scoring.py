"""Optimal scoring of a collection (rules.md section 5).

Each wild card is placed at most once: a colour wild (`R#` ...) in its colour at any
number, a numbered wildcard `Wn` at number n of any colour, `W#` anywhere. Per colour
only the longest run of consecutive numbers counts (1 point per card in it, duplicates
add nothing); a run of all nine earns `perfect_bonus` more. `score_collection` finds the
placement of the wild cards that gives the highest total and reports the runs.

Any multiset of number cards and wild cards is scored exactly, also one holding more
copies of a wild card than the deck (a game may be set up with any list of card codes):
every copy is placed at most once, so two `W5` may fill number 5 in two colours.

Algorithm (exact). Per colour, a candidate run is an interval [a, b] of numbers; the
numbers of it that the colour's number cards do not cover form a 9-bit mask m. The
colour's own wilds fill up to k of them (k = colour wilds held, any number of copies);
the others, d = max(0, |m| - k), must be filled by numbered wildcards Wn with n in m or
by `W#`. With k_n copies of `Wn` and h copies of `W#`, a choice of one interval per
colour can be filled iff for every set X of colours
    sum(d_c for c in X) - sum_n min(k_n, |{c in X : n in m_c}|) <= h
(max-flow/min-cut of the transportation problem: a place takes one card, `W#` fits any
place). The search is a branch-and-bound over the four colours with, per colour, the
candidates in decreasing value and dominated ones removed (a candidate is dominated by
a better one needing no more numbered wildcards from a superset of places; an interval
needing none dominates every later one of its colour); the conditions are checked
incrementally, set by set.

Fast path, for the deck's copies (no `Wn` twice, at most one `W#`; colour wilds any
number): the sum over n is |OR(m_c & held_Wn for c in X)|, a popcount, and the upper
bound of the colours left is the best they can do with the wild cards left (the
condition for all colours at once: sum of d <= usable Wn + h).

General path (some `Wn` twice or more, or several `W#`; its bounds are what keeps many
`W#` fast): a number with at least as many copies as
colours that can use it is not contested and leaves the search (its places count as
filled). Per set X of colours the search keeps the slack h - (sum d - sum_n min(...))
and the numbers with a copy left, so a colour joins X with one popcount. The bounds
come from the same condition read the other way (min-cut over sets N of numbers:
sum_c max(0, d_c - |m_c \\ N|) <= h + sum_{n in N} k_n): a knapsack bound per N for a
few N; choosing a colour cuts the lists of the later colours to the candidates that
fit (forward checking), and colours with the same candidates are searched in one order
only (symmetry; the tie rule says which).

The wild cards are then placed by an augmenting-path matching (number n takes up to k_n
colours, each colour once).

Tie rule [decision]: among the placements with the highest total (bonus included),
`score_collection` reports the one that
  1. uses the fewest wild cards in the scored runs; then
  2. has the longest runs: run lengths sorted in decreasing order, compared
     lexicographically (B1 B2 W3 rather than B1 B2 and W3 alone in red); then
  3. colour by colour in the order R, B, O, G: has the longer run in that colour, then
     the fewer wild cards in that colour's run, then the run starting at the lower
     number.
Within the chosen runs, wild cards are placed so that each run uses as many of its own
colour wilds as it can, then numbered wildcards, and `W#` only where nothing else fits
(numbered wildcards are matched to colours by augmenting paths in colour order R, B, O,
G and number order 1 to 9); in a run the colour wilds take the lowest of the numbers left
after the numbered wildcards, and `W#` the highest. The result depends only on the
multiset of cards, never on their order.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Final

import msgspec

from domain.cards import COLORS, FULL_WILD

__all__ = ["ColorScore", "Score", "best_total", "score_collection"]


class ColorScore(msgspec.Struct, frozen=True, kw_only=True):
    points: int  # run length + perfect bonus if the run is 1..9
    run: tuple[str, ...]  # codes of the cards in the scored run, in number order, wilds included


class Score(msgspec.Struct, frozen=True, kw_only=True):
    total: int
    colors: dict[str, ColorScore]  # keys exactly "R", "B", "O", "G" in that order


# ---------------------------------------------------------------------------------------
# Tables built once at import.

_FULL: Final = 511  # bits 0..8 stand for numbers 1..9
_POP: Final[tuple[int, ...]] = tuple(i.bit_count() for i in range(512))
_BITS: Final = tuple(tuple(m >> i & 1 for i in range(9)) for m in range(512))
_INDICES: Final = tuple(tuple(i for i in range(9) if m >> i & 1) for m in range(512))

# code -> (kind, index, bit). kind 0: number card (index: colour), 1: colour wild
# (colour), 2: Wn (number - 1), 3: W#.
_KIND_NUMBER: Final = 0
_KIND_COLOR_WILD: Final = 1
_KIND_NUMBER_WILD: Final = 2
_KIND_FULL_WILD: Final = 3
_CODE_INFO: Final[dict[str, tuple[int, int, int]]] = {}
for _ci, _c in enumerate(COLORS):
    for _n in range(1, 10):
        _CODE_INFO[f"{_c}{_n}"] = (_KIND_NUMBER, _ci, 1 << (_n - 1))
    _CODE_INFO[f"{_c}#"] = (_KIND_COLOR_WILD, _ci, 0)
for _n in range(1, 10):
    _CODE_INFO[f"W{_n}"] = (_KIND_NUMBER_WILD, _n - 1, 1 << (_n - 1))
_CODE_INFO[FULL_WILD] = (_KIND_FULL_WILD, 0, 0)

# Composite value of a candidate run for the tie rule (see module docstring):
#   score * 10**21 - wilds * 10**19 + 5**length * 10**12 + key * _COLOR_WEIGHT[colour]
# with key = length * 100 + (9 - wilds) * 10 + (9 - start) < 1000. Summed over the
# colours this orders placements by total (at most 4 * (9 + bonus)), then fewest wilds
# (at most 36), then by run lengths sorted in decreasing order (the sum of 5**length
# over four colours, below 10**19 / 1.2, compares them like that), then colour by
# colour. No two different choices of runs get the same value.
_SCORE_W: Final = 10**21
_WILD_W: Final = 10**19
_SPREAD_W: Final = tuple(5**length * 10**12 for length in range(10))
_COLOR_WEIGHT: Final = (10**9, 10**6, 10**3, 1)


def _build_intervals() -> tuple[tuple[tuple[int, int, int, int, int], ...], ...]:
    """Per mask of number cards held in a colour, the intervals worth considering.

    Entries are (length, start, end, missing mask, missing count), longest first, then
    fewest missing, then lowest start. An interval whose neighbour number is held is left
    out: widening it to that neighbour costs nothing and scores more.
    """
    table = []
    for held in range(512):
        rows = []
        for a in range(1, 10):
            if a > 1 and held >> (a - 2) & 1:
                continue
            for b in range(a, 10):
                if b < 9 and held >> b & 1:
                    continue
                span = ((1 << (b - a + 1)) - 1) << (a - 1)
                miss = span & ~held
                rows.append((b - a + 1, a, b, miss, _POP[miss]))
        rows.sort(key=lambda r: (-r[0], r[4], r[1]))
        table.append(tuple(rows))
    return tuple(table)


_INTERVALS: Final = _build_intervals()

# (held mask, colour wilds, budget) -> the intervals with at most `budget` missing
# numbers, cut after the first one the colour wilds alone can fill (it dominates the
# rest). Colour wilds above 9 count as 9. Filled lazily, keyed by
# (held * 10 + colour wilds) * 10 + budget: at most 512 * 10 * 10 entries.
_Row5 = tuple[int, int, int, int, int]
_CUT: dict[int, tuple[_Row5, ...]] = {}


def _cut(held: int, k: int, budget: int) -> tuple[_Row5, ...]:
    key = (held * 10 + k) * 10 + budget
    rows = _CUT.get(key)
    if rows is None:
        out = []
        for row in _INTERVALS[held]:
            need = row[4]
            if need <= budget:
                out.append(row)
                if need <= k:
                    break
        rows = _CUT[key] = tuple(out)
    return rows


# ---------------------------------------------------------------------------------------
# Parsing.


# A parsed collection: (number-card mask per colour, colour wilds per colour, copies of
# W# and the numbered-wildcard masks). masks[j] = the numbers n with at least j + 1
# copies of Wn, j = 0..3 (more than 4 copies act like 4: only four colours can use them).
_Held = tuple[list[int], list[int], int, tuple[int, int, int, int]]


def _parse(cards: Iterable[str]) -> _Held:
    held = [0, 0, 0, 0]
    cwild = [0, 0, 0, 0]
    wmask = 0  # numbers with a copy of Wn
    extra: list[int] | None = None  # copies of Wn beyond the first, per number index
    full = 0
    info = _CODE_INFO
    for code in cards:
        t = info.get(code)
        if t is None:
            raise ValueError(f"not a number card or wild card: {code!r}")
        kind, i, bit = t
        if kind == _KIND_NUMBER:
            held[i] |= bit
        elif kind == _KIND_COLOR_WILD:
            cwild[i] += 1
        elif kind == _KIND_NUMBER_WILD:
            if wmask & bit:
                if extra is None:
                    extra = [0] * 9
                extra[i] += 1
            wmask |= bit
        else:
            full += 1
    if extra is None:
        return held, cwild, full, (wmask, 0, 0, 0)
    m2 = m3 = m4 = 0
    for i, count in enumerate(extra):
        if count:
            m2 |= 1 << i
            if count > 1:
                m3 |= 1 << i
                if count > 2:
                    m4 |= 1 << i
    return held, cwild, full, (wmask, m2, m3, m4)


# ---------------------------------------------------------------------------------------
# Candidates and search.

# A candidate: (value, d, numbered-wildcard mask usable, interval row or None).
_Cand = tuple[int, int, int, tuple[int, int, int, int, int] | None]


# (held mask, colour wilds, numbered-wildcard mask, W# copies, bonus, weight) -> the
# colour's candidates. Collections in a game share most of these (73% of the lookups in
# random 4-player games), so they are kept; emptied when full, to bound the memory.
_CANDIDATES: dict[tuple[int, int, int, int, int, int], list[_Cand]] = {}
_CANDIDATES_MAX: Final = 20_000


def _candidates(
    held: int, k: int, wmask: int, full: int, *, bonus: int, weight: int
) -> list[_Cand]:
    """One colour's candidates, best value first, dominated ones removed (a shared
    list: callers never change it).

    `wmask`: numbers of the numbered wildcards held, `full`: copies of `W#`. weight < 0
    asks for plain scores (best_total); otherwise composite tie-rule values.
    """
    key = (held, k, wmask, full, bonus, weight)
    out = _CANDIDATES.get(key)
    if out is None:
        if len(_CANDIDATES) >= _CANDIDATES_MAX:
            _CANDIDATES.clear()
        out = _CANDIDATES[key] = _build_candidates(held, k, wmask, full, bonus, weight)
    return out


def _build_candidates(
    held: int, k: int, wmask: int, full: int, bonus: int, weight: int
) -> list[_Cand]:
    budget = min(k + _POP[wmask] + full, 9)
    out: list[_Cand] = []
    kept: list[tuple[int, int]] = []  # (d, n) of the candidates kept so far
    pop = _POP
    for row in _cut(held, k if k < 9 else 9, budget):  # more colour wilds act like 9
        d = row[4] - k
        if d > 0:
            n = row[3] & wmask
            if d > pop[n] + full:  # one colour uses each number once
                continue
            # dominated by an earlier candidate needing no more and offering a superset?
            for kd, kn in kept:
                if kd <= d and not n & ~kn:
                    break
            else:
                kept.append((d, n))
                out.append((_value(row, bonus, weight), d, n, row))
            continue
        out.append((_value(row, bonus, weight), 0, 0, row))
        return out
    out.append((0, 0, 0, None))  # no run at all
    return out


def _value(row: _Row5, bonus: int, weight: int) -> int:
    """A candidate's value: its score (weight < 0) or its composite tie-rule value."""
    length, a, _b, _miss, need = row
    score = length + bonus if length == 9 else length
    if weight < 0:
        return score
    return (
        score * _SCORE_W
        - need * _WILD_W
        + _SPREAD_W[length]
        + (length * 100 + (9 - need) * 10 + (9 - a)) * weight
    )


def _uncontested(
    lists: list[list[_Cand]], masks: tuple[int, int, int, int]
) -> tuple[list[list[_Cand]], list[int]]:
    """Leave out the numbers with at least as many copies of Wn as colours that can use
    them: each such colour takes a copy there, whatever the others do.

    A candidate keeps d - (its places there) units (at least 0) and its mask without
    them; lists are cut and pruned again, which may free more numbers. Returns the new
    lists and, per number index, how many lists can still use it.
    """
    copies = [sum(m >> i & 1 for m in masks) for i in range(9)]
    while True:
        used = [0] * 9
        for lst in lists:
            x = 0
            for cand in lst:
                x |= cand[2]
            for i in range(9):
                used[i] += x >> i & 1
        free = 0
        for i in range(9):
            if 0 < used[i] <= copies[i]:
                free |= 1 << i
        if not free:
            return lists, used
        reduced = []
        for lst in lists:
            out: list[_Cand] = []
            kept: list[tuple[int, int]] = []
            for value, d0, n0, row in lst:
                d, n = max(0, d0 - _POP[n0 & free]), n0 & ~free
                if not d:
                    out.append((value, 0, 0, row))
                    break
                # dominated as in _candidates?
                for kd, kn in kept:
                    if kd <= d and not n & ~kn:
                        break
                else:
                    kept.append((d, n))
                    out.append((value, d, n, row))
            reduced.append(out)
        lists = reduced


def _bound_table(lst: list[_Cand], budget: int) -> list[int]:
    """t[x] = best value of the list among candidates with d <= x, for x in 0..budget."""
    table = [0] * (budget + 1)
    top = budget + 1  # table[top:] is filled
    for value, d, _n, _row in lst:  # best value first
        if d < top:
            for x in range(d, top):
                table[x] = value
            top = d
            if not d:
                break
    return table


def _cost_table(lst: list[_Cand], costs: list[int], cap: int) -> list[int]:
    """t[x] = best value of the list among candidates costing <= x, for x in 0..cap."""
    table = [0] * (cap + 1)
    top = cap + 1  # table[top:] is filled
    for cand, cost in zip(lst, costs, strict=True):  # best value first
        if cost < top:
            for x in range(cost, top):
                table[x] = cand[0]
            top = cost
            if not cost:
                break
    return table


def _combine(first: list[int], rest: list[int]) -> list[int]:
    """Budget bound of two groups of colours: max over splits of the budget.

    Both tables are non-decreasing, so the best split gives `first` the least budget
    that reaches one of its values: only the steps of `first` are tried.
    """
    last = first[0]
    steps = []  # (x, first[x]) where first grows, after x = 0
    for x in range(1, len(rest)):
        v = first[x]
        if v != last:
            steps.append((x, v))
            last = v
    out = []
    for r in range(len(rest)):
        best = first[0] + rest[r]
        for x, v in steps:
            if x > r:
                break
            t = v + rest[r - x]
            if t > best:  # noqa: PLR1730 - max() is a call, slower in this inner loop
                best = t
        out.append(best)
    return out


def _search(lists: list[list[_Cand]], full: int, budget: int) -> tuple[int, tuple[int, ...]]:
    """Branch-and-bound over four candidate lists; returns (best value, picks).

    The fast path: no numbered wildcard is held twice and `full` <= 1, so a set of
    colours can be filled iff its sum of d minus the popcount of the OR of its masks is
    <= `full`.
    Picks index the lists. Only a strictly better value replaces the best one, and with
    composite values no two different choices share a value, so the result does not
    depend on the order of the lists. The upper bound of the colours still to choose is
    the best they can score together with the numbered wildcards and `W#` left
    (`budget` minus the d of the colours chosen): the condition for all colours at
    once says the d's sum to at most `budget`.
    """
    pop = _POP
    l0, l1, l2, l3 = lists
    g3 = _bound_table(l3, budget)
    g2 = _combine(_bound_table(l2, budget), g3)
    g1 = _combine(_bound_table(l1, budget), g2)
    top = _combine(_bound_table(l0, budget), g1)[budget]  # bound of the whole search
    best = -1
    picks = (0, 0, 0, 0)
    for i0, (v0, d0, n0, _r0) in enumerate(l0):
        if v0 + g1[budget] <= best:
            break
        r0 = budget - d0
        if v0 + g1[r0] <= best:
            continue
        for i1, (v1, d1, n1, _r1) in enumerate(l1):
            s1 = v0 + v1
            if s1 + g2[r0] <= best:
                break
            r1 = r0 - d1
            if r1 < 0 or s1 + g2[r1] <= best:
                continue
            # subsets (sum d, OR n) of the colours so far that need numbered wildcards
            if d1:
                if d0:
                    if d0 + d1 - pop[n0 | n1] > full:
                        continue
                    subs1 = ((d0, n0), (d1, n1), (d0 + d1, n0 | n1))
                else:
                    subs1 = ((d1, n1),)
            elif d0:
                subs1 = ((d0, n0),)
            else:
                subs1 = ()
            for i2, (v2, d2, n2, _r2) in enumerate(l2):
                s2 = s1 + v2
                if s2 + g3[r1] <= best:
                    break
                r2 = r1 - d2
                if r2 < 0 or s2 + g3[r2] <= best:
                    continue
                if d2:
                    ok = True
                    for sd, sn in subs1:
                        if sd + d2 - pop[sn | n2] > full:
                            ok = False
                            break
                    if not ok:
                        continue
                    subs2 = (*subs1, (d2, n2), *((sd + d2, sn | n2) for sd, sn in subs1))
                else:
                    subs2 = subs1
                for i3, (v3, d3, n3, _r3) in enumerate(l3):
                    s3 = s2 + v3
                    if s3 <= best:
                        break
                    if d3:
                        if d3 > r2:
                            continue
                        ok = True
                        for sd, sn in subs2:
                            if sd + d3 - pop[sn | n3] > full:
                                ok = False
                                break
                        if not ok:
                            continue
                    best = s3
                    picks = (i0, i1, i2, i3)
                    if best == top:
                        return best, picks
                    break  # later candidates of l3 are worse
    return best, picks


# A knapsack constraint of the general search: (cost per candidate per list, capacity,
# tables[level][x] = best value of the lists level.. costing at most x; level 4: none).
_Knapsack = tuple[list[list[int]], int, list[list[int]]]
_BIG: Final = 1 << 80  # above any value


def _knapsack(
    lists: list[list[_Cand]],
    kcap: list[int],
    full: int,
    inside: int,
    usable: int,
    *,
    binding: bool = True,
) -> _Knapsack | None:
    """The constraint of the set N = `inside` of numbers (see _search_multi), or None if
    it cannot bind (unless `binding` is False)."""
    outside = usable & ~inside
    cap = full
    for i in range(9):
        if inside >> i & 1:
            cap += kcap[i]
    costs = [[max(0, cand[1] - _POP[cand[2] & outside]) for cand in lst] for lst in lists]
    most = sum(max(row) for row in costs)
    if cap >= most:
        if binding:
            return None
        cap = most
    g = [0] * (cap + 1)
    tables = [g]
    for level in (3, 2, 1, 0):
        g = _combine(_cost_table(lists[level], costs[level], cap), g)
        tables.append(g)
    tables.reverse()
    return costs, cap, tables


# A set S of colours in the general search (the empty set included): (slack, a1, a2, a3,
# a4, avail) with slack = W# - (sum of d over S - the units numbered wildcards can take
# for S), a_j the numbers that at least j colours of S can use and avail the numbers
# with a copy of their Wn left over by S. A colour with (d, n) can join S iff
# d - |n & avail| <= slack.
_Subset = tuple[int, int, int, int, int, int]
# A candidate in the general search: (value, d, mask, cost per knapsack constraint,
# index in its list).
_Row = tuple[int, int, int, tuple[int, ...], int]


def _search_multi(
    lists: list[list[_Cand]],
    colors: list[int],
    full: int,
    masks: tuple[int, int, int, int],
    used: list[int],
) -> tuple[int, tuple[int, ...]]:
    """`_search` for any copies of the numbered wildcards and W# (same results, rules).

    Feasibility: for every set X of colours, sum d - sum_n min(k_n, colours of X that
    can use n) <= `full`, checked incrementally per set (see _Subset). A set whose slack
    covers all the d the colours left can add is dropped: it can no longer fail.

    Bounds. By max-flow/min-cut the same condition reads: for every set N of numbers,
        sum over colours of max(0, d - |n \\ N|) <= full + sum(k'_n for n in N)
    with k'_n = min(copies of Wn, colours that can use n) (`used`); one knapsack
    constraint per N with a cost per candidate. The bound of the colours still to choose
    is the least of the knapsack bounds for N = the numbers with k'_n <= t, t = 0 .. 4
    (t = 0 leaves the units only `W#` can fill, the largest t all units), and of one
    more N found by flipping numbers in and out while the bound drops.

    Forward checking: choosing a colour cuts the lists of the colours after it to the
    candidates that fit with it. Symmetry: two colours with the same candidates (same
    number cards and colour wilds) can swap their runs; the tie rule then wants the one
    earlier in the list in the earlier colour (`colors`: the colour of each list), so
    only those choices are searched.
    """
    pop = _POP
    m1, m2, m3, m4 = masks
    # numbers with exactly 1, 2, 3 and 4 or more copies
    e1, e2, e3, e4 = m1 & ~m2, m2 & ~m3, m3 & ~m4, m4
    kcap = [min(used[i], sum(m >> i & 1 for m in masks)) for i in range(9)]
    usable = 0
    for i in range(9):
        if kcap[i]:
            usable |= 1 << i
    # the knapsack constraints used: (costs per list, capacity, bound tables per level)
    family: list[_Knapsack] = []
    seen: dict[int, _Knapsack | None] = {}

    def constraint(inside: int) -> _Knapsack | None:
        if inside not in seen:
            seen[inside] = _knapsack(lists, kcap, full, inside, usable)
        return seen[inside]

    def root(k: _Knapsack | None) -> tuple[int, int]:
        """The bound of the whole search, then of the lists after the first."""
        return (k[2][0][k[1]], k[2][1][k[1]]) if k else (_BIG, _BIG)

    for t in sorted({0, *kcap}):
        k = constraint(sum(1 << i for i in range(9) if 0 < kcap[i] <= t))
        if k:
            family.append(k)
    if family:
        # a tighter set N nearby: add or remove one number while the bound does not
        # grow, to sets not tried yet (at most 24 more)
        inside = min(seen, key=lambda x: root(seen[x]))
        moved = True
        while moved and len(seen) < 30:
            moved = False
            for i in range(9):
                other = inside ^ 1 << i
                if (
                    usable >> i & 1
                    and other not in seen
                    and root(constraint(other)) <= root(seen[inside])
                ):
                    inside = other
                    moved = True
                    break
        k = seen[inside]
        if k is not None and all(k is not other for other in family):
            family.append(k)
    else:  # nothing binds but the conditions per set of colours
        k = _knapsack(lists, kcap, full, usable, usable, binding=False)
        assert k is not None
        family.append(k)
    tables = [[k[2][level] for k in family] for level in range(5)]
    top = min(root(k) for k in family)[0]
    # rows: (value, d, mask, costs per constraint, index in its list)
    rows = [
        [(*cand[:3], tuple([k[0][level][i] for k in family]), i) for i, cand in enumerate(lst)]
        for level, lst in enumerate(lists)
    ]
    # the most d the lists after each level can still add: sets with that much slack
    # are dropped
    most_d = [max(cand[1] for cand in lst) for lst in lists]
    after_d = [sum(most_d[level + 1 :]) for level in range(4)]
    # symmetry: per level, (earlier level, True if this index must be >= its index)
    same = [[(c[1], c[2], c[3]) for c in lst] for lst in lists]
    sym: list[list[tuple[int, bool]]] = [
        [(p, colors[p] < colors[q]) for p in range(q) if same[p] == same[q]] for q in range(4)
    ]
    best = -1
    picks = [0, 0, 0, 0]
    path = [0, 0, 0, 0]

    def limits(level: int) -> tuple[int, int]:
        """The least and the largest index allowed at `level` by the symmetry rule."""
        lo, hi = 0, 99
        for p, up in sym[level]:
            if up:
                lo = max(lo, path[p])
            else:
                hi = min(hi, path[p])
        return lo, hi

    def go(
        level: int, value: int, left: tuple[int, ...], subs: list[_Subset], todo: list[list[_Row]]
    ) -> bool:
        """Choose at `level` < 3 from todo[0]; todo holds the lists of this level and the
        next ones, cut to the candidates that fit with the colours chosen so far (forward
        checking). True once the bound of the search is met."""
        nonlocal best, picks
        after = tables[level + 1]
        deeper = todo[1:]
        bound = min(
            sum([lst[0][0] for lst in deeper]), *[g[x] for g, x in zip(after, left, strict=True)]
        )
        keep = after_d[level]
        lo, hi = limits(level)
        for v, d, n, cost, index in todo[0]:
            if index < lo:
                continue
            if index > hi:
                return False
            s = value + v
            if s + bound <= best:
                return False
            rest = tuple([x - y for x, y in zip(left, cost, strict=True)])
            if min(rest) < 0 or s + min([g[x] for g, x in zip(after, rest, strict=True)]) <= best:
                continue
            # the sets with this colour (the others are as before)
            new: list[_Subset] = []
            if d:
                for slack, a1, a2, a3, a4, avail in subs:
                    left_over = slack + pop[n & avail] - d
                    if left_over < keep:
                        b1 = a1 | n
                        b2 = a2 | (a1 & n)
                        b3 = a3 | (a2 & n)
                        b4 = a4 | (a3 & n)
                        free = m1 & ~(e1 & b1 | e2 & b2 | e3 & b3 | e4 & b4)
                        new.append((left_over, b1, b2, b3, b4, free))
            path[level] = index
            if level == 2:
                # the last colour: its first candidate that fits (best value first)
                lo3, hi3 = limits(3)
                for v3, d3, n3, _cost3, index3 in deeper[0]:
                    if index3 < lo3:
                        continue
                    s3 = s + v3
                    if s3 <= best or index3 > hi3:
                        break
                    if d3:
                        fits = True
                        for slack, _a1, _a2, _a3, _a4, avail in new:
                            if d3 - pop[n3 & avail] > slack:
                                fits = False
                                break
                        if not fits:
                            continue
                    best = s3
                    path[3] = index3
                    picks = path.copy()
                    if best == top:
                        return True
                    break
                continue
            if new:
                cut = []
                for lst in deeper:
                    out = []
                    for row in lst:
                        if row[1]:
                            d2, n2 = row[1], row[2]
                            for slack, _a1, _a2, _a3, _a4, avail in new:
                                if d2 - pop[n2 & avail] > slack:
                                    break
                            else:
                                out.append(row)
                        else:
                            out.append(row)
                    cut.append(out)
                if s + sum([lst[0][0] for lst in cut]) <= best:
                    continue
                subs_next = [sub for sub in subs if sub[0] < keep] + new
            else:
                cut = deeper
                subs_next = subs
            if go(level + 1, s, rest, subs_next, cut):
                return True
        return False

    start = [(full, 0, 0, 0, 0, m1)] if full < sum(most_d) else []
    go(0, 0, tuple(k[1] for k in family), start, rows)
    return best, tuple(picks)


def _one_shared(lists: list[list[_Cand]]) -> list[_Cand]:
    """`_search` when the candidates can use one wild card between them (one numbered
    wildcard or `W#`, the only one any candidate can use): the same picks.

    Every candidate then needs d = 0 or 1, and at most one colour can take d = 1 (the
    condition for all colours at once). A list's last candidate is its best with d = 0
    (the lists end at the first one), its first its best of all: so each colour takes its
    last candidate, except the one colour (if any) whose first one gains the most over
    its last. With composite values no two choices tie, so this is the one `_search`
    finds; with plain scores a tie changes the picks, never the total.
    """
    chosen = [lst[-1] for lst in lists]
    gain = 0
    taker = -1
    for c, lst in enumerate(lists):
        more = lst[0][0] - lst[-1][0]
        if more > gain:
            gain = more
            taker = c
    if taker >= 0:
        chosen[taker] = lists[taker][0]
    return chosen


def _solve(cards: Iterable[str], perfect_bonus: int, composite: bool) -> tuple[list[_Cand], _Held]:
    """The chosen candidate per colour (R, B, O, G) and the parsed collection."""
    if perfect_bonus < 0:
        raise ValueError("perfect_bonus must be >= 0")
    hold = held, cwild, full, masks = _parse(cards)
    wmask, m2 = masks[0], masks[1]
    lists = []
    cache = _CANDIDATES
    for c in range(4):
        weight = _COLOR_WEIGHT[c] if composite else -1
        lst = cache.get((held[c], cwild[c], wmask, full, perfect_bonus, weight))
        if lst is None:
            lst = _candidates(held[c], cwild[c], wmask, full, bonus=perfect_bonus, weight=weight)
        lists.append(lst)
    l0, l1, l2, l3 = lists
    if not (wmask or full) or len(l0) == len(l1) == len(l2) == len(l3) == 1:
        # nothing shared between the colours, or no choice: each colour's best
        return [l0[0], l1[0], l2[0], l3[0]], hold
    if not m2 and full <= 1:
        # Fast path: the deck's copies of the numbered wildcards and W#.
        usable = 0  # numbered wildcards that some candidate can use
        for lst in lists:
            for cand in lst:
                usable |= cand[2]
        if _POP[usable] + full == 1:
            return _one_shared(lists), hold
        # Colours with the best single run first. Any order gives the same answer (see
        # _search); this one tends to find the optimum early.
        order = sorted(range(4), key=lambda c: (-lists[c][0][0], c))
        _best, picks = _search([lists[c] for c in order], full, _POP[usable] + full)
    else:
        lists, used = _uncontested(lists, masks)
        if max(len(lst) for lst in lists) == 1:
            return [lst[0] for lst in lists], hold
        order = sorted(range(4), key=lambda c: (-lists[c][0][0], c))
        _best, picks = _search_multi([lists[c] for c in order], order, full, masks, used)
    chosen = [lists[0][0]] * 4
    for pos, c in enumerate(order):
        chosen[c] = lists[c][picks[pos]]
    return chosen, hold


def best_total(cards: Iterable[str], perfect_bonus: int = 1) -> int:
    """The highest score of a collection: `score_collection(...).total`, faster.

    Skips the tie rule and the placement of the wild cards. Same ValueErrors.
    """
    chosen, _hold = _solve(cards, perfect_bonus, composite=False)
    return chosen[0][0] + chosen[1][0] + chosen[2][0] + chosen[3][0]


def _place(
    units: list[int], usable: list[int], masks: tuple[int, int, int, int]
) -> tuple[list[int], list[int]]:
    """Match numbered wildcards to the colours' units to fill (d per colour).

    `usable`: per colour, the numbers a numbered wildcard may fill. Returns (per number
    index, the mask of the colours that get its numbered wildcard; per colour, the
    copies of `W#` it gets). Number n goes to at most as many colours as there are
    copies of `Wn`, each colour once. Augmenting paths in colour order R, B, O, G and
    number order 1 to 9; `W#` covers the units left unmatched (no more than the copies
    held, by the condition of the search).
    """
    room = list(_BITS[masks[0]])  # copies of Wn per number index (at most 4 count)
    if masks[1]:
        for mask in masks[1:]:
            for i, bit in enumerate(_BITS[mask]):
                room[i] += bit
    owners = [0] * 9  # colour masks
    numbers = [_INDICES[mask] for mask in usable]

    def augment(c: int, seen: list[bool]) -> bool:
        bit = 1 << c
        for i in numbers[c]:
            if seen[i] or owners[i] & bit:
                continue
            seen[i] = True
            if room[i]:
                room[i] -= 1
                owners[i] |= bit
                return True
            for other in range(4):
                if owners[i] >> other & 1 and augment(other, seen):
                    owners[i] ^= bit | 1 << other
                    return True
        return False

    fulls = [0, 0, 0, 0]
    for c in range(4):
        for _ in range(units[c]):
            if not augment(c, [False] * 9):
                fulls[c] += 1
    return owners, fulls


def _place_one(c: int, usable: list[int]) -> tuple[list[int], list[int]]:
    """`_place` for one unit to fill, in colour `c`: the numbered wildcard of the lowest
    number it may use (every number in `usable` has a copy), else `W#`."""
    if usable[c]:
        owners = [0] * 9
        owners[_INDICES[usable[c]][0]] = 1 << c
        return owners, _NO_FULLS
    fulls = [0, 0, 0, 0]
    fulls[c] = 1
    return _NO_OWNERS, fulls


_NUMBER_CODES: Final = tuple(tuple(f"{c}{n}" for n in range(1, 10)) for c in COLORS)
_COLOR_WILD_CODES: Final = tuple(f"{c}#" for c in COLORS)
_NUMBER_WILD_CODES: Final = tuple(f"W{n}" for n in range(1, 10))
_NO_RUN: Final = ColorScore(points=0, run=())
_NO_OWNERS: Final = [0] * 9
_NO_FULLS: Final = [0, 0, 0, 0]


def score_collection(cards: Iterable[str], perfect_bonus: int = 1) -> Score:
    """The highest score of a collection with its run per colour (module docstring).

    Any number of copies of each card is accepted. Raises ValueError for a code that is
    not a number card or a wild card (currency cards included) and for a negative
    `perfect_bonus`.

    A collection whose only wild cards are colour wild cards (no `Wn`, no `W#`) is scored
    colour by colour: nothing is shared between the colours, so each colour's result is
    that of its cards alone (`_color_score`, cached).
    """
    if not isinstance(cards, (tuple, list)):
        cards = list(cards)
    if perfect_bonus >= 0 and _SHARED_WILDS.isdisjoint(cards):
        masks = [0, 0, 0, 0]
        wilds = [0, 0, 0, 0]
        number_bit = _NUMBER_BIT
        color_wild = _COLOR_WILD_INDEX
        for code in cards:
            hit = number_bit.get(code)
            if hit is not None:
                masks[hit[0]] |= hit[1]
                continue
            c = color_wild.get(code)
            if c is None:
                break  # an invalid code: the general path raises
            wilds[c] += 1
        else:
            colors: dict[str, ColorScore] = {}
            total = 0
            for c, color in enumerate(COLORS):
                if masks[c] or wilds[c]:
                    color_score = _color_score(c, masks[c], wilds[c], perfect_bonus)
                    total += color_score.points
                    colors[color] = color_score
                else:
                    colors[color] = _NO_RUN
            return Score(total=total, colors=colors)
    return _score_general(cards, perfect_bonus)


_NUMBER_BIT: Final = {
    code: (c, 1 << i) for c in range(4) for i, code in enumerate(_NUMBER_CODES[c])
}
_COLOR_WILD_INDEX: Final = {code: c for c, code in enumerate(_COLOR_WILD_CODES)}
_SHARED_WILDS: Final = frozenset((*_NUMBER_WILD_CODES, FULL_WILD))  # several colours can use them


@lru_cache(maxsize=16384)
def _color_score(c: int, mask: int, wilds: int, perfect_bonus: int) -> ColorScore:
    """The result of colour `c` for its numbers `mask` (bit n-1 for n) and `wilds` of its
    colour wild cards, no other wild card: the general path on that colour's cards."""
    cards = [code for i, code in enumerate(_NUMBER_CODES[c]) if mask >> i & 1]
    cards += [_COLOR_WILD_CODES[c]] * wilds
    return _score_general(cards, perfect_bonus).colors[COLORS[c]]


def _score_general(cards: Iterable[str], perfect_bonus: int) -> Score:
    """`score_collection` for any collection."""
    chosen, hold = _solve(cards, perfect_bonus, composite=True)
    _held, cwild, full, masks = hold
    if masks[1] or full > 1:
        # General path: units to fill with numbered wildcards or W#, from the runs
        # themselves (the search leaves out the numbers that are not contested).
        units = [0, 0, 0, 0]
        usable = [0, 0, 0, 0]
        for c in range(4):
            row = chosen[c][3]
            if row is not None and row[4] > cwild[c]:
                units[c] = row[4] - cwild[c]
                usable[c] = row[3] & masks[0]
    else:
        units = [cand[1] for cand in chosen]
        usable = [cand[2] for cand in chosen]
    if units[0] or units[1] or units[2] or units[3]:
        if sum(units) == 1:
            owners, fulls = _place_one(units.index(1), usable)
        else:
            owners, fulls = _place(units, usable, masks)
        if sum(fulls) > full:  # pragma: no cover - excluded by the search
            raise AssertionError("scoring: no placement for the chosen runs")
    else:
        owners, fulls = _NO_OWNERS, _NO_FULLS

    colors: dict[str, ColorScore] = {}
    total = 0
    for c, color in enumerate(COLORS):
        row = chosen[c][3]
        if row is None:
            colors[color] = _NO_RUN
            continue
        length, a, b, miss, _need = row
        run = list(_NUMBER_CODES[c][a - 1 : b])
        if miss:
            rest = []
            for i in range(a - 1, b):
                if miss >> i & 1:
                    if owners[i] >> c & 1:
                        run[i - a + 1] = _NUMBER_WILD_CODES[i]
                    else:
                        rest.append(i)
            if fulls[c]:
                for _ in range(fulls[c]):
                    run[rest.pop() - a + 1] = FULL_WILD
            for i in rest:
                run[i - a + 1] = _COLOR_WILD_CODES[c]
        points = length + perfect_bonus if length == 9 else length
        total += points
        colors[color] = ColorScore(points=points, run=tuple(run))
    return Score(total=total, colors=colors)
