"""A player's listing, the games waiting on them first (service.lobby.to_move), paged: on
in-memory adapters, a fake clock."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from infra.memory_store import MemoryGameStore
from service.core.callers import ANONYMOUS
from service.core.errors import ServiceError
from service.core.model import player_index
from service.core.settings import Settings
from service.games.commands import CreateTable, SeatRequest
from service.games.use_cases import GameService
from service.lobby.to_move import player_page
from service.lobby.use_cases import Lobby

T0 = 1_800_000_000.0


def test_the_games_waiting_on_the_player_come_first_each_run_newest_first_over_pages():
    async def body() -> None:
        now = [T0]
        counter = itertools.count(1)
        games = GameService(
            MemoryGameStore(clock=lambda: now[0]),
            Settings(),
            clock=lambda: now[0],
            random_hex=lambda n: f"{next(counter):0{2 * n}x}",
        )
        lobby = Lobby(games)
        made = []
        for i in range(7):
            now[0] += 1
            seats = [
                SeatRequest(name="Ann", player_id="ann"),
                SeatRequest(name="Bob", player_id="bob"),
            ]
            created = await lobby.create(
                CreateTable(caller=ANONYMOUS, seats=seats, starting_seat=i % 3 == 0)
            )
            made.append((created.record.id, i % 3 == 0))  # True: bob to move
        bobs = [g for g, to_bob in reversed(made) if to_bob]
        others = [g for g, to_bob in reversed(made) if not to_bob]
        for limit in (1, 2, 3, 10):
            seen, cursor = [], None
            while True:
                page = await lobby.list_player(ANONYMOUS, "bob", cursor, limit)
                assert len(page.games) <= limit
                seen.extend(r.id for r in page.games)
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert seen == bobs + others, limit
        ann = await lobby.list_player(ANONYMOUS, "ann", None, 10)
        assert [r.id for r in ann.games] == others + bobs
        with pytest.raises(ServiceError) as bad:
            await lobby.list_player(ANONYMOUS, "bob", "bm90IGEgY3Vyc29y", 10)
        assert bad.value.code == "invalid_cursor"

    asyncio.run(body())


def test_a_player_with_more_games_than_the_scan_sees_every_game_exactly_once_over_pages():
    async def body() -> None:
        now = [T0]
        counter = itertools.count(1)
        store = MemoryGameStore(clock=lambda: now[0])
        games = GameService(
            store,
            Settings(),
            clock=lambda: now[0],
            random_hex=lambda n: f"{next(counter):0{2 * n}x}",
        )
        lobby = Lobby(games)
        made = []
        for i in range(9):
            now[0] += 1
            seats = [
                SeatRequest(name="Ann", player_id="ann"),
                SeatRequest(name="Bob", player_id="bob"),
            ]
            created = await lobby.create(
                CreateTable(caller=ANONYMOUS, seats=seats, starting_seat=i % 2 == 0)
            )
            made.append((created.record.id, i % 2 == 0))  # True: bob to move
        newest = [g for g, _ in reversed(made)][:4]  # the scan reads these only
        first = [g for g, to_bob in reversed(made) if to_bob and g in newest]
        for limit in (1, 2, 3, 20):
            seen, cursor = [], None
            while True:
                page = await player_page(
                    store.list_games, player_index("bob"), "bob", cursor, limit, scan=4,
                    batch_size=3,
                )  # fmt: skip
                seen.extend(r.id for r in page.games)
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert sorted(seen) == sorted(g for g, _ in made), limit  # each game once
            assert seen[: len(first)] == first, limit

    asyncio.run(body())
