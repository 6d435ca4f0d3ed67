"""Vacations: a player's days off, a yearly allowance, during which their deadline clocks
stand still. Pure rules on a player's spells of vacation (`Away`) and `now`:

- The allowance is counted per calendar year (UTC): the time of this year's spells.
- A spell still on that would use more than what is left of the allowance ends where the
  allowance runs out (`spells`): the vacation is over, the allowance spent.
- A deadline extends by the time the player was away while the game waited on them
  (`extended_deadline`, the one rule of it; the game service asks it when a deadline
  comes, `service.games.use_cases.GameService.fire_due`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from service.correspondence.records import Away

DAY = 24 * 3600.0
# a deadline postponed while its player is still away comes again at least this much later:
# the game is looked at again then, not every instant (the player, back sooner, gets at
# most this much more)
POSTPONED_AT_LEAST = 60.0
KEPT_SPELLS = 64  # the spells a record keeps (the oldest of last year's go first)


def year_start(now: float) -> float:
    return datetime(datetime.fromtimestamp(now, UTC).year, 1, 1, tzinfo=UTC).timestamp()


def _overlap(start: float, end: float, low: float, high: float) -> float:
    return max(0.0, min(end, high) - max(start, low))


def spells(away: Sequence[Away], allowance_days: int, now: float) -> list[tuple[float, float]]:
    """The spells as they count at `now`: (start, end), a spell still on ending now, or
    where the year's allowance ran out."""
    found: list[tuple[float, float]] = []
    year = year_start(now)
    for spell in away:
        if spell.end is not None:
            found.append((spell.start, spell.end))
            continue
        used = sum(_overlap(s, e, year, now) for s, e in found)
        left = max(0.0, allowance_days * DAY - used)
        found.append((spell.start, min(now, max(spell.start, year) + left)))
    return found


def on_vacation(away: Sequence[Away], allowance_days: int, now: float) -> bool:
    """A spell is on and the allowance is not spent."""
    if not away or away[-1].end is not None:
        return False
    return spells(away, allowance_days, now)[-1][1] >= now


def days_left(away: Sequence[Away], allowance_days: int, now: float) -> float:
    """This year's allowance left, in days."""
    year = year_start(now)
    used = sum(_overlap(s, e, year, now) for s, e in spells(away, allowance_days, now))
    return max(0.0, allowance_days - used / DAY)


def extended_deadline(
    deadline: float, since: float, away: Sequence[Away], allowance_days: int, now: float
) -> float:
    """The deadline of a wait that began at `since`, its clock stood still while its player
    was away: `deadline` plus the time of the spells within [since, now]; while the player
    is still away, at least `POSTPONED_AT_LEAST` after `now` (or the wait's whole length,
    if shorter: the player back gets at most that much more)."""
    counted = spells(away, allowance_days, now)
    extended = deadline + sum(_overlap(s, e, since, now) for s, e in counted)
    if on_vacation(away, allowance_days, now):
        extended = max(extended, now + min(POSTPONED_AT_LEAST, deadline - since))
    return extended


def switched(away: tuple[Away, ...], on: bool, allowance_days: int, now: float) -> tuple[Away, ...]:
    """The spells after the player turns their vacation on or off at `now` (unchanged if
    it already is so; a spell the allowance ended is closed where it ended)."""
    if away and away[-1].end is None:
        end = spells(away, allowance_days, now)[-1][1]
        if end < now:  # spent meanwhile: closed where it ended
            away = (*away[:-1], Away(away[-1].start, end))
    running = bool(away) and away[-1].end is None
    if on == running:
        return away
    if on:
        if days_left(away, allowance_days, now) <= 0:
            return away
        away = (*away, Away(now))
    else:
        away = (*away[:-1], Away(away[-1].start, now))
    year = year_start(now) - 366 * DAY  # older than last year's: nothing counts them
    kept = tuple(a for a in away if a.end is None or a.end >= year)
    return kept[-KEPT_SPELLS:]
