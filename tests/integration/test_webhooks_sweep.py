"""A game that ended on a replica that died before telling anyone: the sweep for unarchived
games (every replica, every half minute) hands it to the archive and queues its end's
webhook too, once (one message id per fact)."""

from __future__ import annotations

import asyncio
import json

import pytest

from infra.memory_store import MemoryGameStore
from infra.outbox import MemoryOutbox
from infra.webhook_outbox import MemoryWebhookOutbox
from service.games import GameService
from service.lobby import Lobby
from service.settings import Settings
from service.webhooks import Webhooks
from tests.support.webhooks import SECRET

pytestmark = pytest.mark.integration
URL = "http://127.0.0.1:9/hooks"


def test_the_unarchived_sweep_queues_the_end_webhook_once() -> None:
    async def body() -> None:
        store = MemoryGameStore()
        # the game as the dying replica left it: dealt and played to its end (bots only),
        # stored, but neither archived nor told to the platform
        dealt = await Lobby(GameService(store, Settings())).deal([("a", "basic"), ("b", "random")])
        assert dealt.record.status == "finished"
        hooks_outbox = MemoryWebhookOutbox()
        hooks = Webhooks(hooks_outbox, [URL], SECRET)
        service = GameService(store, Settings(), outbox=MemoryOutbox(), webhooks=hooks)
        assert await hooks_outbox.backlog() == 0
        for _ in range(2):  # two sweeps (two replicas): one message
            assert await service.hand_over_unarchived() in (0, 1)
        claimed = (await hooks_outbox.claim(2e9, 30.0, 10)).deliveries
        assert [json.loads(d.body)["type"] for d in claimed] == ["game_finished"]
        results = json.loads(claimed[0].body)["data"]["results"]
        assert [r["rank"] for r in results] == [r.rank for r in dealt.record.state.results]

    asyncio.run(body())
