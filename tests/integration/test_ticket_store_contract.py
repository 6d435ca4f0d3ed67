"""The TicketStore contract (service.matchmaking.records), run against both adapters: in memory
and real Redis (each test its own key prefix, its keys deleted afterwards)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

import msgspec
import pytest

from infra.memory_matchmaking import MemoryTicketStore
from infra.redis_client import connect
from infra.redis_matchmaking import RedisTicketStore
from service.matchmaking.records import (
    LIFETIME,
    KeyClaim,
    PartyMember,
    TicketConflict,
    TicketHeld,
    TicketRecord,
)

NOW = 1_760_000_000.5
ENTRIES = ("create_ticket:e1", "create_ticket:e2")  # the claims' entries the tests make


def ticket(ticket_id: str, player: str = "ann", at: float = NOW, **changes: object) -> TicketRecord:
    fields: dict = {"mode": "live", "rated": True, "sizes": (2, 3), "name": player.title()}
    fields.update(changes)
    return TicketRecord(
        id=ticket_id, player_id=player, created_at=at, expires_at=at + LIFETIME, updated_at=at,
        **fields,
    )  # fmt: skip


def tid(mode: str = "l") -> str:
    return mode + secrets.token_hex(10)[:19]


def bump(record: TicketRecord, **changes: object) -> TicketRecord:
    return msgspec.structs.replace(record, version=record.version + 1, **changes)


def run(backend, body: Callable[..., Awaitable[None]]) -> None:
    async def main() -> None:
        if backend.kind == "memory":
            await body(MemoryTicketStore())
            return
        client = connect(backend.url, cluster=backend.kind == "cluster")
        prefix = f"ten-test-{secrets.token_hex(6)}"
        store = RedisTicketStore(client, prefix=prefix)
        try:
            await body(store)
        finally:
            for mode in ("live", "correspondence"):
                keys = [k async for k in client.scan_iter(match=f"{{{prefix}:mm:{mode}}}*")]
                if keys:
                    await client.delete(*keys)
            for entry in ENTRIES:  # a keyed create's claims, each in a slot of its own
                await client.delete(f"{{{prefix}:mm:key:{entry}}}")
            await client.aclose()

    asyncio.run(main())


def test_create_load_and_no_overwrite(backend):
    async def body(store) -> None:
        one = tid()
        assert await store.load_ticket(one) is None
        assert await store.create_ticket(ticket(one), NOW) is None
        assert await store.load_ticket(one) == ticket(one)
        taken = await store.create_ticket(ticket(one, name="Other"), NOW)
        assert taken == ticket(one)
        assert await store.load_ticket("not-an-id") is None

    run(backend, body)


def test_the_first_claim_of_a_key_is_kept_whatever_the_mode_of_the_later_ones(backend):
    async def body(store) -> None:
        first = KeyClaim(ticket_id=tid(), fingerprint="c1:create_ticket:one")
        later = KeyClaim(ticket_id=tid("c"), fingerprint="c1:create_ticket:two")
        assert await store.claim_key(ENTRIES[0], first, LIFETIME) == first
        assert await store.claim_key(ENTRIES[0], later, LIFETIME) == first
        assert await store.claim_key(ENTRIES[1], later, LIFETIME) == later
        assert await store.load_ticket(first.ticket_id) is None  # a claim makes no ticket

    run(backend, body)


def test_a_player_holds_one_live_ticket_per_mode(backend):
    async def body(store) -> None:
        first = tid()
        await store.create_ticket(ticket(first), NOW)
        with pytest.raises(TicketHeld) as held:
            await store.create_ticket(ticket(tid(), rated=False), NOW)
        assert held.value.ticket_id == first
        # a party member counts as a holder too
        party = (PartyMember(player_id="ann", name="Ann"),)
        with pytest.raises(TicketHeld):
            await store.create_ticket(ticket(tid(), player="bob", party=party), NOW)
        # another mode is another ticket
        assert await store.create_ticket(ticket(tid("c"), mode="correspondence"), NOW) is None
        # past its expiry it no longer holds
        assert await store.create_ticket(ticket(tid(), at=NOW + LIFETIME), NOW + LIFETIME) is None

    run(backend, body)


def test_a_ticket_saved_final_frees_its_players_and_leaves_its_pool(backend):
    async def body(store) -> None:
        one, two = tid(), tid()
        await store.create_ticket(ticket(one), NOW)
        await store.create_ticket(ticket(two, player="bob", at=NOW + 1), NOW + 1)
        assert [t.id for t in await store.pool("live:rated", 10)] == [one, two]
        cancelled = bump(ticket(one), status="cancelled")
        await store.save_tickets([cancelled])
        assert await store.load_ticket(one) == cancelled
        assert [t.id for t in await store.pool("live:rated", 10)] == [two]
        assert await store.create_ticket(ticket(tid(), at=NOW + 2), NOW + 2) is None

    run(backend, body)


def test_a_claim_of_several_tickets_is_all_or_none(backend):
    async def body(store) -> None:
        a, b = ticket(tid()), ticket(tid(), player="bob", at=NOW + 1)
        await store.create_ticket(a, NOW)
        await store.create_ticket(b, NOW + 1)
        await store.save_tickets([bump(b, status="cancelled")])
        with pytest.raises(TicketConflict) as refused:
            await store.save_tickets([bump(a, status="matching"), bump(b, status="matching")])
        assert refused.value.current == bump(b, status="cancelled")
        assert await store.load_ticket(a.id) == a  # untouched
        with pytest.raises(TicketConflict) as gone:
            await store.save_tickets([bump(ticket(tid()))])
        assert gone.value.current is None

    run(backend, body)


def test_concurrent_claims_from_one_version_leave_exactly_one(backend):
    async def body(store) -> None:
        a, b = ticket(tid()), ticket(tid(), player="bob")
        await store.create_ticket(a, NOW)
        await store.create_ticket(b, NOW)

        async def claim(n: int) -> bool:
            try:
                await store.save_tickets([bump(a, name=f"m{n}"), bump(b, name=f"m{n}")])
            except TicketConflict:
                return False
            return True

        won = await asyncio.gather(*(claim(n) for n in range(8)))
        assert sum(won) == 1
        winner = f"m{won.index(True)}"
        assert (await store.load_ticket(a.id)).name == winner
        assert (await store.load_ticket(b.id)).name == winner

    run(backend, body)


def test_pools_keep_modes_and_rated_apart_oldest_first(backend):
    async def body(store) -> None:
        late, early = tid(), tid()
        casual, corr = tid(), tid("c")
        await store.create_ticket(ticket(late, player="a", at=NOW + 5), NOW)
        await store.create_ticket(ticket(early, player="b", at=NOW), NOW)
        await store.create_ticket(ticket(casual, player="c", rated=False), NOW)
        await store.create_ticket(ticket(corr, player="d", mode="correspondence"), NOW)
        assert [t.id for t in await store.pool("live:rated", 10)] == [early, late]
        assert [t.id for t in await store.pool("live:rated", 1)] == [early]
        assert [t.id for t in await store.pool("live:casual", 10)] == [casual]
        assert [t.id for t in await store.pool("correspondence:rated", 10)] == [corr]
        assert await store.pool("correspondence:casual", 10) == []

    run(backend, body)
