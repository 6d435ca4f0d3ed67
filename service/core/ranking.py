"""Whether an archived game counts for stats and the leaderboard, and which of its seats
do: one pure rule, here only (`ranking`).

A game is *ranked* only when
- it ended normally (finished: not aborted, not abandoned),
- it was dealt from the standard shuffled deck (not a deck its creator gave),
- every human seat's identity was verified (a player id proven by a player JWT with that
  `sub` or by the platform; bots are not humans), and
- at least two distinct human player ids played,
- it was not created casual (`casual`: a casual matchmaking ticket's table), and
- it is no game of a tournament created unranked (`unranked_tournament`).

Otherwise it is unranked, and says why with stable codes (`UNRANKED_REASONS`, in the order
the primary one is chosen). Games archived before identities could be verified are
`legacy` (set by the migration that introduced ranking, never by `ranking`).

In a ranked game each seat's result counts (for its player's stats and the leaderboard)
unless the seat has a reason of its own (`SEAT_UNRANKED_REASONS`): `taken_over`, a bot
took the seat over after consecutive timeouts and the player did not resign (the game
becomes unranked for that player alone, even if they took the seat back). A seat whose
player resigned counts: it ranks last (`domain.game.results`). The others' results still count:
the game was ranked when it was set up, and one player leaving (timing out) must neither
void the others' results nor let a losing player do so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar, get_args

import msgspec

from domain.game.model import Player
from service.core.model import GameRecord

UnrankedReason = Literal[
    "aborted",
    "abandoned",
    "custom_deck",
    "unverified_identity",
    "too_few_humans",
    "casual",
    "unranked_tournament",
    "legacy",
]
# every reason `ranking` can give, most decisive first: the first that applies is primary
# (the order of `UnrankedReason`; "legacy" only the archive gives, to games of older releases)
UNRANKED_REASONS: tuple[UnrankedReason, ...] = tuple(
    r for r in get_args(UnrankedReason) if r != "legacy"
)
SeatUnrankedReason = Literal["taken_over"]
# every reason one seat of a game can have not to count (a game's reasons aside)
SEAT_UNRANKED_REASONS: tuple[SeatUnrankedReason, ...] = ("taken_over",)
T = TypeVar("T")
MIN_HUMANS = 2  # distinct human player ids a ranked game needs


class Ranking(msgspec.Struct, frozen=True, kw_only=True):
    """The decision: ranked, or every reason it is not (primary first); and per seat, in
    seat order, the seat's own reason not to count (None: none)."""

    reasons: tuple[UnrankedReason, ...] = ()
    seats: tuple[SeatUnrankedReason | None, ...] = ()

    @property
    def ranked(self) -> bool:
        return not self.reasons

    @property
    def reason(self) -> UnrankedReason | None:
        """The primary reason (None when ranked)."""
        return self.reasons[0] if self.reasons else None

    def counts(self, seat: int) -> bool:
        """Whether `seat`'s result counts for its player's ranked figures: the game is
        ranked and the seat has no reason of its own."""
        return self.ranked and _at(self.seats, seat, None) is None


def ranking(record: GameRecord) -> Ranking:
    """Decide whether the ended game `record` is ranked, and which seats count (see the
    module docstring).

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
    if record.aborted:
        found.add("aborted")
    if record.abandoned:
        found.add("abandoned")
    elif record.state.phase != "finished":  # still going: not a normal end either
        found.add("aborted")
    if record.custom_deck:
        found.add("custom_deck")
    if not all(verified):
        found.add("unverified_identity")
    if len({pid for pid in ids if pid is not None}) < MIN_HUMANS:
        found.add("too_few_humans")
    if record.casual:
        found.add("casual")
    if record.tournament is not None and not record.tournament.ranked:
        found.add("unranked_tournament")
    return Ranking(
        reasons=tuple(r for r in UNRANKED_REASONS if r in found),
        seats=tuple(_seat_reason(p) for p in record.state.players),
    )


def archived_ranking(record: GameRecord, player_ids: Sequence[str | None]) -> Ranking:
    """`ranking` of the game as it is archived with `player_ids`: player ids given apart
    from the record's own were never verified (they are ranked as unverified)."""
    if tuple(player_ids) != tuple(record.player_ids):
        record = msgspec.structs.replace(record, player_ids=tuple(player_ids), verified=())
    return ranking(record)


def _seat_reason(player: Player) -> SeatUnrankedReason | None:
    """A seat a bot took over after timeouts does not count for its player, unless they
    resigned afterwards (a resigned seat counts, ranked last)."""
    return "taken_over" if player.taken_over and not player.resigned else None


def _at(values: tuple[T, ...], index: int, default: T) -> T:
    return values[index] if index < len(values) else default
