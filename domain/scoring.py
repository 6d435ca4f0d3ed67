"""Optimal scoring of a collection (rules.md section 5).

Each wild card is placed at most once: a colour wild (`R#` ...) in its colour at any
number, a numbered wildcard `Wn` at number n of any colour, `W#` anywhere. Per colour
only the longest run of consecutive numbers counts (1 point per card in it, duplicates
add nothing); a run of all nine earns `perfect_bonus` more. `score_collection` finds the
placement of the wild cards that gives the highest total and reports the runs.

Algorithm (exact). Per colour, a candidate run is an interval [a, b] of numbers; the
numbers of it that the colour's number cards do not cover form a 9-bit mask m. The
colour's own wilds fill up to k of them (k = colour wilds held); the others,
d = max(0, |m| - k), must be filled by numbered wildcards Wn with n in m or by `W#`.
A choice of one interval per colour can be filled iff for every set X of colours
    sum(d_c for c in X) - |OR(m_c & held_Wn for c in X)| <= (1 if W# is held else 0)
(Hall's theorem with deficiency: `W#` fits any one place). The search is a
branch-and-bound over the four colours with, per colour, the candidates in decreasing
value and dominated ones removed (a candidate is dominated by a better one needing no
more numbered wildcards from a superset of places; an interval needing none dominates
every later one of its colour). The Hall conditions are checked incrementally; the
upper bound of the colours left is the best they can do with the numbered wildcards
left (Hall's condition for all colours at once: sum of d <= usable Wn + W#). The wild
cards are then placed by an augmenting-path matching.

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

# code -> (kind, colour index, bit). kind 0: number card, 1: colour wild, 2: Wn.
_KIND_NUMBER: Final = 0
_KIND_COLOR_WILD: Final = 1
_KIND_NUMBER_WILD: Final = 2
_CODE_INFO: Final[dict[str, tuple[int, int, int]]] = {}
for _ci, _c in enumerate(COLORS):
    for _n in range(1, 10):
        _CODE_INFO[f"{_c}{_n}"] = (_KIND_NUMBER, _ci, 1 << (_n - 1))
    _CODE_INFO[f"{_c}#"] = (_KIND_COLOR_WILD, _ci, 0)
for _n in range(1, 10):
    _CODE_INFO[f"W{_n}"] = (_KIND_NUMBER_WILD, 0, 1 << (_n - 1))

_MAX_COLOR_WILDS: Final = 2  # copies in the deck (rules.md section 1)

# Composite value of a candidate run for the tie rule (see module docstring):
#   score * 10**21 - wilds * 10**19 + 5**length * 10**12 + key * _COLOR_WEIGHT[colour]
# with key = length * 100 + (9 - wilds) * 10 + (9 - start) < 1000. Summed over the
# colours this orders placements by total (at most 4 * (9 + bonus)), then fewest wilds
# (at most 18), then by run lengths sorted in decreasing order (the sum of 5**length
# over four colours, below 10**7, compares them like that), then colour by colour. No
# two different choices of runs get the same value.
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
# rest). Filled lazily: at most 512 * 3 * 10 entries.
_CUT: dict[tuple[int, int, int], tuple[tuple[int, int, int, int, int], ...]] = {}


def _cut(held: int, k: int, budget: int) -> tuple[tuple[int, int, int, int, int], ...]:
    key = (held, k, budget)
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


def _parse(cards: Iterable[str]) -> tuple[list[int], list[int], int, int]:
    """(number-card masks per colour, colour wilds per colour, Wn mask, W# count)."""
    held = [0, 0, 0, 0]
    cwild = [0, 0, 0, 0]
    wmask = 0
    full = 0
    info = _CODE_INFO
    for code in cards:
        t = info.get(code)
        if t is None:
            if code == FULL_WILD:
                if full:
                    raise ValueError("a collection holds at most one W#")
                full = 1
                continue
            raise ValueError(f"not a number card or wild card: {code!r}")
        kind, ci, bit = t
        if kind == _KIND_NUMBER:
            held[ci] |= bit
        elif kind == _KIND_COLOR_WILD:
            if cwild[ci] == _MAX_COLOR_WILDS:
                raise ValueError(f"a collection holds at most two {COLORS[ci]}#")
            cwild[ci] += 1
        else:
            if wmask & bit:
                raise ValueError(f"a collection holds at most one {code}")
            wmask |= bit
    return held, cwild, wmask, full


# ---------------------------------------------------------------------------------------
# Candidates and search.

# A candidate: (value, d, numbered-wildcard mask usable, interval row or None).
_Cand = tuple[int, int, int, tuple[int, int, int, int, int] | None]


def _candidates(
    held: int, k: int, wmask: int, full: int, *, bonus: int, weight: int
) -> list[_Cand]:
    """One colour's candidates, best value first, dominated ones removed.

    weight < 0 asks for plain scores (best_total); otherwise composite tie-rule values.
    """
    budget = min(k + _POP[wmask] + full, 9)
    out: list[_Cand] = []
    kept_d: list[int] = []
    kept_n: list[int] = []
    for row in _cut(held, k, budget):
        length, a, _b, miss, need = row
        score = length + bonus if length == 9 else length
        if weight < 0:
            value = score
        else:
            value = (
                score * _SCORE_W
                - need * _WILD_W
                + _SPREAD_W[length]
                + (length * 100 + (9 - need) * 10 + (9 - a)) * weight
            )
        d = need - k
        if d <= 0:
            out.append((value, 0, 0, row))
            return out
        n = miss & wmask
        if d > _POP[n] + full:
            continue
        # dominated by an earlier candidate needing no more and offering a superset?
        for i in range(len(kept_d)):
            if kept_d[i] <= d and not n & ~kept_n[i]:
                break
        else:
            kept_d.append(d)
            kept_n.append(n)
            out.append((value, d, n, row))
    out.append((0, 0, 0, None))  # no run at all
    return out


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


def _combine(first: list[int], rest: list[int]) -> list[int]:
    """Budget bound of two groups of colours: max over splits of the budget."""
    return [max(first[x] + rest[r - x] for x in range(r + 1)) for r in range(len(rest))]


def _search(lists: list[list[_Cand]], full: int, budget: int) -> tuple[int, tuple[int, ...]]:
    """Branch-and-bound over four candidate lists; returns (best value, picks).

    Picks index the lists. Only a strictly better value replaces the best one, and with
    composite values no two different choices share a value, so the result does not
    depend on the order of the lists. The upper bound of the colours still to choose is
    the best they can score together with the numbered wildcards and `W#` left
    (`budget` minus the d of the colours chosen): Hall's condition for all colours at
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


def _solve(cards: Iterable[str], perfect_bonus: int, composite: bool) -> tuple[list[_Cand], int]:
    """The chosen candidate per colour (R, B, O, G) and the number of W# held."""
    if perfect_bonus < 0:
        raise ValueError("perfect_bonus must be >= 0")
    held, cwild, wmask, full = _parse(cards)
    lists = [
        _candidates(
            held[c],
            cwild[c],
            wmask,
            full,
            bonus=perfect_bonus,
            weight=_COLOR_WEIGHT[c] if composite else -1,
        )
        for c in range(4)
    ]
    if not (wmask or full) or max(len(lst) for lst in lists) == 1:
        # nothing shared between the colours, or no choice: each colour's best
        return [lst[0] for lst in lists], full
    # Numbered wildcards that no candidate can use do not count in the budget.
    usable = 0
    for lst in lists:
        for cand in lst:
            usable |= cand[2]
    # Colours with the best single run first. Any order gives the same answer (see
    # _search); this one tends to find the optimum early.
    order = sorted(range(4), key=lambda c: (-lists[c][0][0], c))
    _best, picks = _search([lists[c] for c in order], full, _POP[usable] + full)
    chosen = [lists[0][0]] * 4
    for pos, c in enumerate(order):
        chosen[c] = lists[c][picks[pos]]
    return chosen, full


def best_total(cards: Iterable[str], perfect_bonus: int = 1) -> int:
    """The highest score of a collection: `score_collection(...).total`, faster.

    Skips the tie rule and the placement of the wild cards. Same ValueErrors.
    """
    chosen, _full = _solve(cards, perfect_bonus, composite=False)
    return chosen[0][0] + chosen[1][0] + chosen[2][0] + chosen[3][0]


def _place(chosen: list[_Cand], full: int) -> tuple[list[int], int]:
    """Match numbered wildcards to the colours that need them (d > 0).

    Returns (owner per number index, or -1; colour that gets `W#`, or -1). Augmenting
    paths in colour order R, B, O, G and number order 1 to 9; `W#` covers the one unit
    (at most, by Hall's condition) left unmatched.
    """
    owner = [-1] * 9
    usable = [[i for i in range(9) if cand[2] >> i & 1] for cand in chosen]

    def augment(c: int, seen: list[bool]) -> bool:
        for i in usable[c]:
            if not seen[i]:
                seen[i] = True
                if owner[i] < 0 or augment(owner[i], seen):
                    owner[i] = c
                    return True
        return False

    full_to = -1
    for c in range(4):
        for _ in range(chosen[c][1]):
            if not augment(c, [False] * 9):
                if full_to >= 0 or not full:  # pragma: no cover - excluded by Hall
                    raise AssertionError("scoring: no placement for the chosen runs")
                full_to = c
    return owner, full_to


_NUMBER_CODES: Final = tuple(tuple(f"{c}{n}" for n in range(1, 10)) for c in COLORS)
_COLOR_WILD_CODES: Final = tuple(f"{c}#" for c in COLORS)
_NUMBER_WILD_CODES: Final = tuple(f"W{n}" for n in range(1, 10))
_NO_RUN: Final = ColorScore(points=0, run=())


def score_collection(cards: Iterable[str], perfect_bonus: int = 1) -> Score:
    """The highest score of a collection with its run per colour (module docstring).

    Raises ValueError for a code that is not a number card or a wild card (currency
    cards included), for more copies of a wild card than the deck holds (two of each
    colour wild, one of each other), and for a negative `perfect_bonus`.
    """
    chosen, full = _solve(cards, perfect_bonus, composite=True)
    if any(cand[1] for cand in chosen):
        owner, full_to = _place(chosen, full)
    else:
        owner, full_to = [-1] * 9, -1

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
                    if owner[i] == c:
                        run[i - a + 1] = _NUMBER_WILD_CODES[i]
                    else:
                        rest.append(i)
            if full_to == c:
                run[rest.pop() - a + 1] = FULL_WILD
            for i in rest:
                run[i - a + 1] = _COLOR_WILD_CODES[c]
        points = length + perfect_bonus if length == 9 else length
        total += points
        colors[color] = ColorScore(points=points, run=tuple(run))
    return Score(total=total, colors=colors)
