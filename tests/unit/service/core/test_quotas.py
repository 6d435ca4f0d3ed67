"""Every capability's quota is the one mechanism (`service.core.quotas`): a player's tournaments
not ended, as a host's open tables, counted per caller, the platform exempt, past the limit
429 with Retry-After and nothing created; one that ends frees its slot."""

from __future__ import annotations

import asyncio

import pytest

from infra.memory_store import MemoryGameStore
from infra.memory_tournaments import MemoryTournamentStore
from infra.queues import MemoryQueue
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.settings import Settings
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.tournaments.records import CreateTournament
from service.tournaments.use_cases import Tournaments

PLATFORM = Caller(kind="platform")
ANN = Caller(kind="player", player_id="ann")
BOB = Caller(kind="player", player_id="bob")


def test_a_player_holds_at_most_max_open_tournaments_and_the_platform_any() -> None:
    async def main() -> None:
        store = MemoryGameStore()
        kept = MemoryTournamentStore()
        tournaments = Tournaments(
            kept, MemoryQueue("tournaments"), Lobby(GameService(store, Settings())).create,
            quotas=store, max_open=3,
        )  # fmt: skip

        def create(caller: Caller, n: int):
            return tournaments.create(CreateTournament(caller=caller, name=f"T{n}"))

        mine = [(await create(ANN, n))[0] for n in range(3)]
        with pytest.raises(ServiceError) as refused:
            await create(ANN, 3)
        assert refused.value.code == "too_many_open_tournaments"
        assert refused.value.retry_after >= 1
        assert len(await kept.list_tournaments(None, 100)) == 3  # nothing created
        await create(BOB, 0)  # another organiser's quota
        for n in range(10):
            await create(PLATFORM, n)  # exempt
        await tournaments.stop(ANN, mine[0].id)  # ended: its slot is free
        await create(ANN, 4)
        with pytest.raises(ServiceError):
            await create(ANN, 5)
        page = await tournaments.list(None, 20)
        assert sum(t.organiser == ANN.scope and not t.ended for t in page.tournaments) == 3

    asyncio.run(main())
