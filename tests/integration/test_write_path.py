"""The one write path (`service.core.unit_of_work`) under contention, on both stores (embedded and
real Redis): every valid command of a crowd that arrives at once is taken, none refused as
`concurrent_update`."""

from __future__ import annotations

import asyncio
import secrets

from infra.memory_store import MemoryGameStore
from infra.memory_tournaments import MemoryTournamentStore
from infra.queues import MemoryQueue
from infra.redis_client import connect
from infra.redis_tournaments import RedisTournamentStore
from service.core.callers import Caller
from service.core.settings import Settings
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.tournaments.records import CreateTournament
from service.tournaments.use_cases import Tournaments

PLATFORM = Caller(kind="platform")


def test_sixty_players_registering_at_once_for_64_places_all_get_in(backend) -> None:
    async def main() -> None:
        client = None
        if backend.kind == "memory":
            store = MemoryTournamentStore()
        else:
            client = connect(backend.url)
            store = RedisTournamentStore(client, prefix=f"ten-test-{secrets.token_hex(6)}")
        lobby = Lobby(GameService(MemoryGameStore(), Settings()))
        tournaments = Tournaments(store, MemoryQueue("tournaments"), lobby.create)
        try:
            created, _ = await tournaments.create(
                CreateTournament(caller=PLATFORM, name="Crowd", places=64, table_size=4)
            )
            players = [Caller(kind="player", player_id=f"p{n}") for n in range(60)]
            answers = await asyncio.gather(
                *(tournaments.register(p, created.id, None) for p in players),
                return_exceptions=True,
            )
            refused = [a for a in answers if isinstance(a, BaseException)]
            assert refused == []
            stored = await tournaments.get(created.id)
            assert sorted(stored.registered) == sorted(p.player_id for p in players)
        finally:
            if client is not None:
                keys = await client.keys(f"{store.prefix}:*")
                if keys:
                    await client.delete(*keys)
                await client.aclose()

    asyncio.run(main())
