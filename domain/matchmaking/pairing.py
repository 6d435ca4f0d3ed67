"""Who sits with whom: a waiting ticket's rating window, and the pairing step (pure: the
tickets and the time are given, nothing is read or drawn).

**The window.** A rated ticket accepts the ratings within `half_width(waited)` of its own:
`sigma * min(cap, start + widen * waited)`, `sigma` the ladder's spread of ratings, `waited`
the seconds since the ticket was made. It starts narrow (`start` sigmas), widens linearly
(`widen` sigmas a second) and stops at `cap` sigmas. Two rated tickets may sit together when
each one's rating is in the other's window (`|a - b| <= min(w_a, w_b)`), and a table only when
that holds for every pair at it. A casual ticket has no rating and no window.

**The step** (`pair`): tickets of different pools (live or correspondence, rated or casual)
never meet. Within a pool the tickets are taken oldest first (the longest wait is served
first), each as an anchor that is not seated yet; the anchor's table is filled with the
tickets nearest its rating (casual: the oldest), each accepting the table's size, fitting
what is left of it (a party's players stay together) and in every seated ticket's window;
the biggest size the anchor accepts that can be filled is taken. When no size can be filled
and the anchor's `fill_bots_after` has passed, the anchor may sit with bots: with the other
tickets whose `fill_bots_after` has passed too (a ticket that asked for no bots never sits
with one), at the size that seats the most players, the fewest bots among those. Ties are
broken by age, then id: the same tickets at the same time always make the same tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import msgspec

MIN_SIZE = 2
MAX_SIZE = 5


class WindowRule(msgspec.Struct, frozen=True, kw_only=True):
    """How a rated ticket's window widens with its wait (see the module docstring)."""

    sigma: float  # the ladder's spread of ratings
    start: float = 0.25  # sigmas either side at once
    widen: float = 0.05  # sigmas more a second of waiting
    cap: float = 2.0  # sigmas at most

    def half_width(self, waited: float) -> float:
        return self.sigma * min(self.cap, self.start + self.widen * max(0.0, waited))


class Waiting(msgspec.Struct, frozen=True, kw_only=True):
    """A waiting ticket as the step sees it: `players` it seats (its holder and party),
    `rating` (None: casual), the table `sizes` it accepts, its `pool`, when it was made and
    after how many seconds of waiting bots may fill its table (None: never)."""

    id: str
    pool: str
    sizes: tuple[int, ...]
    created_at: float
    players: int = 1
    rating: float | None = None
    fill_bots_after: float | None = None


class Proposed(msgspec.Struct, frozen=True, kw_only=True):
    """A table the step proposes: its tickets (anchor first, in seat order), its size, and
    how many of its seats bots take."""

    tickets: tuple[str, ...]
    size: int
    bots: int = 0


def window(ticket: Waiting, now: float, rule: WindowRule) -> tuple[float, float] | None:
    """The ratings a ticket accepts now, (low, high); None for a casual ticket."""
    if ticket.rating is None:
        return None
    half = rule.half_width(now - ticket.created_at)
    return ticket.rating - half, ticket.rating + half


def compatible(a: Waiting, b: Waiting, now: float, rule: WindowRule) -> bool:
    """Whether each ticket's rating is in the other's window (casual: always)."""
    if a.rating is None or b.rating is None:
        return True
    reach = min(rule.half_width(now - a.created_at), rule.half_width(now - b.created_at))
    return abs(a.rating - b.rating) <= reach


def bots_due(ticket: Waiting, now: float) -> bool:
    return ticket.fill_bots_after is not None and now - ticket.created_at >= ticket.fill_bots_after


def _age(ticket: Waiting) -> tuple[float, str]:
    return ticket.created_at, ticket.id


def pair(waiting: Sequence[Waiting], now: float, rule: WindowRule) -> list[Proposed]:
    """The tables to make now (see the module docstring); no ticket in two of them."""
    pools: dict[str, list[Waiting]] = {}
    for ticket in waiting:
        pools.setdefault(ticket.pool, []).append(ticket)
    tables: list[Proposed] = []
    for name in sorted(pools):
        tables.extend(_Pool(pools[name], now, rule).tables())
    return tables


class _Pool:
    """One pool's step: its tickets by age (anchors) and by rating (the nearest first)."""

    def __init__(self, tickets: Sequence[Waiting], now: float, rule: WindowRule) -> None:
        self.now = now
        self.rule = rule
        self.by_age = sorted(tickets, key=_age)
        self.by_rating = sorted(tickets, key=lambda t: (t.rating or 0.0, *_age(t)))
        self.where = {t.id: i for i, t in enumerate(self.by_rating)}
        self.seated: set[str] = set()

    def tables(self) -> list[Proposed]:
        found = []
        for anchor in self.by_age:
            if anchor.id in self.seated:
                continue
            table = self._table_for(anchor)
            if table is not None:
                self.seated.update(table.tickets)
                found.append(table)
        return found

    def _table_for(self, anchor: Waiting) -> Proposed | None:
        candidates = _Lazy(self._nearest(anchor))
        for size in sorted(set(anchor.sizes), reverse=True):
            picked, left = self._fill(anchor, size, candidates, bots=False)
            if left == 0:
                return Proposed(tickets=tuple(t.id for t in picked), size=size)
        if not bots_due(anchor, self.now):
            return None
        best: Proposed | None = None
        for size in sorted(set(anchor.sizes)):
            picked, left = self._fill(anchor, size, candidates, bots=True)
            if left < 0:
                continue
            table = Proposed(tickets=tuple(t.id for t in picked), size=size, bots=left)
            if best is None or size - left > best.size - best.bots:
                best = table
        return best

    def _fill(
        self, anchor: Waiting, size: int, candidates: _Lazy, *, bots: bool
    ) -> tuple[list[Waiting], int]:
        """The anchor and the nearest tickets that fit a table of `size`, and the seats left
        (negative: the anchor alone is too many)."""
        picked, left = [anchor], size - anchor.players
        for other in candidates:
            if left <= 0:
                break
            if size not in other.sizes or other.players > left:
                continue
            if bots and not bots_due(other, self.now):
                continue
            if all(compatible(other, seated, self.now, self.rule) for seated in picked[1:]):
                picked.append(other)
                left -= other.players
        return picked, left

    def _nearest(self, anchor: Waiting) -> Iterator[Waiting]:
        """The tickets not seated that may sit with the anchor: nearest rating first (casual:
        oldest first), as far as the anchor's window reaches."""
        if anchor.rating is None:
            for other in self.by_age:
                if other.id != anchor.id and other.id not in self.seated:
                    yield other
            return
        reach = self.rule.half_width(self.now - anchor.created_at)
        at = self.where[anchor.id]
        below, above = at - 1, at + 1
        ordered = self.by_rating
        while True:
            low = ordered[below] if below >= 0 else None
            high = ordered[above] if above < len(ordered) else None
            gap_low = anchor.rating - (low.rating or 0.0) if low is not None else None
            gap_high = (high.rating or 0.0) - anchor.rating if high is not None else None
            if low is not None and (gap_high is None or (gap_low or 0.0) <= gap_high):
                other, below, gap = low, below - 1, gap_low
            elif high is not None:
                other, above, gap = high, above + 1, gap_high
            else:
                return
            if gap is not None and gap > reach:
                return  # everything further is further still
            if other.id not in self.seated and compatible(anchor, other, self.now, self.rule):
                yield other


class _Lazy:
    """An iterator's items, drawn once and kept: each size tried walks the same list."""

    def __init__(self, source: Iterator[Waiting]) -> None:
        self._source = source
        self._items: list[Waiting] = []

    def __iter__(self) -> Iterator[Waiting]:
        i = 0
        while True:
            if i < len(self._items):
                yield self._items[i]
            else:
                item = next(self._source, None)
                if item is None:
                    return
                self._items.append(item)
                yield item
            i += 1
