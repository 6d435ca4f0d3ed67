"""The use cases (`service.games.GameService`, `service.lobby.Lobby`) on in-memory adapters
(the embedded store, an embedded relay queue), a fake clock and fake randomness, no I/O: the
lobby's rules and authorization, an action's refusals that change nothing, a deadline
fired, and what the relay hands its reactions. Milliseconds each."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

import pytest

from domain.errors import RuleError
from domain.model import BankClock, Bid, Draw
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.callers import ANONYMOUS, Caller
from service.errors import ServiceError
from service.games import GameService
from service.lobby import Lobby, SeatRequest
from service.relay import Relay
from service.settings import Settings

pytestmark = pytest.mark.unit
T0 = 1_800_000_000.0
PLATFORM = Caller(kind="platform")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class Told:
    """A reaction that wants every change that starts or ends a game, and records it."""

    name = "told"

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, list[str]]] = []

    def wants(self, old, new, events) -> bool:
        return (old is None or old.status != new.status) and new.status != "open"

    async def react(self, record, events) -> None:
        kinds = [e.data.split(b'"type":"', 1)[1].split(b'"', 1)[0].decode() for e in events]
        self.seen.append((record.id, record.status, kinds))


class World:
    def __init__(self, **settings: object) -> None:
        self.clock = Clock()
        counter = itertools.count(1)
        self.store = MemoryGameStore(clock=self.clock)
        self.told = Told()
        self.relay = Relay(self.store, MemoryQueue("relay"), [self.told], clock=self.clock)
        self.games = GameService(
            self.store,
            Settings(**settings),
            relay=self.relay,
            clock=self.clock,
            random_hex=lambda n: f"{next(counter):0{2 * n}x}",
        )
        self.lobby = Lobby(self.games)


def run(body: Callable[[World], Awaitable[None]], **settings: object) -> None:
    asyncio.run(body(World(**settings)))


async def refused(code: str, call: Awaitable[object]) -> None:
    with pytest.raises(ServiceError) as caught:
        await call
    assert caught.value.code == code


def test_a_table_starts_when_its_last_seat_is_taken_and_the_start_is_relayed_once():
    async def body(w: World) -> None:
        made = await w.lobby.create(ANONYMOUS, [SeatRequest(name="Ann"), SeatRequest(open=True)])
        assert made.record.status == "open"
        assert [seat for seat, _ in made.tokens] == [0]
        assert made.host_token is not None
        assert w.told.seen == []  # an open table tells nobody
        joined = await w.lobby.join(ANONYMOUS, made.record.id, name="Bob")
        assert (joined.seat, joined.record.status) == (1, "active")
        assert [p.name for p in joined.record.state.players] == ["Ann", "Bob"]
        kinds = [type(e).__struct_config__.tag for e in _decoded(joined)]
        assert w.told.seen == [(made.record.id, "active", kinds)]
        assert "game_started" in w.told.seen[0][2]
        await refused("game_not_open", w.lobby.join(ANONYMOUS, made.record.id, name="Cy"))
        assert (await w.store.load(made.record.id)).version == joined.record.version

    run(body)


def _decoded(joined) -> list:
    import msgspec

    from domain.model import AnyEvent

    return [msgspec.json.decode(e.data, type=AnyEvent) for e in joined.events]


def test_a_private_table_needs_its_invite():
    async def body(w: World) -> None:
        made = await w.lobby.create(
            ANONYMOUS, [SeatRequest(name="Ann"), SeatRequest(open=True)], private=True
        )
        assert made.invite_code
        await refused("invite_required", w.lobby.join(ANONYMOUS, made.record.id, name="Bob"))
        await refused(
            "invite_required",
            w.lobby.join(ANONYMOUS, made.record.id, name="Bob", invite="not-the-code"),
        )
        assert (await w.store.load(made.record.id)).status == "open"
        joined = await w.lobby.join(ANONYMOUS, made.record.id, name="Bob", invite=made.invite_code)
        assert joined.record.status == "active"

    run(body)


def test_only_the_host_cancels_a_table():
    async def body(w: World) -> None:
        made = await w.lobby.create(ANONYMOUS, [SeatRequest(name="Ann"), SeatRequest(open=True)])
        [(_, seat_token)] = made.tokens
        game_id = made.record.id
        await refused("unauthorized", w.lobby.cancel(ANONYMOUS, game_id))
        await refused("not_host", w.lobby.cancel(Caller(seat_token=seat_token), game_id))
        assert (await w.store.load(game_id)).status == "open"
        cancelled = await w.lobby.cancel(Caller(seat_token=made.host_token), game_id)
        assert cancelled.status == "cancelled"
        assert w.told.seen == [(game_id, "cancelled", [])]

    run(body)


def test_an_action_needs_a_seat_of_this_game():
    async def body(w: World) -> None:
        one = await w.lobby.deal([("ann", None), ("bob", None)])
        other = await w.lobby.deal([("cy", None), ("dee", None)])
        game_id = one.record.id
        await refused("unauthorized", w.games.act(game_id, ANONYMOUS, Draw()))
        [(_, foreign), *_] = other.tokens
        await refused("forbidden", w.games.act(game_id, Caller(seat_token=foreign), Draw()))
        await refused("unauthorized", w.games.act(game_id, Caller(seat_token="x.0.y"), Draw()))
        await refused("game_not_found", w.games.act("f" * 20, PLATFORM, Draw()))
        assert (await w.store.load(game_id)).version == 0

    run(body)


def test_a_refused_action_changes_nothing():
    async def body(w: World) -> None:
        dealt = await w.lobby.deal([("ann", None), ("bob", None)], starting_seat=0)
        game_id = dealt.record.id
        tokens = dict(dealt.tokens)
        seat0 = Caller(seat_token=tokens[0])
        await refused("version_mismatch", w.games.act(game_id, seat0, Draw(), expected_version=5))
        with pytest.raises(RuleError):
            await w.games.act(game_id, seat0, Bid(amount=1))  # no auction now
        with pytest.raises(RuleError):
            await w.games.act(game_id, Caller(seat_token=tokens[1]), Draw())  # not its turn
        stored = await w.store.load(game_id)
        assert stored.version == 0
        assert len(await w.store.events(game_id, 0, 100)) == dealt.record.state.last_seq
        acted = await w.games.act(game_id, seat0, Draw(), expected_version=0)
        assert acted.record.version == 1
        assert [e.seq for e in acted.events] == [
            e.seq for e in await w.store.events(game_id, dealt.record.state.last_seq, 100)
        ]

    run(body)


def test_a_seat_whose_clock_ran_out_is_played_by_its_bot_once_due():
    async def body(w: World) -> None:
        dealt = await w.lobby.deal(
            [("ann", None), ("bob", None)], starting_seat=0, clock=BankClock(initial_seconds=60)
        )
        game_id = dealt.record.id
        assert (await w.games.fire_due(game_id)).outcome == "moved_on"  # not due yet
        assert (await w.store.load(game_id)).version == dealt.record.version
        w.clock.now += 61
        fired = await w.games.fire_due(game_id)
        assert fired.outcome == "timeout"
        assert fired.late == pytest.approx(1.0)
        stored = await w.store.load(game_id)
        assert stored.version > dealt.record.version
        assert stored.state.clock.timeouts[0] == 1

    run(body)


def test_an_idle_table_is_cancelled_and_an_idle_game_abandoned_and_told():
    async def body(w: World) -> None:
        table = await w.lobby.create(ANONYMOUS, [SeatRequest(name="Ann"), SeatRequest(open=True)])
        game = await w.lobby.deal([("ann", None), ("bob", None)])
        w.clock.now += 3600 + 1
        assert (await w.games.fire_due(table.record.id)).outcome == "cancelled"
        assert (await w.games.fire_due(game.record.id)).outcome == "abandoned"
        assert (await w.store.load(game.record.id)).status == "abandoned"
        assert [(g, status) for g, status, _ in w.told.seen][-2:] == [
            (table.record.id, "cancelled"),
            (game.record.id, "abandoned"),
        ]

    run(body, idle_ttl=3600)
