"""The one Idempotency-Key mechanism (`service.core.idempotency`), driven through the use cases
(`Lobby.create`, `Lobby.join`, `GameService.act`) on the embedded store with a fake clock:
no HTTP, no Redis.

What it owes: a copy of a command sent with the same key and the same decoded command gets
the first outcome (its credentials included) and changes nothing; another command with that
key is `idempotency_key_reused`; keys of different callers and operations never meet; no key
is ever held ahead of the work, so a command cut by a failing store, before or after its
atomic write, succeeds when retried (the first outcome, or run afresh); the outcome lives as
long as its game.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from domain.game.model import Draw, Stop
from infra.memory_store import MemoryGameStore
from service.core import idempotency
from service.core.callers import ANONYMOUS, Caller
from service.core.errors import ServiceError
from service.core.ports import Save, StoreUnavailable
from service.core.settings import Settings
from service.games.commands import Act, CreateTable, JoinSeat, SeatRequest
from service.games.use_cases import GAME_ID, GameService
from service.lobby.use_cases import Lobby

NOW = 1_760_000_000.5
DECK = ("R1", "R2", "W#", "B3", "O4", "G5", "$1", "R6", "B1", "G2")
PLATFORM = Caller(kind="platform")
ANN = Caller(kind="player", player_id="p-ann")
BOB = Caller(kind="player", player_id="p-bob")
OPEN_TABLE = [SeatRequest(name="Ann", player_id="p-ann"), SeatRequest(open=True)]
DEALT = [SeatRequest(name="Ann"), SeatRequest(name="Bob")]


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


class FlakyStore(MemoryGameStore):
    """The embedded store, whose next create or save can fail before its write (nothing
    stored) or after it (stored, but the answer lost: a Redis stall or a dead process)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.fail: str | None = None  # "before" | "after", for the next create or save

    def _failing(self, when: str) -> None:
        if self.fail == when:
            self.fail = None
            raise StoreUnavailable(f"cut {when} the write")

    async def create(self, record, events, ttl, idempotency=None) -> None:
        self._failing("before")
        await super().create(record, events, ttl, idempotency)
        self._failing("after")

    async def write(self, save: Save) -> None:
        self._failing("before")
        await super().write(save)
        self._failing("after")


def setup() -> tuple[FlakyStore, Clock, GameService, Lobby]:
    clock = Clock()
    store = FlakyStore(clock)
    counter = itertools.count()
    service = GameService(
        store, Settings(), clock=clock, random_hex=lambda n: f"{next(counter):0{2 * n}x}"
    )
    return store, clock, service, Lobby(service)


def run(coroutine):
    return asyncio.run(coroutine)


async def create_table(lobby: Lobby, caller: Caller = PLATFORM, key: str | None = "k1", **kw):
    return await lobby.create(
        CreateTable(caller=caller, seats=OPEN_TABLE, private=True, idempotency_key=key, **kw)
    )


# ------------------------------------------------------------------ create


def test_a_copy_of_a_create_gets_the_first_outcome_and_makes_no_second_game() -> None:
    store, _, _, lobby = setup()

    async def body() -> None:
        first = await create_table(lobby)
        assert not first.replayed
        assert GAME_ID.match(first.record.id)
        assert first.record.id == idempotency.created_game_id(PLATFORM.scope, "k1")
        again = await create_table(lobby)
        assert again.replayed
        assert again.record == first.record
        assert (again.tokens, again.host_token, again.invite_code) == (
            first.tokens,
            first.host_token,
            first.invite_code,
        )
        assert again.tokens
        assert again.invite_code is not None
        assert [g.id for g in (await lobby.list_player(PLATFORM, "p-ann", None, 10)).games] == [
            first.record.id
        ]
        assert await store.load(first.record.id) == first.record

    run(body())


def test_a_create_without_a_key_is_a_new_game_each_time() -> None:
    _, _, _, lobby = setup()

    async def body() -> None:
        one = await create_table(lobby, key=None)
        two = await create_table(lobby, key=None)
        assert one.record.id != two.record.id
        assert not one.replayed
        assert not two.replayed

    run(body())


def test_the_same_key_with_another_create_is_refused_and_changes_nothing() -> None:
    store, _, _, lobby = setup()

    async def body() -> None:
        first = await create_table(lobby)
        with pytest.raises(ServiceError) as reused:
            await create_table(lobby, fill="drop")
        assert reused.value.code == "idempotency_key_reused"
        with pytest.raises(ServiceError) as seats:
            await lobby.create(CreateTable(caller=PLATFORM, seats=DEALT, idempotency_key="k1"))
        assert seats.value.code == "idempotency_key_reused"
        assert await store.load(first.record.id) == first.record

    run(body())


def test_keys_of_different_callers_never_meet() -> None:
    _, _, _, lobby = setup()

    async def body() -> None:
        anns = await lobby.create(CreateTable(caller=ANN, seats=OPEN_TABLE, idempotency_key="same"))
        bobs = await lobby.create(
            CreateTable(caller=BOB, seats=[SeatRequest(open=True)] * 2, idempotency_key="same")
        )
        anonymous = await lobby.create(
            CreateTable(caller=ANONYMOUS, seats=DEALT, idempotency_key="same")
        )
        ids = {anns.record.id, bobs.record.id, anonymous.record.id}
        assert len(ids) == 3
        assert not (anns.replayed)
        assert not (bobs.replayed)
        assert not anonymous.replayed
        # a scope and key that concatenate alike are other keys too
        assert idempotency.created_game_id("ab", "c") != idempotency.created_game_id("a", "bc")
        assert idempotency.entry_key("join", "ab", "c") != idempotency.entry_key("join", "a", "bc")

    run(body())


@pytest.mark.parametrize("cut", ["before", "after"])
def test_a_create_cut_by_the_store_succeeds_when_retried(cut: str) -> None:
    """Cut before its write: nothing was stored, the retry runs afresh. Cut after it (the
    game and its outcome stored, the answer lost): the retry gets that outcome. Either way
    the retry is answered at once, and one game exists."""
    store, _, _, lobby = setup()

    async def body() -> None:
        store.fail = cut
        with pytest.raises(StoreUnavailable):
            await create_table(lobby)
        game_id = idempotency.created_game_id(PLATFORM.scope, "k1")
        assert (await store.load(game_id) is None) == (cut == "before")
        retried = await create_table(lobby)
        assert retried.record.id == game_id
        assert retried.replayed == (cut == "after")
        assert retried.tokens
        assert retried.invite_code is not None
        assert await store.load(game_id) == retried.record
        again = await create_table(lobby)
        assert again.replayed
        assert (again.tokens, again.invite_code) == (retried.tokens, retried.invite_code)

    run(body())


def test_concurrent_copies_of_a_create_make_one_game_and_answer_alike() -> None:
    _, _, _, lobby = setup()

    async def body() -> None:
        # a dealt game with a bot: its deal runs in a worker thread, so the copies overlap
        seats = [SeatRequest(name="Ann"), SeatRequest(bot="random")]
        copies = [
            lobby.create(CreateTable(caller=ANN, seats=seats, deck=DECK, idempotency_key="k"))
            for _ in range(8)
        ]
        outcomes = await asyncio.gather(*copies)
        assert sum(not o.replayed for o in outcomes) == 1
        assert len({o.record.id for o in outcomes}) == 1
        assert len({tuple(o.tokens) for o in outcomes}) == 1
        assert len({o.record.version for o in outcomes}) == 1

    run(body())


def test_a_created_outcome_lives_as_long_as_its_game() -> None:
    """The outcome is the game's: kept while the game is stored, gone with it; a create with
    that key afterwards makes a new game (under the same id)."""
    store, clock, service, lobby = setup()

    async def body() -> None:
        first = await lobby.create(CreateTable(caller=ANN, seats=DEALT, idempotency_key="k"))
        game_id = first.record.id
        clock.now += service.settings.games.idle_ttl  # idle, but within its grace: still stored
        assert (
            await lobby.create(CreateTable(caller=ANN, seats=DEALT, idempotency_key="k"))
        ).replayed
        clock.now += service.settings.games.idle_ttl + 1  # past its expiry
        assert await store.load(game_id) is None
        fresh = await lobby.create(CreateTable(caller=ANN, seats=DEALT, idempotency_key="k"))
        assert not fresh.replayed
        assert fresh.record.id == game_id
        assert fresh.tokens != first.tokens

    run(body())


# ------------------------------------------------------------------ join


def test_a_copy_of_a_join_gets_the_first_seat_and_token_and_takes_no_other_seat() -> None:
    store, _, _, lobby = setup()

    async def body() -> None:
        table = await lobby.create(
            CreateTable(caller=ANN, seats=[SeatRequest(name="Ann"), *[SeatRequest(open=True)] * 2])
        )
        game_id = table.record.id
        first = await lobby.join(
            JoinSeat(caller=BOB, game_id=game_id, name="Bob", idempotency_key="j1")
        )
        assert not first.replayed
        again = await lobby.join(
            JoinSeat(caller=BOB, game_id=game_id, name="Bob", idempotency_key="j1")
        )
        assert again.replayed
        assert (again.seat, again.token, again.record) == (first.seat, first.token, first.record)
        stored = await store.load(game_id)
        assert [s.taken for s in stored.table.seats] == [True, True, False]
        assert stored.version == first.record.version
        with pytest.raises(ServiceError) as reused:
            await lobby.join(
                JoinSeat(caller=BOB, game_id=game_id, name="Robert", idempotency_key="j1")
            )
        assert reused.value.code == "idempotency_key_reused"
        assert await store.load(game_id) == stored

    run(body())


def test_a_copy_of_the_join_that_started_the_game_gets_its_first_answer() -> None:
    """The table is full and started after the first join: its copy is still answered."""
    _, _, _, lobby = setup()

    async def body() -> None:
        table = await lobby.create(
            CreateTable(caller=ANN, seats=[SeatRequest(name="Ann"), SeatRequest(open=True)])
        )
        first = await lobby.join(JoinSeat(caller=BOB, game_id=table.record.id, idempotency_key="j"))
        assert first.record.status == "active"
        again = await lobby.join(JoinSeat(caller=BOB, game_id=table.record.id, idempotency_key="j"))
        assert again.replayed
        assert (again.seat, again.token, again.record) == (first.seat, first.token, first.record)
        with pytest.raises(ServiceError) as later:  # a join without the key: a new one
            await lobby.join(JoinSeat(caller=BOB, game_id=table.record.id))
        assert later.value.code == "game_not_open"

    run(body())


@pytest.mark.parametrize("cut", ["before", "after"])
def test_a_join_cut_by_the_store_succeeds_when_retried(cut: str) -> None:
    store, _, _, lobby = setup()

    async def body() -> None:
        table = await lobby.create(
            CreateTable(caller=ANN, seats=[SeatRequest(name="Ann"), *[SeatRequest(open=True)] * 2])
        )
        game_id = table.record.id
        store.fail = cut
        with pytest.raises(StoreUnavailable):
            await lobby.join(JoinSeat(caller=BOB, game_id=game_id, idempotency_key="j"))
        retried = await lobby.join(JoinSeat(caller=BOB, game_id=game_id, idempotency_key="j"))
        assert retried.replayed == (cut == "after")
        stored = await store.load(game_id)
        assert [s.taken for s in stored.table.seats] == [True, True, False]
        assert stored.table.seats[retried.seat].player_id == "p-bob"

    run(body())


def test_concurrent_copies_of_a_join_take_one_seat() -> None:
    store, _, _, lobby = setup()

    async def body() -> None:
        table = await lobby.create(
            CreateTable(caller=ANN, seats=[SeatRequest(name="Ann"), *[SeatRequest(open=True)] * 3])
        )
        game_id = table.record.id
        copies = [
            lobby.join(JoinSeat(caller=BOB, game_id=game_id, idempotency_key="j")) for _ in range(8)
        ]
        joined = await asyncio.gather(*copies)
        assert sum(not j.replayed for j in joined) == 1
        assert len({(j.seat, j.token) for j in joined}) == 1
        stored = await store.load(game_id)
        assert sum(s.taken for s in stored.table.seats) == 2

    run(body())


def test_join_keys_are_per_caller_and_never_meet_an_actions() -> None:
    _, _, _, lobby = setup()

    async def body() -> None:
        seats = [SeatRequest(name="Ann", player_id="p-ann"), *[SeatRequest(open=True)] * 2]
        table = await lobby.create(CreateTable(caller=ANN, seats=seats, deck=DECK, starting_seat=0))
        game_id = table.record.id
        bob = await lobby.join(JoinSeat(caller=BOB, game_id=game_id, idempotency_key="same"))
        cid = await lobby.join(JoinSeat(caller=Caller(kind="player", player_id="p-cid"), game_id=game_id, idempotency_key="same"))  # fmt: skip
        assert not bob.replayed
        assert not cid.replayed
        assert bob.seat != cid.seat  # started now: every seat taken
        acted = await lobby.games.act(
            Act(game_id=game_id, caller=ANN, action=Draw(), idempotency_key="same")
        )
        assert not acted.replayed

    run(body())


# ------------------------------------------------------------------ act


def test_a_copy_of_an_action_is_replayed_and_another_action_is_refused() -> None:
    store, _, service, lobby = setup()

    async def body() -> None:
        created = await lobby.create(
            CreateTable(caller=ANONYMOUS, seats=DEALT, deck=DECK, starting_seat=0)
        )
        game_id, token = created.record.id, created.tokens[0][1]
        ann = Caller(seat_token=token)
        first = await service.act(
            Act(game_id=game_id, caller=ann, action=Draw(), idempotency_key="a")
        )
        again = await service.act(
            Act(game_id=game_id, caller=ann, action=Draw(), idempotency_key="a")
        )
        assert again.replayed
        assert not first.replayed
        assert (again.record, again.events) == (first.record, first.events)
        with pytest.raises(ServiceError) as reused:
            await service.act(
                Act(game_id=game_id, caller=ann, action=Stop(take="numbers"), idempotency_key="a")
            )
        assert reused.value.code == "idempotency_key_reused"
        assert (await store.load(game_id)).version == first.record.version == 1

    run(body())


@pytest.mark.parametrize("cut", ["before", "after"])
def test_an_action_cut_by_the_store_succeeds_when_retried(cut: str) -> None:
    store, _, service, lobby = setup()

    async def body() -> None:
        created = await lobby.create(
            CreateTable(caller=ANONYMOUS, seats=DEALT, deck=DECK, starting_seat=0)
        )
        game_id = created.record.id
        ann = Caller(seat_token=created.tokens[0][1])
        store.fail = cut
        with pytest.raises(StoreUnavailable):
            await service.act(Act(game_id=game_id, caller=ann, action=Draw(), idempotency_key="a"))
        retried = await service.act(
            Act(game_id=game_id, caller=ann, action=Draw(), idempotency_key="a")
        )
        assert retried.replayed == (cut == "after")
        assert (await store.load(game_id)).version == retried.record.version == 1

    run(body())


def test_fingerprints_are_of_the_decoded_command() -> None:
    assert idempotency.fingerprint("act", 0, Draw()) == idempotency.fingerprint("act", 0, Draw())
    assert idempotency.fingerprint("act", 0, Draw()) != idempotency.fingerprint("act", 1, Draw())
    assert idempotency.fingerprint("act", 0, Draw()) != idempotency.fingerprint("join", 0, Draw())
    numbers, currency = Stop(take="numbers"), Stop(take="currency")
    assert idempotency.fingerprint("act", 0, numbers) != idempotency.fingerprint("act", 0, currency)
