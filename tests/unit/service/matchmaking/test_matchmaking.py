"""The matchmaking use cases and matchmaker (`service.matchmaking`) on in-memory adapters (the
embedded game and ticket stores, embedded queues), a fake clock and fake randomness: who
may do what, the ticket's life, and the matchmaker's steps, twice at once where two replicas
could, and after a replica died mid-step."""

from __future__ import annotations

import asyncio
import itertools

import msgspec
import pytest

from infra.memory_matchmaking import MemoryTicketStore
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.core.callers import ANONYMOUS, PLATFORM, Caller
from service.core.errors import ServiceError
from service.core.settings import Settings
from service.games.use_cases import GameService
from service.history.ratings import PRIOR
from service.lobby.use_cases import Lobby
from service.matchmaking.matchmaker import MAX_TABLES, Matchmaker
from service.matchmaking.records import (
    LIFETIME,
    MAX_WAITING,
    STEP,
    CreateTicket,
    Match,
    PartyMember,
    TicketRecord,
)
from service.matchmaking.use_cases import Matchmaking

T0 = 1_800_000_000.0
ANN = Caller(kind="player", player_id="ann")


class World:
    def __init__(self, *, identities_open: bool = True, quotas: bool = False) -> None:
        self.now = T0
        clock = lambda: self.now  # noqa: E731
        counter = itertools.count(1)
        hexes = lambda n: f"{next(counter):0{2 * n}x}"  # noqa: E731
        self.store = MemoryGameStore(clock=clock)
        self.tickets = MemoryTicketStore()
        self.queue = MemoryQueue("matchmaking")
        self.games = GameService(self.store, Settings(), clock=clock, random_hex=hexes)
        self.lobby = Lobby(self.games)
        self.created: list[str] = []
        self.told: list[str] = []
        self.ratings = {"pro": msgspec.structs.replace(PRIOR, mu=40.0)}
        self.mm = Matchmaking(
            self.tickets, self.queue, self.create, ratings=self.rated, announce=self.announce,
            clock=clock, random_hex=hexes, identities_open=identities_open,
            quotas=self.store if quotas else None,
        )  # fmt: skip

    async def create(self, command):
        made = await self.lobby.create(command)
        self.created.append(made.record.id)
        return made

    async def rated(self, players):
        return {p: self.ratings[p] for p in players if p in self.ratings}

    async def announce(self, messages) -> None:
        self.told.extend(m.id for m in messages)

    async def ask(self, caller: Caller = PLATFORM, **fields) -> TicketRecord:
        fields.setdefault("mode", "live")
        fields.setdefault("name", "P")
        made = await self.mm.create(CreateTicket(caller=caller, **fields))
        return made.record

    async def step(self, pool: str = "live:rated", replicas: int = 1) -> None:
        await asyncio.gather(*(self.mm.matchmaker.step(pool) for _ in range(replicas)))


def run(body):
    asyncio.run(body())


def test_two_players_are_matched_into_one_game_each_with_their_own_seat() -> None:
    async def body() -> None:
        w = World()
        a = await w.ask(player_id="ann", sizes=(2,))
        b = await w.ask(player_id="bob", sizes=(2,))
        await w.step()
        ann, bob = await w.tickets.load_ticket(a.id), await w.tickets.load_ticket(b.id)
        assert ann.status == bob.status == "matched"
        assert ann.game_id == bob.game_id
        assert len(w.created) == 1
        assert {ann.seat, bob.seat} == {0, 1}
        game = await w.store.load(ann.game_id)
        assert [s.player_id for s in game.table.seats] == ["ann", "bob"]
        assert all(s.verified for s in game.table.seats)
        assert ann.seat_token != bob.seat_token
        assert ann.seat_token.startswith(f"{ann.game_id}.{ann.seat}.")
        assert sorted(w.told) == sorted([f"msg_mm_{a.id}_matched", f"msg_mm_{b.id}_matched"])
        # only the holder reads the seat token
        assert w.mm.shown(ann, Caller(kind="player", player_id="ann")).seat_token == ann.seat_token
        assert w.mm.shown(ann, Caller(kind="player", player_id="bob")).seat_token is None
        assert w.mm.shown(ann, ANONYMOUS).seat_token is None

    run(body)


@pytest.mark.parametrize("rated", [True, False])
def test_a_casual_ticket_makes_a_game_that_is_never_ranked_and_a_rated_one_a_ranked_one(
    rated: bool,
) -> None:
    async def body() -> None:
        w = World()
        a = await w.ask(player_id="ann", sizes=(2,), rated=rated)
        await w.ask(player_id="bob", sizes=(2,), rated=rated)
        await w.step("live:rated" if rated else "live:casual")
        ann = await w.tickets.load_ticket(a.id)
        game = await w.store.load(ann.game_id)
        assert game.casual is not rated

    run(body)


def test_two_replicas_stepping_at_once_make_one_table() -> None:
    async def body() -> None:
        w = World()
        for p in ("a", "b", "c", "d", "e", "f"):
            await w.ask(player_id=p, sizes=(2,))
        await w.step(replicas=3)
        await w.step(replicas=3)
        tickets = await asyncio.gather(*(w.tickets.load_ticket(t) for t in w.tickets._records))
        assert all(t.status == "matched" for t in tickets)
        games = {t.game_id for t in tickets}
        assert len(games) == 3
        assert len(set(w.created)) == 3  # a game made again is the same game

    run(body)


def test_a_step_that_died_after_its_claim_is_finished_by_the_next_with_the_same_game() -> None:
    async def body() -> None:
        w = World()
        a = await w.ask(player_id="ann", sizes=(2,))
        b = await w.ask(player_id="bob", sizes=(2,))
        match = Match(id="m1", tickets=(a.id, b.id), size=2)
        claimed = [
            msgspec.structs.replace(t, status="matching", match=match, version=1) for t in (a, b)
        ]
        await w.tickets.save_tickets(claimed)
        # the dead step had made the game, not marked the tickets
        first = await w.create(Matchmaker.table(match, claimed))
        await w.step()
        ann = await w.tickets.load_ticket(a.id)
        assert ann.status == "matched"
        assert ann.game_id == first.record.id
        assert ann.seat_token == dict(first.tokens)[ann.seat]
        assert set(w.created) == {first.record.id}

    run(body)


def test_a_cancelled_ticket_is_never_seated_and_a_matched_one_cannot_be_cancelled() -> None:
    async def body() -> None:
        w = World()
        a = await w.ask(player_id="ann", sizes=(2,))
        cancelled = await w.mm.cancel(PLATFORM, a.id)
        assert cancelled.status == "cancelled"
        assert (await w.mm.cancel(PLATFORM, a.id)).status == "cancelled"  # again: as it is
        b = await w.ask(player_id="bob", sizes=(2,))
        await w.step()
        assert (await w.tickets.load_ticket(b.id)).status == "waiting"
        c = await w.ask(player_id="cy", sizes=(2,))
        await w.step()
        assert (await w.tickets.load_ticket(c.id)).status == "matched"
        with pytest.raises(ServiceError) as refused:
            await w.mm.cancel(PLATFORM, c.id)
        assert refused.value.code == "ticket_already_matched"

    run(body)


def test_a_player_holds_one_waiting_ticket_per_mode() -> None:
    async def body() -> None:
        w = World()
        await w.ask(ANN, sizes=(5,))
        with pytest.raises(ServiceError) as refused:
            await w.ask(ANN, sizes=(2,), rated=False)
        assert refused.value.code == "ticket_exists"
        await w.ask(ANN, mode="correspondence")
        with pytest.raises(ServiceError) as party:
            await w.ask(player_id="bob", party=(PartyMember(player_id="ann", name="A"),))
        assert party.value.code == "ticket_exists"

    run(body)


def test_who_may_ask_for_whom() -> None:
    async def body() -> None:
        w = World(identities_open=False)
        for caller, fields, code in [
            (ANONYMOUS, {"player_id": "ann"}, "authentication_required"),
            (ANN, {"player_id": "bob"}, "player_id_not_yours"),
            (ANN, {"party": (PartyMember(player_id="bob", name="B"),)}, "player_id_not_yours"),
            (PLATFORM, {}, "invalid_ticket"),
            (
                PLATFORM,
                {
                    "player_id": "ann",
                    "sizes": (2,),
                    "party": (
                        PartyMember(player_id="b", name="B"),
                        PartyMember(player_id="c", name="C"),
                    ),
                },
                "party_too_large",
            ),
            (
                PLATFORM,
                {"player_id": "ann", "party": (PartyMember(player_id="ann", name="A"),)},
                "duplicate_player_id",
            ),
        ]:
            with pytest.raises(ServiceError) as refused:
                await w.ask(caller, **fields)
            assert refused.value.code == code
        assert w.tickets._records == {}

    run(body)


def test_the_holder_alone_cancels_and_a_ticket_token_makes_a_holder() -> None:
    async def body() -> None:
        w = World()
        made = await w.mm.create(CreateTicket(caller=ANONYMOUS, mode="live", name="Anon"))
        assert made.ticket_token is not None
        assert made.record.token_hash != made.ticket_token
        with pytest.raises(ServiceError) as refused:
            await w.mm.cancel(Caller(kind="player", player_id="other"), made.record.id)
        assert refused.value.code == "not_your_ticket"
        forged = f"{made.record.id}.ticket.forged"
        with pytest.raises(ServiceError) as bad:
            await w.mm.cancel(Caller(seat_token=forged), made.record.id)
        assert bad.value.code == "unauthorized"
        holder = Caller(seat_token=made.ticket_token)
        assert (await w.mm.cancel(holder, made.record.id)).status == "cancelled"

    run(body)


def test_a_rated_ticket_carries_the_players_rating_and_the_default_without_one() -> None:
    async def body() -> None:
        w = World()
        pro = await w.ask(player_id="pro")
        new = await w.ask(player_id="new")
        party = await w.ask(player_id="x", party=(PartyMember(player_id="pro2", name="P"),))
        casual = await w.ask(player_id="cas", rated=False)
        assert (pro.rating, new.rating, party.rating, casual.rating) == (40.0, 25.0, 25.0, None)
        # far apart: they wait until their windows reach each other
        await w.step()
        assert (await w.tickets.load_ticket(pro.id)).status == "waiting"
        shown = w.mm.shown(pro, PLATFORM)
        assert shown.window is not None
        assert shown.window[0] < 40.0 < shown.window[1]

    run(body)


def test_bots_fill_the_table_after_the_wait() -> None:
    async def body() -> None:
        w = World()
        a = await w.ask(player_id="ann", sizes=(3,), fill_bots_after=30)
        await w.step()
        assert (await w.tickets.load_ticket(a.id)).status == "waiting"
        w.now += 30
        await w.step()
        ann = await w.tickets.load_ticket(a.id)
        assert ann.status == "matched"
        game = await w.store.load(ann.game_id)
        assert [s.bot for s in game.table.seats] == [None, "basic", "basic"]

    run(body)


def test_a_ticket_expires_after_a_day_and_frees_its_player() -> None:
    async def body() -> None:
        w = World()
        a = await w.ask(player_id="ann", sizes=(5,))
        w.now += LIFETIME
        assert w.mm.shown(a, PLATFORM).status == "expired"  # read before any step
        assert w.mm.shown(a, PLATFORM).waited == LIFETIME
        await w.step()
        assert (await w.tickets.load_ticket(a.id)).status == "expired"
        await w.ask(player_id="ann", sizes=(5,))

    run(body)


def test_a_keyed_create_made_twice_is_one_ticket() -> None:
    async def body() -> None:
        w = World()
        ask = CreateTicket(caller=ANONYMOUS, mode="live", name="A", player_id="ann",
                           idempotency_key="k1", origin="10.0.0.1")  # fmt: skip
        first = await w.mm.create(ask)
        assert first.ticket_token is not None
        again = await w.mm.create(ask)
        assert again.replayed
        assert again.record.id == first.record.id
        with pytest.raises(ServiceError) as reused:
            await w.mm.create(msgspec.structs.replace(ask, sizes=(2,)))
        assert reused.value.code == "idempotency_key_reused"

    run(body)


def test_a_copy_of_an_anonymous_keyed_create_never_gets_the_ticket_token() -> None:
    async def body() -> None:
        w = World()
        ask = CreateTicket(caller=ANONYMOUS, mode="live", name="A", player_id="ann",
                           idempotency_key="k1", origin="10.0.0.1")  # fmt: skip
        first = await w.mm.create(ask)
        # the same key and body from the same address: perhaps a stranger behind it
        again = await w.mm.create(ask)
        assert again.replayed
        assert again.ticket_token is None
        # from another address: a create of its own, which finds ann's ticket held
        with pytest.raises(ServiceError) as held:
            await w.mm.create(msgspec.structs.replace(ask, origin="10.0.0.2"))
        assert held.value.code == "ticket_exists"
        shown = w.mm.shown(first.record, Caller(seat_token=first.ticket_token))
        assert w.mm.holds(Caller(seat_token=first.ticket_token), shown.record)

    run(body)


def test_the_same_key_with_another_mode_is_refused_and_makes_no_ticket() -> None:
    async def body() -> None:
        w = World()
        ask = CreateTicket(caller=PLATFORM, mode="live", name="A", player_id="ann",
                           idempotency_key="k1")  # fmt: skip
        first = await w.mm.create(ask)
        with pytest.raises(ServiceError) as reused:
            await w.mm.create(msgspec.structs.replace(ask, mode="correspondence"))
        assert reused.value.code == "idempotency_key_reused"
        assert await w.tickets.pool("correspondence:rated", 10) == []
        assert (await w.mm.create(ask)).record.id == first.record.id

    run(body)


def test_a_keyed_tickets_id_comes_from_randomness_not_from_its_key() -> None:
    async def body() -> list[str]:
        ids = []
        for digits in ("a", "b"):
            w = World()
            w.mm.random_hex = lambda n, d=digits: d * (2 * n)
            made = await w.mm.create(CreateTicket(caller=PLATFORM, mode="live", name="A",
                                                  player_id="ann", idempotency_key="k1"))  # fmt: skip
            ids.append(made.record.id)
        return ids

    first, second = asyncio.run(body())
    assert first != second


def test_a_copy_of_a_keyed_create_that_saved_nothing_makes_the_ticket_the_key_names() -> None:
    async def body() -> None:
        w = World()
        ask = CreateTicket(caller=PLATFORM, mode="live", name="A", player_id="ann",
                           idempotency_key="k1")  # fmt: skip
        real_create = w.tickets.create_ticket
        tried: list[str] = []

        async def dying(record, now):
            tried.append(record.id)
            raise ConnectionError("the process died before its save")

        w.tickets.create_ticket = dying  # type: ignore[method-assign]
        with pytest.raises(ConnectionError):
            await w.mm.create(ask)
        w.tickets.create_ticket = real_create  # type: ignore[method-assign]
        made = await w.mm.create(ask)
        assert not made.replayed
        assert made.record.id == tried[0]
        again = await w.mm.create(ask)
        assert again.replayed
        assert again.record.id == made.record.id

    run(body)


def test_an_anonymous_caller_holds_a_bounded_number_of_waiting_tickets() -> None:
    async def body() -> None:
        w = World(quotas=True)
        for i in range(MAX_WAITING):
            await w.mm.create(CreateTicket(caller=ANONYMOUS, mode="live", name="A",
                                           player_id=f"p{i}", sizes=(5,), origin="10.0.0.1"))  # fmt: skip
        with pytest.raises(ServiceError) as refused:
            await w.mm.create(CreateTicket(caller=ANONYMOUS, mode="live", name="A",
                                           player_id="last", sizes=(5,), origin="10.0.0.1"))  # fmt: skip
        assert refused.value.code == "too_many_tickets"
        assert refused.value.retry_after > 0

    run(body)


def test_a_step_makes_a_bounded_number_of_tables_and_asks_to_run_again_at_once() -> None:
    async def body() -> None:
        w = World()
        for i in range(2 * MAX_TABLES + 2):
            await w.ask(player_id=f"p{i}", sizes=(2,))
        assert await w.mm.matchmaker.step("live:rated") == w.now
        assert w.mm.matchmaker.last.tables == MAX_TABLES
        assert await w.mm.matchmaker.step("live:rated") is None
        assert w.mm.matchmaker.last.tables == 1
        assert await w.mm.matchmaker.step("live:rated") is None  # nothing waits

    run(body)


def test_a_pool_with_tickets_waiting_is_stepped_again_a_step_later() -> None:
    async def body() -> None:
        w = World()
        await w.ask(player_id="ann", sizes=(5,))
        assert await w.mm.matchmaker.step("live:rated") == w.now + STEP
        assert await w.queue.queued("live:rated")  # the create queued its pool's step

    run(body)


def test_a_ticket_id_with_a_trailing_newline_is_not_found_and_never_reaches_the_store() -> None:
    async def body() -> None:
        w = World()
        made = await w.ask(player_id="ann")
        asked: list[str] = []
        load = w.tickets.load_ticket

        async def spying(ticket_id: str):
            asked.append(ticket_id)
            return await load(ticket_id)

        w.tickets.load_ticket = spying  # type: ignore[method-assign]
        for bad in (f"{made.id}\n", f"\n{made.id}", f"{made.id}0"):
            with pytest.raises(ServiceError) as missing:
                await w.mm.get(PLATFORM, bad)
            assert missing.value.code == "ticket_not_found"
        assert asked == []
        assert (await w.mm.get(PLATFORM, made.id)).record.id == made.id

    run(body)
