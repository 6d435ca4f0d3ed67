"""Whether an archived game counts for stats and the leaderboard: one pure rule, here only.

A game is *ranked* only when
- it ended normally (finished, not aborted),
- it was dealt from the standard shuffled deck (not a deck its creator gave),
- every human seat's identity was verified (a player id proven by a player JWT with that
  `sub` or by the platform; bots are not humans), and
- at least two distinct human player ids played.

Otherwise it is unranked, and says why with stable codes (`UNRANKED_REASONS`, in the order
the primary one is chosen). Games archived before identities could be verified are
`legacy` (set by the migration that introduced ranking, never by `ranking`).
"""

from __future__ import annotations

from typing import Literal, TypeVar

import msgspec

from service.ports import GameRecord

UnrankedReason = Literal[
    "aborted", "custom_deck", "unverified_identity", "too_few_humans", "legacy"
]
# every reason `ranking` can give, most decisive first: the first that applies is primary
UNRANKED_REASONS: tuple[UnrankedReason, ...] = (
    "aborted",
    "custom_deck",
    "unverified_identity",
    "too_few_humans",
)
T = TypeVar("T")
MIN_HUMANS = 2  # distinct human player ids a ranked game needs


class Ranking(msgspec.Struct, frozen=True, kw_only=True):
    """The decision: ranked, or every reason it is not (primary first)."""

    reasons: tuple[UnrankedReason, ...] = ()

    @property
    def ranked(self) -> bool:
        return not self.reasons

    @property
    def reason(self) -> UnrankedReason | None:
        """The primary reason (None when ranked)."""
        return self.reasons[0] if self.reasons else None


def ranking(record: GameRecord) -> Ranking:
    """Decide whether the ended game `record` is ranked (see the module docstring).

    Seats are the engine state's players (a seat with a bot level is a bot). A human seat
    is verified when `record.verified[seat]` is True and `record.player_ids[seat]` is set;
    records of older releases have no `verified` (empty): unverified. A record without an
    engine state (a table that never started) is aborted as far as ranking goes."""
    if record.state is None:
        return Ranking(reasons=("aborted", "too_few_humans"))
    humans = [p.seat for p in record.state.players if p.bot is None]
    ids = [_at(record.player_ids, seat, None) for seat in humans]
    verified = [
        _at(record.verified, seat, False) and ids[i] is not None for i, seat in enumerate(humans)
    ]
    found: set[UnrankedReason] = set()
    if record.aborted or record.state.phase != "finished":
        found.add("aborted")
    if record.custom_deck:
        found.add("custom_deck")
    if not all(verified):
        found.add("unverified_identity")
    if len({pid for pid in ids if pid is not None}) < MIN_HUMANS:
        found.add("too_few_humans")
    return Ranking(reasons=tuple(r for r in UNRANKED_REASONS if r in found))


def _at(values: tuple[T, ...], index: int, default: T) -> T:
    return values[index] if index < len(values) else default
