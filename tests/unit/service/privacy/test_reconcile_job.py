"""The erasure ledger's reconciliation as a leased job (`PlayerData.schedule`, `worker`): due
at once at each start (never twice queued), run by the one worker that claims it, then due
again a period later."""

from __future__ import annotations

import asyncio

from infra.queues import MemoryQueue
from service.core.unit_of_work import Retry
from service.privacy.use_cases import RECONCILE, PlayerData

NOW = 1_000.0


def test_the_reconciliation_is_due_at_start_then_every_period() -> None:
    async def main() -> None:
        queue = MemoryQueue("privacy")
        clock = [NOW]
        data = PlayerData(None, None, None, None, None, None, None, key=b"k", retry=Retry(3),
                          queue=queue, period=900.0, clock=lambda: clock[0])  # fmt: skip
        runs = []

        async def reconcile() -> int:
            runs.append(clock[0])
            return 0

        data.reconcile = reconcile
        await data.schedule()
        await data.schedule()  # a second start: still one job
        assert await queue.backlog() == 1
        worker = data.worker()
        assert await worker.run_once() == 1
        assert runs == [NOW]
        clock[0] = NOW + 899.0
        assert await worker.run_once() == 0  # not due yet
        clock[0] = NOW + 900.0
        assert await worker.run_once() == 1
        assert runs == [NOW, NOW + 900.0]
        await data.schedule()  # a restart: due at once again
        assert await worker.run_once() == 1
        assert await queue.queued(RECONCILE)

    asyncio.run(main())
