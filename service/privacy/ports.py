"""What a player's export and erasure need of the stores: the live side (`LiveData`: the
game store and the capabilities' stores beside it, memory or Redis) and the archive
(`ArchiveData`); both keep a copy of the erasure ledger (`Erasure`), so a restore of
either from an older backup loses no erasure (`service.privacy.use_cases.reconcile`), and
each its applied mark: which ledger's erasures it is known to hold applied, so that a
reconciliation scans only a store that may hold an erased player again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import msgspec

from service.core.model import GameRecord
from service.history.archive import ArchivedGame
from service.jobs.worker import QUEUES as JOB_QUEUES
from service.matchmaking.records import TicketRecord
from service.privacy.pseudonyms import Subject

# the queues whose jobs may carry a player's id or names (`LiveData.erase_rest`): every
# leased queue of the service, so that a queue added there is erased too
QUEUES = tuple(JOB_QUEUES)


class Erasure(msgspec.Struct, frozen=True, kw_only=True):
    """An entry of the erasure ledger: the player id's keyed digest (never the id), its
    pseudonym, when it was erased (unix seconds)."""

    digest: str
    pseudonym: str
    at: float


class Ledger(Protocol):
    async def erasures(self) -> list[Erasure]:
        """Every entry of this store's ledger, oldest first."""

    async def record_erasures(self, entries: Sequence[Erasure]) -> None:
        """Add the entries this store does not hold (by digest); the others are kept."""

    async def applied(self) -> str | None:
        """The store's applied mark (`pseudonyms.ledger_mark` of the ledger whose erasures
        were applied to everything it holds, or a reconciliation's pass token while one
        scans it), kept with the data it vouches for: a restore of the store brings back the
        mark of its backup. None: no mark (never reconciled, or a store that cannot vouch
        for all it holds at once)."""

    async def swap_applied(self, expected: str | None, mark: str) -> bool:
        """Write `mark` if the store's mark is still `expected` (None: none), in one atomic
        step; whether it was written. A store that cannot vouch for all it holds at once
        writes nothing (False)."""


class LiveData(Ledger, Protocol):
    """The live stores' part (`infra.memory_privacy`, `infra.redis_privacy`)."""

    async def games_of(self, player_id: str) -> list[str]:
        """The ids of every stored game (open, live or ended, not expired) with a seat,
        a table seat or a host of `player_id`. A walk of the stored games:
        an export's or an erasure's cost, never a game request's."""

    async def rewrite_game(self, record: GameRecord, subject: Subject) -> bool:
        """The game, its log and its idempotent responses rewritten for `subject` if it
        is still at `record`'s stamp (VersionConflict with the one stored otherwise);
        False when it holds nothing of the subject."""

    async def erase_rest(self, subject: Subject) -> int:
        """Everything else kept of the subject but the versioned records (tickets and
        tournaments: `PlayerData` saves them through their stores): listings, quotas and
        ticket holders moved to the pseudonym (`pseudonyms.renamed_key`), the queued jobs
        of `QUEUES` rewritten (each by its queue's checked swap), the player's record (push
        subscriptions, vacation) deleted; how many things changed."""

    async def tickets_of(self, player_id: str) -> list[TicketRecord]:
        """The matchmaking tickets stored with the player in them."""

    async def player_ids(self) -> list[str]:
        """The distinct player ids the live stores carry (a reapplication's candidates): the
        games', the tickets', the players' records' and the queued jobs' (the tournaments'
        are read through their store)."""


class ArchivedPlay(msgspec.Struct, frozen=True, kw_only=True):
    game: ArchivedGame
    events: tuple[str, ...]  # the events' JSON as archived, in order (joined by commas: a part)


class ArchiveData(Ledger, Protocol):
    """The archive's part (`infra.archive.privacy`)."""

    async def games_page(
        self, player_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> list[ArchivedPlay]:
        """The player's archived games with their logs, oldest first by (ended, id),
        strictly after the keyset `after`; at most `limit`."""

    async def erase_player(self, subject: Subject) -> int:
        """Seats, results, the games' logs (the names `game_started` gave the player's
        seats), ratings and their history moved to the pseudonym, in one transaction; the
        rows changed."""

    async def player_ids_page(self, after: str | None, limit: int) -> list[str]:
        """Distinct player ids of seats and ratings, in id order, after `after`."""
