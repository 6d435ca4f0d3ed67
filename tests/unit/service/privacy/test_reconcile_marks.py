"""The reconciliation of the erasure ledger scans only the stores whose applied mark is not
the ledger's (`PlayerData.reconcile`), on fakes of the two stores that count their scans
(the live store's `player_ids` and the tournaments' listing, the archive's pages of ids):
the steady state scans nothing; a restore of either store (an older ledger, an older
mark) is scanned and erased again, the other store left alone; a ledger entry written and
not applied is applied; an erasure is vouched for only once it has settled; a restore
during a pass leaves the store to the next one; a store that never vouches is scanned every
time."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from service.core.unit_of_work import Retry
from service.privacy.ports import Erasure
from service.privacy.pseudonyms import Subject, ledger_digest, ledger_mark
from service.privacy.use_cases import PlayerData

KEY = b"a-test-key"
NOW = 1_000_000.0
SETTLE = 900.0
ANN, BOB = "ann", "bob"


def entry(player_id: str, at: float = NOW - 2 * SETTLE) -> Erasure:
    return Erasure(digest=ledger_digest(KEY, player_id), pseudonym=f"erased-{player_id}", at=at)


class Side:
    """A store's ledger, its mark, the player ids it holds; `vouches`: whether it keeps a
    mark at all."""

    def __init__(self) -> None:
        self.ledger: dict[str, Erasure] = {}
        self.mark: str | None = None
        self.ids: set[str] = set()
        self.scans = 0
        self.vouches = True

    async def erasures(self) -> list[Erasure]:
        return sorted(self.ledger.values(), key=lambda e: (e.at, e.digest))

    async def record_erasures(self, entries: Sequence[Erasure]) -> None:
        for e in entries:
            self.ledger.setdefault(e.digest, e)

    async def applied(self) -> str | None:
        return self.mark

    async def swap_applied(self, expected: str | None, mark: str) -> bool:
        if not self.vouches or self.mark != expected:
            return False
        self.mark = mark
        return True

    def erase(self, subject: Subject) -> int:
        held = subject.player_id in self.ids
        self.ids.discard(subject.player_id)
        return int(held)


class Live(Side):
    async def player_ids(self) -> list[str]:
        self.scans += 1
        return sorted(self.ids)

    async def games_of(self, player_id: str) -> list[str]:
        return []

    async def erase_rest(self, subject: Subject) -> int:
        return self.erase(subject)

    async def tickets_of(self, player_id: str) -> list:
        return []


class Archive(Side):
    def __init__(self) -> None:
        super().__init__()
        self.on_page = lambda: None

    async def player_ids_page(self, after: str | None, limit: int) -> list[str]:
        self.scans += 1
        page = sorted(i for i in self.ids if after is None or i > after)[:limit]
        self.on_page()  # after the page was read
        return page

    async def erase_player(self, subject: Subject) -> int:
        return self.erase(subject)


class Tournaments:
    def __init__(self) -> None:
        self.reads = 0

    async def list_tournaments(self, before, limit: int) -> list:
        self.reads += 1
        return []


class World:
    def __init__(self) -> None:
        self.live, self.archive, self.tournaments = Live(), Archive(), Tournaments()
        self.now = NOW
        self.data = PlayerData(None, self.live, None, self.archive, self.tournaments, None, None,
                               key=KEY, retry=Retry(3), settle=SETTLE,
                               clock=lambda: self.now)  # fmt: skip

    def reconcile(self) -> int:
        return asyncio.run(self.data.reconcile())

    def scans(self) -> tuple[int, int]:
        """(the live side's candidate scans, the archive's pages of ids read)."""
        return self.live.scans, self.archive.scans

    def erased(self, *entries: Erasure) -> None:
        """Both ledgers hold `entries` (written and applied: no store holds their ids)."""
        for side in (self.live, self.archive):
            asyncio.run(side.record_erasures(entries))


def steady(world: World) -> str:
    """The world reconciled once (a full pass) and the mark both stores now hold."""
    world.reconcile()
    mark = world.live.mark
    assert mark == world.archive.mark == ledger_mark(world.live.ledger)
    return mark


def test_a_second_reconciliation_scans_nothing() -> None:
    world = World()
    world.erased(entry(ANN))
    world.archive.ids |= {ANN, BOB, "cy"}  # ann was brought back somehow: found, erased
    world.live.ids |= {BOB}
    assert world.reconcile() == 1
    assert world.archive.ids == {BOB, "cy"}
    assert world.scans() == (1, 1)
    assert world.tournaments.reads >= 1
    steady_reads = world.tournaments.reads
    assert world.live.mark == world.archive.mark == ledger_mark([entry(ANN).digest])
    for _ in range(3):
        assert world.reconcile() == 0
    assert world.scans() == (1, 1)  # nothing read but the ledgers and the marks
    assert world.tournaments.reads == steady_reads


def test_without_a_ledger_nothing_is_scanned_nor_marked() -> None:
    world = World()
    world.archive.ids |= {ANN}
    assert world.reconcile() == 0
    assert world.scans() == (0, 0)
    assert world.live.mark is world.archive.mark is None


def test_an_erasure_is_vouched_for_once_it_has_settled() -> None:
    """A write in flight that read the player before the ledger had them may land after
    the erasure's own pass: every run scans until the newest erasure is `settle` old."""
    world = World()
    world.erased(entry(ANN, at=NOW - 10))
    assert world.reconcile() == 0
    assert world.scans() == (1, 1)
    assert world.live.mark is None or world.live.mark.startswith("pass:")
    world.archive.ids.add(ANN)  # a late write of the player's game, in the archive
    world.now = NOW + SETTLE - 11
    assert world.reconcile() == 1  # still young: scanned again, found
    assert world.scans() == (2, 2)
    world.now = NOW + SETTLE - 10
    assert world.reconcile() == 0
    assert world.scans() == (3, 3)
    assert world.reconcile() == 0
    assert world.scans() == (3, 3)  # settled and marked


def test_a_restored_archive_alone_is_scanned_and_erased_again() -> None:
    world = World()
    world.erased(entry(BOB))
    old = steady(world)
    world.erased(entry(ANN))
    steady(world)
    before = world.scans()
    # the archive's backup from before ann's erasure: bob's ledger, bob's mark, ann's rows
    world.archive.ledger = {entry(BOB).digest: entry(BOB)}
    world.archive.mark = old
    world.archive.ids.add(ANN)
    assert world.reconcile() == 1
    assert world.archive.ids == set()
    assert world.scans() == (before[0], before[1] + 1)  # the live store not scanned
    assert set(world.archive.ledger) == {entry(ANN).digest, entry(BOB).digest}  # merged back
    assert world.reconcile() == 0
    assert world.scans() == (before[0], before[1] + 1)


def test_a_restored_live_store_alone_is_scanned_and_erased_again() -> None:
    world = World()
    world.erased(entry(ANN))
    steady(world)
    before = world.scans()
    world.live.ledger, world.live.mark = {}, None  # a backup from before any erasure
    world.live.ids.add(ANN)
    assert world.reconcile() == 1
    assert world.live.ids == set()
    assert world.scans() == (before[0] + 1, before[1])  # the archive not scanned
    assert world.reconcile() == 0
    assert world.scans() == (before[0] + 1, before[1])


def test_a_ledger_entry_written_and_not_applied_is_applied() -> None:
    """A backup taken between an erasure's ledger write and its application: the ledger
    holds the entry, the stores the player, the marks are the ledger's before it."""
    world = World()
    world.erased(entry(BOB))
    old = steady(world)
    world.erased(entry(ANN))  # the ledger written, the application not done
    world.live.ids.add(ANN)
    world.archive.ids.add(ANN)
    assert world.live.mark == world.archive.mark == old
    before = world.scans()
    assert world.reconcile() == 1
    assert world.live.ids == world.archive.ids == set()
    assert world.scans() == (before[0] + 1, before[1] + 1)
    assert world.reconcile() == 0
    assert world.scans() == (before[0] + 1, before[1] + 1)


def test_a_restore_during_a_pass_leaves_the_store_to_the_next_pass() -> None:
    """The pass writes its token first and the ledger's mark over it at its end: a restore
    meanwhile brings back the backup's mark, and the pass marks nothing."""
    world = World()
    world.erased(entry(BOB))
    old = steady(world)
    world.erased(entry(ANN))
    restored = []

    def restore() -> None:  # the archive's backup comes back once the pass has read it
        if not restored:
            restored.append(True)
            world.archive.mark = old
            world.archive.ids.add(ANN)

    world.archive.on_page = restore
    assert world.reconcile() == 0  # the page read before the restore: ann not found
    assert world.archive.mark == old  # not the ledger's: the pass did not vouch for it
    assert world.live.mark == ledger_mark(world.live.ledger)
    assert world.reconcile() == 1  # the next pass scans it again and finds ann
    assert world.archive.ids == set()
    assert world.archive.mark == ledger_mark(world.live.ledger)


def test_a_store_that_keeps_no_mark_is_scanned_every_time() -> None:
    """The live store on a Redis Cluster keeps no mark: scanned at every run, the archive
    once."""
    world = World()
    world.live.vouches = False
    world.erased(entry(ANN))
    for _ in range(3):
        assert world.reconcile() == 0
    assert world.scans() == (3, 1)
    world.live.ids.add(ANN)  # a new game of an erased id: found on the live store
    assert world.reconcile() == 1
    assert world.live.ids == set()


def test_the_mark_is_the_ledger_s_whatever_its_order() -> None:
    a, b = entry(ANN).digest, entry(BOB).digest
    assert ledger_mark([a, b]) == ledger_mark([b, a])
    assert ledger_mark([a]) != ledger_mark([a, b]) != ledger_mark([b])
    assert len(ledger_mark([a])) == 64
