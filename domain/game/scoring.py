"""Optimal scoring of a collection (rules.md section 5).

Each wild card is placed at most once: a colour wild (`R#` ...) in its colour at any
number, a numbered wildcard `Wn` at number n of any colour, `W#` anywhere. Per colour
only the longest run of consecutive numbers counts (1 point per card in it, duplicates
add nothing); a run of all nine earns `perfect_bonus` more. `score_collection` finds the
placement of the wild cards that gives the highest total and reports the runs.

Copies. A collection holds each card at most as many times as the 129-card game
(`domain.game.cards.check_copies` refuses more at the edges): at most one `Wn` of each number
and one `W#`; number cards and colour wilds may repeat. That bound is what keeps the
search below small. A collection beyond it (a game stored before the check) is still
scored, never refused: copies of a `Wn` or of `W#` beyond the first are ignored (they
score nothing and appear in no run), while colour wilds count however many there are
(they stay in their own colour, so nothing changes; more than nine act like nine).

Algorithm (exact). Per colour, the candidate runs are intervals of numbers that do not stop
next to a number card of the colour (widening one would be free); the numbers its cards
miss are filled by the colour's own wilds first, then by shared wild cards (`Wn`, `W#`). A
branch-and-bound picks one candidate per colour under Hall's condition on the shared wild
cards, and augmenting paths place them. Values are composite (`_SCORE_W`), so the best
choice is one and the same whatever the search order; `best_total` runs the same search on
scores alone and stops at the first choice that reaches the highest total. Why this is
exact: docs/design-notes.md.

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

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Final

from domain.game.cards import COLORS, FULL_WILD
from domain.game.model import ColorScore, Score

__all__ = [
    "ColorScore",
    "Score",
    "best_total",
    "cached_best_total",
    "score_collection",
    "total_bound",
]


# ---------------------------------------------------------------------------------------
# Tables built once at import.

_POP: Final[tuple[int, ...]] = tuple(i.bit_count() for i in range(512))  # bit n-1: number n
_INDICES: Final = tuple(tuple(i for i in range(9) if m >> i & 1) for m in range(512))

# code -> (kind, index, bit). kind 0: number card (index: colour), 1: colour wild
# (colour), 2: Wn (number - 1), 3: W#.
_KIND_NUMBER: Final = 0
_KIND_COLOR_WILD: Final = 1
_KIND_NUMBER_WILD: Final = 2
_CODE_INFO: Final[dict[str, tuple[int, int, int]]] = {}
for _ci, _c in enumerate(COLORS):
    for _n in range(1, 10):
        _CODE_INFO[f"{_c}{_n}"] = (_KIND_NUMBER, _ci, 1 << (_n - 1))
    _CODE_INFO[f"{_c}#"] = (_KIND_COLOR_WILD, _ci, 0)
for _n in range(1, 10):
    _CODE_INFO[f"W{_n}"] = (_KIND_NUMBER_WILD, _n - 1, 1 << (_n - 1))
_CODE_INFO[FULL_WILD] = (3, 0, 0)

_NUMBER_CODES: Final = tuple(tuple(f"{c}{n}" for n in range(1, 10)) for c in COLORS)
_COLOR_WILD_CODES: Final = tuple(f"{c}#" for c in COLORS)
_NUMBER_WILD_CODES: Final = tuple(f"W{n}" for n in range(1, 10))
_NO_RUN: Final = ColorScore(points=0, run=())
_NO_OWNER: Final = (-1,) * 9
_NO_FULLS: Final = (0, 0, 0, 0)

# Composite value of a candidate run for the tie rule (see module docstring):
#   score * 10**21 - wilds * 10**19 + 5**length * 10**12 + key * _COLOR_WEIGHT[colour]
# with key = length * 100 + (9 - wilds) * 10 + (9 - start) < 1000. Summed over the
# colours this orders placements by total (at most 4 * (9 + bonus)), then fewest wilds
# (at most 36), then by run lengths sorted in decreasing order (the sum of 5**length
# over four colours, below 10**19 / 1.2, compares them like that), then colour by
# colour. No two different choices of runs get the same value, so the best choice is
# one and the same whatever order the search takes.
_SCORE_W: Final = 10**21
_WILD_W: Final = 10**19
_SPREAD_W: Final = tuple(5**length * 10**12 for length in range(10))
_COLOR_WEIGHT: Final = (10**9, 10**6, 10**3, 1)

# An interval of numbers: (length, start, end, mask of the numbers not held, their count).
_Interval = tuple[int, int, int, int, int]


def _build_intervals() -> tuple[tuple[_Interval, ...], ...]:
    """Per mask of number cards held in a colour, its candidate intervals in the order of
    the tie rule: longest first, then fewest numbers missing, then lowest start. An
    interval whose neighbour number is held is left out (see the module docstring)."""
    table = []
    for held in range(512):
        rows = []
        for a in range(1, 10):
            if a > 1 and held >> (a - 2) & 1:
                continue
            for b in range(a, 10):
                if b < 9 and held >> b & 1:
                    continue
                miss = ((1 << (b - a + 1)) - 1) << (a - 1) & ~held
                rows.append((b - a + 1, a, b, miss, _POP[miss]))
        rows.sort(key=lambda r: (-r[0], r[4], r[1]))
        table.append(tuple(rows))
    return tuple(table)


_INTERVALS: Final = _build_intervals()


# ---------------------------------------------------------------------------------------
# Parsing and candidates.


def _parse(cards: Iterable[str]) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """(number-card mask per colour, colour wilds per colour, mask of the numbers with a
    `Wn`, 1 if `W#` is held else 0). Copies of a `Wn` or of `W#`
    beyond the first are ignored (see the module docstring)."""
    held = [0, 0, 0, 0]
    cwild = [0, 0, 0, 0]
    wmask = full = 0
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
            wmask |= bit
        else:
            full = 1
    return tuple(held), tuple(cwild), wmask, full


# A candidate: (value, d, usable numbers n, interval or None for no run); the value is
# composite (`_choice`) or the score alone (`_totals`).
_Cand = tuple[int, int, int, _Interval | None]
# A colour's choice: (its candidates best first, the steps (x, t(x)) where the best value
# t(x) among the candidates with d <= x grows, from x = 0; the union of their n).
_Choice = tuple[tuple[_Cand, ...], tuple[tuple[int, int], ...], int]


def run_points(length: int, bonus: int) -> int:
    """A run's points (rules 5): one per card, and the perfect bonus for a whole 1..9."""
    return length + bonus if length == 9 else length


# Collections of a game share most of their colours, so the candidates are kept (most
# lookups in simulated games hit). They do not depend on the colour.
@lru_cache(maxsize=16384)
def _candidates(held: int, k: int, wmask: int, full: int, bonus: int) -> tuple[_Cand, ...]:
    """A colour's candidates valued by their score, in the order of the tie rule (best
    first): `held` its number cards, `k` its colour wilds, `wmask` the numbered wildcards
    held at numbers it does not hold, `full` the copies of `W#` (0 or 1)."""
    cands: list[_Cand] = []
    kept: list[tuple[int, int]] = []  # (d, n) of the candidates needing shared wild cards
    most = k + _POP[wmask] + full  # the most numbers a run can be missing
    pop = _POP
    for row in _INTERVALS[held]:
        length, _a, _b, miss, need = row
        if need > most:
            continue
        d = need - k
        if d <= 0:
            # needs nothing shared: every later candidate is worse and needs no less
            cands.append((length + bonus if length == 9 else length, 0, 0, row))
            return tuple(cands)
        n = miss & wmask
        if d > pop[n] + full:
            continue  # not enough shared wild cards fit it, even alone
        # a better candidate needs no more, from a superset of numbers? (a loop: any()
        # over a generator cost much of the scoring of a collection with many wild cards)
        for kd, kn in kept:
            if kd <= d and not n & ~kn:
                break
        else:
            kept.append((d, n))
            # run_points inline: this loop is the innermost of a cold collection's scoring
            cands.append((length + bonus if length == 9 else length, d, n, row))
    cands.append((0, 0, 0, None))
    return tuple(cands)


def _steps(cands: tuple[_Cand, ...]) -> _Choice:
    """A colour's choice from its candidates, best first."""
    steps: list[tuple[int, int]] = []
    usable = 0
    for value, d, n, _row in cands:  # best first: a step needs less than the better ones
        if not steps or d < steps[-1][0]:
            steps.append((d, value))
        usable |= n
    return cands, tuple(reversed(steps)), usable


@lru_cache(maxsize=16384)
def _choice(held: int, k: int, wmask: int, full: int, bonus: int, c: int) -> _Choice:
    """Colour `c`'s candidates (`_candidates`) with composite values (`_SCORE_W`)."""
    weight = _COLOR_WEIGHT[c]
    cands: list[_Cand] = []
    row: _Interval | None
    for score, d, n, row in _candidates(held, k, wmask, full, bonus):
        if row is None:
            cands.append((0, d, n, row))
            continue
        length, a, _b, _miss, need = row
        value = (
            score * _SCORE_W
            - need * _WILD_W
            + _SPREAD_W[length]
            + (length * 100 + (9 - need) * 10 + (9 - a)) * weight
        )
        cands.append((value, d, n, row))
    return _steps(tuple(cands))


@lru_cache(maxsize=16384)
def _totals(held: int, k: int, wmask: int, full: int, bonus: int) -> _Choice:
    """A colour's candidates valued by their score alone (`best_total`)."""
    return _steps(_candidates(held, k, wmask, full, bonus))


# ---------------------------------------------------------------------------------------
# The search.


def _combine(steps: tuple[tuple[int, int], ...], rest: Sequence[int]) -> list[int]:
    """The budget table (t[x] = the best they can add with x shared wild cards, x = 0 ..
    len(rest) - 1) of one colour, given by its steps, and a group of colours given by
    its table `rest`: the best split of each budget.

    `rest` grows with x, so the best split gives the colour the least budget that
    reaches one of its values: only its steps are tried.
    """
    out = []
    for r in range(len(rest)):
        best = 0
        for x, v in steps:
            if x > r:
                break
            t = v + rest[r - x]
            if t > best:  # noqa: PLR1730 - max() is a call, slower in this inner loop
                best = t
        out.append(best)
    return out


# Budget tables of groups of colours, by their steps: collections of a game share most of
# their colours.
@lru_cache(maxsize=16384)
def _table(steps: tuple[tuple[tuple[int, int], ...], ...], budget: int) -> tuple[int, ...]:
    """The budget table (x = 0 .. budget) of the colours of the steps `steps`."""
    if not steps:
        return (0,) * (budget + 1)
    return tuple(_combine(steps[0], _table(steps[1:], budget)))


@lru_cache(maxsize=16384)
def _bounds(
    steps: tuple[tuple[tuple[int, int], ...], ...], budget: int
) -> tuple[tuple[int, ...], ...]:
    """The budget tables of the colours of `steps` from each colour on (`_table`), and of
    none: the search's bounds, in one lookup."""
    return tuple(_table(steps[k:], budget) for k in range(len(steps) + 1))


def _join(
    d: int, n: int, subsets: list[tuple[int, int]], full: int
) -> list[tuple[int, int]] | None:
    """`subsets` (the sum of d and the union of n of each set of colours chosen that needs
    shared cards) and the sets a colour needing d shared cards from the numbers n makes
    with them; None if one of those breaks Hall's condition."""
    if not d:
        return subsets
    pop = _POP
    for sd, sn in subsets:
        if sd + d - pop[sn | n] > full:
            return None
    return [*subsets, (d, n), *[(sd + d, sn | n) for sd, sn in subsets]]


def _search(choices: list[_Choice], full: int, budget: int) -> list[_Interval | None]:
    """The chosen interval of each colour of `choices` (None: no run): the best sum of
    values whose intervals can be filled together (module docstring).

    A depth-first search over the colours, candidates best first. Each level checks
    Hall's condition for the sets of colours the candidate joins (`_join`). The upper
    bound of the colours still to choose is the best they can do with the shared cards
    not spoken for: the d's of a choice add up to at most `budget` (the shared wild
    cards that fit some candidate). Only a strictly better sum replaces the best one,
    so with composite values the result does not depend on the order of the colours
    (with scores alone, `best_total`, only the sum is the same whatever the order).
    """
    # bounds[k][x]: colours k.. with x cards
    bounds = _bounds(tuple([choice[1] for choice in choices]), budget)
    top = bounds[0][budget]  # nothing beats it: the search stops when it is met
    last = len(choices) - 1
    best = -1
    picks: list[_Interval | None] = [None] * len(choices)
    chosen: list[_Interval | None] = [None] * len(choices)

    def choose(colour: int, total: int, left: int, subsets: list[tuple[int, int]]) -> bool:
        """Try the candidates of `colour` and the colours after it; True once `top` is met."""
        nonlocal best, picks
        later = bounds[colour + 1]
        for value, d, n, run in choices[colour][0]:
            t = total + value
            if t + later[left] <= best:
                break  # the later candidates are worse still
            rest = left - d
            if rest < 0 or t + later[rest] <= best:
                continue
            if d:  # (a candidate needing no shared card joins no set: no call)
                joined = _join(d, n, subsets, full)
                if joined is None:
                    continue
            else:
                joined = subsets
            chosen[colour] = run
            if colour < last:
                if choose(colour + 1, t, rest, joined):
                    return True
                continue
            best, picks = t, chosen.copy()
            return best == top  # the last colour's first fit is its best
        return False

    try:
        choose(0, 0, budget, [])
    finally:
        # `choose` refers to itself through its closure: a reference cycle (with every cell
        # and list it holds) that only the cyclic collector would free. Cut, reference
        # counting frees it all at once.
        choose = None  # type: ignore[assignment]
    return picks


def _solve(
    cards: Iterable[str], perfect_bonus: int
) -> tuple[tuple[_Interval | None, ...], tuple[int, ...], int, int]:
    """The chosen interval per colour (R, B, O, G; None: no run), the colour wilds held
    per colour, the numbered wildcards held and the copies of `W#` (0 or 1)."""
    key = _parsed(cards, perfect_bonus)
    _held, cwild, wmask, full, _bonus = key
    return _best_runs(*key), cwild, wmask, full


def _parsed(
    cards: Iterable[str], perfect_bonus: int
) -> tuple[tuple[int, ...], tuple[int, ...], int, int, int]:
    """`_parse` and the bonus, checked: the key of a collection's searches."""
    if perfect_bonus < 0:
        raise ValueError("perfect_bonus must be >= 0")
    return (*_parse_kept(cards), perfect_bonus)


# Parsed collections, by their cards: a search prices a collection, then the same one with
# a card more at its end (a card taken, bought or won comes last), so a collection not
# kept is parsed from the one without its last card when that one is.
_PARSED: dict[tuple[str, ...], tuple[tuple[int, ...], tuple[int, ...], int, int]] = {}
_PARSED_KEPT = 8192  # forgotten wholesale beyond it


def _parse_kept(cards: Iterable[str]) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """`_parse(cards)`, kept for tuples."""
    if type(cards) is not tuple:
        return _parse(cards)
    parsed = _PARSED.get(cards)
    if parsed is None:
        shorter = _PARSED.get(cards[:-1]) if cards else None
        parsed = _parse(cards) if shorter is None else _parse_more(shorter, cards[-1])
        if len(_PARSED) >= _PARSED_KEPT:
            _PARSED.clear()
        _PARSED[cards] = parsed
    return parsed


def _parse_more(
    parsed: tuple[tuple[int, ...], tuple[int, ...], int, int], code: str
) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """`_parse` of a collection parsed as `parsed` with the card `code` added."""
    t = _CODE_INFO.get(code)
    if t is None:
        raise ValueError(f"not a number card or wild card: {code!r}")
    held, cwild, wmask, full = parsed
    kind, i, bit = t
    if kind == _KIND_NUMBER:
        held = (*held[:i], held[i] | bit, *held[i + 1 :])
    elif kind == _KIND_COLOR_WILD:
        cwild = (*cwild[:i], cwild[i] + 1, *cwild[i + 1 :])
    elif kind == _KIND_NUMBER_WILD:
        wmask |= bit
    else:
        full = 1
    return held, cwild, wmask, full


# Bots score the same collections again and again (a basic bot weighs each card of the
# market against its collection), so whole results are kept.
@lru_cache(maxsize=4096)
def _best_runs(
    held: tuple[int, ...], cwild: tuple[int, ...], wmask: int, full: int, bonus: int
) -> tuple[_Interval | None, ...]:
    """`_solve` for a parsed collection."""
    rows = _runs(
        [_choice(held[c], cwild[c], wmask & ~held[c], full, bonus, c) for c in range(4)], full
    )
    _remember((held, cwild, wmask, full, bonus), _total_of(rows, bonus))
    return rows


# `best_total`'s: the same search with each run valued by its score alone, which ends
# sooner (many choices reach the best total; the composite values tell them all apart).
def _best_sum(
    held: tuple[int, ...], cwild: tuple[int, ...], wmask: int, full: int, bonus: int
) -> int:
    """`best_total` for a parsed collection."""
    choices = [_totals(held[c], cwild[c], wmask & ~held[c], full, bonus) for c in range(4)]
    return _total_of(_runs(choices, full), bonus)


def _total_of(rows: Sequence[_Interval | None], bonus: int) -> int:
    """The points of the chosen intervals."""
    total = 0
    for row in rows:
        if row is not None:
            length = row[0]
            total += length + bonus if length == 9 else length  # run_points, inline
    return total


# The best totals of parsed collections, from either search: a collection scored whole
# (`score_collection`: the engine's results, the service's payments) is often priced
# again by a bot (`best_total`), and the other way round.
_TOTALS: dict[tuple[tuple[int, ...], tuple[int, ...], int, int, int], int] = {}
_TOTALS_KEPT = 8192  # forgotten wholesale beyond it


def _remember(key: tuple[tuple[int, ...], tuple[int, ...], int, int, int], total: int) -> None:
    if len(_TOTALS) >= _TOTALS_KEPT:
        _TOTALS.clear()
    _TOTALS[key] = total


def _runs(choices: list[_Choice], full: int) -> tuple[_Interval | None, ...]:
    """The best interval per colour, R, B, O, G (None: no run), from their choices."""
    chosen: list[_Interval | None] = [None] * 4
    open_ = []  # the colours with a choice to make
    usable = 0
    for c, choice in enumerate(choices):
        if len(choice[0]) == 1:  # one candidate: it needs no shared card
            chosen[c] = choice[0][0][3]
        else:
            open_.append(c)
            usable |= choice[2]
    if open_:
        # Colours with the best single run first: any order gives the same answer (see
        # _search), this one tends to find the best early.
        open_.sort(key=lambda c: -choices[c][0][0][0])
        rows = _search([choices[c] for c in open_], full, _POP[usable] + full)
        for row, c in zip(rows, open_, strict=True):
            chosen[c] = row
    return tuple(chosen)


# ---------------------------------------------------------------------------------------
# Placement and the public functions.


def _place(units: list[int], usable: list[int]) -> tuple[Sequence[int], Sequence[int]]:
    """Match the numbered wildcards to the places the runs leave to shared wild cards:
    `units[c]` places in colour c, which a `Wn` with n in `usable[c]` may fill.

    Returns (per number index, the colour its `Wn` goes to or -1; per colour, the places
    left to `W#`). Augmenting paths in colour order R, B, O, G and number order 1 to 9.
    """
    owner = [-1] * 9

    def augment(c: int, seen: list[bool]) -> bool:
        for i in _INDICES[usable[c]]:
            if seen[i] or owner[i] == c:
                continue
            seen[i] = True
            if owner[i] < 0 or augment(owner[i], seen):
                owner[i] = c
                return True
        return False

    fulls = [0, 0, 0, 0]
    for c in range(4):
        for _ in range(units[c]):
            if not augment(c, [False] * 9):
                fulls[c] += 1
    augment = None  # type: ignore[assignment] # it refers to itself: the cycle of `_search`
    return owner, fulls


def total_bound(cards: Iterable[str], perfect_bonus: int = 1) -> int:
    """At least `best_total(cards, perfect_bonus)`, for far less work: that total when it
    is kept, else the bound `best_total`'s search starts from (the colours' best runs
    with the shared wild cards that fit some candidate split between them at best,
    Hall's condition aside), which it often meets. Same ValueErrors."""
    key = _parsed(cards, perfect_bonus)
    total = _TOTALS.get(key)
    if total is not None:
        return total
    held, cwild, wmask, full, bonus = key
    steps = []
    usable = 0
    for c in range(4):
        _cands, its_steps, its_usable = _totals(held[c], cwild[c], wmask & ~held[c], full, bonus)
        steps.append(its_steps)
        usable |= its_usable
    budget = _POP[usable] + full
    return _table(tuple(steps), budget)[budget]


def best_total(cards: Iterable[str], perfect_bonus: int = 1) -> int:
    """The highest score of a collection: `score_collection(...).total`, without placing
    the wild cards or telling the placements of that total apart (`_best_sum`). Same
    ValueErrors."""
    key = _parsed(cards, perfect_bonus)
    total = _TOTALS.get(key)
    if total is None:
        total = _best_sum(*key)
        _remember(key, total)
    return total


# Bots score the same collections again and again (a seat's collection in each of its
# decisions, the outcomes of a search): `best_total` of whole collections, kept. The
# collection must be a tuple (hashable); the same answers and ValueErrors.
cached_best_total = lru_cache(maxsize=16384)(best_total)


def score_collection(cards: Iterable[str], perfect_bonus: int = 1) -> Score:
    """The highest score of a collection with its run per colour (module docstring).

    Raises ValueError for a code that is not a number card or a wild card (currency
    cards included) and for a negative `perfect_bonus`. Beyond the deck's copies, see
    the module docstring.
    """
    chosen, cwild, wmask, full = _solve(cards, perfect_bonus)
    units = [0, 0, 0, 0]  # places left to shared wild cards, per colour
    usable = [0, 0, 0, 0]
    for c, row in enumerate(chosen):
        if row is not None and row[4] > cwild[c]:
            units[c] = row[4] - cwild[c]
            usable[c] = row[3] & wmask
    owner, fulls = _place(units, usable) if any(units) else (_NO_OWNER, _NO_FULLS)
    if sum(fulls) > full:  # pragma: no cover - excluded by the search
        raise AssertionError("scoring: no placement for the chosen runs")

    colors: dict[str, ColorScore] = {}
    total = 0
    for c, color in enumerate(COLORS):
        row = chosen[c]
        if row is None:
            colors[color] = _NO_RUN
            continue
        numbered = 0
        for i in _INDICES[usable[c]]:
            if owner[i] == c:
                numbered |= 1 << i
        color_score = _color_score(c, row, numbered, fulls[c], perfect_bonus)
        total += color_score.points
        colors[color] = color_score
    return Score(total=total, colors=colors)


# Runs recur from one collection to the next, so their results are kept.
@lru_cache(maxsize=8192)
def _color_score(c: int, row: _Interval, numbered: int, full: int, bonus: int) -> ColorScore:
    """Colour `c`'s result for the interval `row`: the numbered wildcards at the numbers
    of the mask `numbered`, `W#` (if `full`) at the highest number left, the colour's own
    wilds at the others."""
    length, a, b, miss, _need = row
    run = list(_NUMBER_CODES[c][a - 1 : b])
    rest = []  # the missing numbers left to W# and the colour wilds
    for i in _INDICES[miss]:
        if numbered >> i & 1:
            run[i - a + 1] = _NUMBER_WILD_CODES[i]
        else:
            rest.append(i)
    if full:
        run[rest.pop() - a + 1] = FULL_WILD
    for i in rest:
        run[i - a + 1] = _COLOR_WILD_CODES[c]
    return ColorScore(points=run_points(length, bonus), run=tuple(run))
