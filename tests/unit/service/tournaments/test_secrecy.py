"""The secrecy policy alone (`service.tournaments.secrecy`), on records made here: which tables of a
round are secret, and to whom."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from domain.tournaments.rules import Entrant, Round, Settings, Table, TableResult
from service.core.callers import ANONYMOUS, PLATFORM, Caller
from service.core.errors import ServiceError
from service.core.model import GameRecord, TableRef, TournamentRecord
from service.core.model import Table as SeatsTable
from service.tournaments.records import game_id
from service.tournaments.secrecy import Secrecy

TID = "t" * 20
BOTS = [Entrant(id=f"bot:{i}", bot="random") for i in range(1, 5)]
HUMANS = [Entrant(id="ann"), Entrant(id="bob")]


def tournament(tables: list[tuple[str, ...]], deals: list[str], **changes) -> TournamentRecord:
    played = Round(
        number=1,
        tables=tuple(
            Table(number=i, seats=s, deal=d)
            for i, (s, d) in enumerate(zip(tables, deals, strict=True))
        ),
    )
    record = TournamentRecord(
        id=TID, name="T", organiser="platform", settings=Settings(table_size=2), places=6,
        status="running", entrants=(*HUMANS, *BOTS), rounds=(played,), created_at=0.0,
        updated_at=0.0,
    )  # fmt: skip
    return msgspec.structs.replace(record, **changes)


def result(table: int, seats: tuple[str, ...]) -> TableResult:
    return TableResult(round=1, table=table, deal="d", seats=seats, ranks=(1, 2), scores=(5, 1))


def game(table: int, status: str) -> GameRecord:
    """A table's game, live or ended (as a cancelled table: no engine state needed here)."""
    ended = None if status == "live" else SeatsTable(seats=(), cancelled=True)
    return GameRecord(
        id=game_id(TID, 1, table), state=None, token_hashes=(), created_at=0.0, updated_at=0.0,
        table=ended, tournament=TableRef(tournament_id=TID, round=1, table=table),
    )  # fmt: skip


def secrecy(record: TournamentRecord, games: dict[int, str]) -> Secrecy:
    stored = {game_id(TID, 1, t): game(t, s) for t, s in games.items()}

    async def load_game(gid: str) -> GameRecord | None:
        return stored.get(gid)

    async def load_tournament(tid: str) -> TournamentRecord | None:
        return record if tid == TID else None

    async def seat_of(record: GameRecord, caller: Caller) -> int | None:
        return 0 if caller.player_id == "ann" and record.tournament.table == 0 else None

    return Secrecy(load_game, load_tournament, seat_of)


SEATS = [("ann", "bot:1"), ("bob", "bot:2"), ("bot:3", "bot:4")]


def test_every_table_of_a_deal_a_human_still_plays_elsewhere_is_secret() -> None:
    record = tournament(SEATS, ["d"] * 3, results=(result(2, SEATS[2]),))
    policy = secrecy(record, {0: "live", 1: "live", 2: "finished"})
    assert asyncio.run(policy.secret(record)) == {(1, 0), (1, 1), (1, 2)}


def test_a_table_whose_every_other_table_finished_is_not_secret() -> None:
    record = tournament(SEATS, ["d"] * 3, results=(result(2, SEATS[2]),))
    policy = secrecy(record, {0: "live", 1: "finished", 2: "finished"})  # bob's: no result yet
    assert asyncio.run(policy.secret(record)) == {(1, 1), (1, 2)}


def test_fresh_deals_and_tables_of_bots_keep_nothing_secret() -> None:
    fresh = tournament(SEATS, ["a", "b", "c"])
    assert asyncio.run(secrecy(fresh, {0: "live", 1: "live", 2: "live"}).secret(fresh)) == set()
    bots = [("bot:1", "bot:2"), ("bot:3", "bot:4")]
    only_bots = tournament(bots, ["d", "d"])
    assert asyncio.run(secrecy(only_bots, {0: "live", 1: "live"}).secret(only_bots)) == set()


def test_a_table_not_dealt_yet_is_still_to_be_played_unless_the_tournament_ended() -> None:
    record = tournament(SEATS, ["d"] * 3)
    assert (1, 0) in asyncio.run(secrecy(record, {0: "live"}).secret(record))
    stopped = msgspec.structs.replace(record, status="stopped")
    assert (1, 1) in asyncio.run(secrecy(stopped, {0: "live"}).secret(stopped))  # ann's live
    assert (1, 0) not in asyncio.run(secrecy(stopped, {0: "live"}).secret(stopped))


def test_who_is_refused() -> None:
    record = tournament(SEATS, ["d"] * 3)
    policy = secrecy(record, {0: "live", 1: "live", 2: "finished"})
    ann, bob = Caller(kind="player", player_id="ann"), Caller(kind="player", player_id="bob")

    async def body() -> None:
        await policy.check(game(0, "live"), PLATFORM)
        await policy.check(game(0, "live"), ann, live=True)  # her own live game
        for caller, live in ((ann, False), (bob, True), (ANONYMOUS, True)):
            with pytest.raises(ServiceError) as refused:
                await policy.check(game(0, "live"), caller, live=live)
            assert refused.value.code == "game_embargoed"
        with pytest.raises(ServiceError):
            await policy.check_id(game_id(TID, 1, 2), ann)
        await policy.check_id(game_id(TID, 1, 2), PLATFORM)
        await policy.check_id("f" * 20, ANONYMOUS)  # no tournament's: nothing to keep
        shown = await policy.rounds_shown(record, ann)
        assert [t.number for t in shown.rounds[0].tables] == [0]
        assert (await policy.rounds_shown(record, PLATFORM)) is record

    asyncio.run(body())


def test_what_the_archive_asks_a_tables_deal_and_whether_its_game_is_sealed() -> None:
    record = tournament(SEATS, ["d", "e", "d"], results=(result(2, SEATS[2]),))
    policy = secrecy(record, {0: "live", 1: "live", 2: "finished"})
    bots_table = TableRef(tournament_id=TID, round=1, table=2)
    assert asyncio.run(policy.deal_of(bots_table)) == [game_id(TID, 1, 0)]  # not table 1's
    assert asyncio.run(policy.sealed(bots_table))  # ann still plays its deal
    assert not asyncio.run(policy.sealed(TableRef(tournament_id=TID, round=1, table=1)))
    assert asyncio.run(policy.deal_of(TableRef(tournament_id=TID, round=2, table=0))) == []
    assert asyncio.run(policy.deal_of(TableRef(tournament_id="other", round=1, table=0))) == []
