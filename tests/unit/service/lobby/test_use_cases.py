"""The use cases (`service.games.use_cases.GameService`, `service.lobby.use_cases.Lobby`) on in-memory adapters
(the embedded store, an embedded relay queue), a fake clock and fake randomness, no I/O: the
lobby's rules and authorization, an action's refusals that change nothing, a deadline
fired, and what the relay hands its reactions. Milliseconds each."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from domain.game.errors import RuleError
from domain.game.model import BankClock, Bid, Draw
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.core.callers import ANONYMOUS, Caller
from service.core.errors import ServiceError
from service.core.model import Seat, host_index
from service.core.settings import GameSettings, QuotaSettings, Settings
from service.games.bot_work import BotWork
from service.games.commands import (
    AbortGame,
    Act,
    CancelTable,
    CreateTable,
    JoinSeat,
    LeaveSeat,
    ReissueToken,
    SeatRequest,
    StartTable,
)
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.reactions.relay import GAME_ENDED, Relay

T0 = 1_800_000_000.0
PLATFORM = Caller(kind="platform")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class Told:
    """A reaction listed for every change that starts or ends a game: records it."""

    name = "told"
    durable = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, list[str]]] = []

    async def react(self, change) -> None:
        self.seen.append((change.new.id, change.new.status, list(change.types)))


class World:
    def __init__(self, settings: Settings | None = None) -> None:
        self.clock = Clock()
        counter = itertools.count(1)
        self.store = MemoryGameStore(clock=self.clock)
        self.told = Told()
        table = {"game_started": [self.told], GAME_ENDED: [self.told]}
        self.relay = Relay(self.store, MemoryQueue("relay"), table, clock=self.clock)
        self.games = GameService(
            self.store,
            settings or Settings(),
            relay=self.relay,
            clock=self.clock,
            random_hex=lambda n: f"{next(counter):0{2 * n}x}",
        )
        self.lobby = Lobby(self.games)


def run(body: Callable[[World], Awaitable[None]], settings: Settings | None = None) -> None:
    asyncio.run(body(World(settings)))


async def refused(code: str, call: Awaitable[object]) -> None:
    with pytest.raises(ServiceError) as caught:
        await call
    assert caught.value.code == code


def test_a_table_starts_when_its_last_seat_is_taken_and_the_start_is_relayed_once():
    async def body(w: World) -> None:
        made = await w.lobby.create(
            CreateTable(caller=ANONYMOUS, seats=[SeatRequest(name="Ann"), SeatRequest(open=True)])
        )
        assert made.record.status == "open"
        assert [seat for seat, _ in made.tokens] == [0]
        assert made.host_token is not None
        assert w.told.seen == []  # an open table tells nobody
        joined = await w.lobby.join(JoinSeat(caller=ANONYMOUS, game_id=made.record.id, name="Bob"))
        assert (joined.seat, joined.record.status) == (1, "active")
        assert [p.name for p in joined.record.state.players] == ["Ann", "Bob"]
        kinds = [type(e).__struct_config__.tag for e in _decoded(joined)]
        assert w.told.seen == [(made.record.id, "active", kinds)]
        assert "game_started" in w.told.seen[0][2]
        await refused(
            "game_not_open",
            w.lobby.join(JoinSeat(caller=ANONYMOUS, game_id=made.record.id, name="Cy")),
        )
        assert (await w.store.load(made.record.id)).version == joined.record.version

    run(body)


def _decoded(joined) -> list:
    import msgspec

    from domain.game.model import AnyEvent

    return [msgspec.json.decode(e.data, type=AnyEvent) for e in joined.events]


def test_a_private_table_needs_its_invite():
    async def body(w: World) -> None:
        made = await w.lobby.create(
            CreateTable(
                caller=ANONYMOUS,
                seats=[SeatRequest(name="Ann"), SeatRequest(open=True)],
                private=True,
            )
        )
        assert made.invite_code
        await refused(
            "invite_required",
            w.lobby.join(JoinSeat(caller=ANONYMOUS, game_id=made.record.id, name="Bob")),
        )
        await refused(
            "invite_required",
            w.lobby.join(
                JoinSeat(
                    caller=ANONYMOUS, game_id=made.record.id, name="Bob", invite="not-the-code"
                )
            ),
        )
        assert (await w.store.load(made.record.id)).status == "open"
        joined = await w.lobby.join(
            JoinSeat(caller=ANONYMOUS, game_id=made.record.id, name="Bob", invite=made.invite_code)
        )
        assert joined.record.status == "active"

    run(body)


def test_only_the_host_cancels_a_table():
    async def body(w: World) -> None:
        made = await w.lobby.create(
            CreateTable(caller=ANONYMOUS, seats=[SeatRequest(name="Ann"), SeatRequest(open=True)])
        )
        [(_, seat_token)] = made.tokens
        game_id = made.record.id
        await refused(
            "unauthorized", w.lobby.cancel(CancelTable(caller=ANONYMOUS, game_id=game_id))
        )
        await refused(
            "not_host",
            w.lobby.cancel(CancelTable(caller=Caller(seat_token=seat_token), game_id=game_id)),
        )
        assert (await w.store.load(game_id)).status == "open"
        cancelled = await w.lobby.cancel(
            CancelTable(caller=Caller(seat_token=made.host_token), game_id=game_id)
        )
        assert cancelled.status == "cancelled"
        assert w.told.seen == [(game_id, "cancelled", [])]

    run(body)


def test_an_action_needs_a_seat_of_this_game():
    async def body(w: World) -> None:
        one = await w.lobby.deal([("ann", None), ("bob", None)])
        other = await w.lobby.deal([("cy", None), ("dee", None)])
        game_id = one.record.id
        await refused(
            "unauthorized", w.games.act(Act(game_id=game_id, caller=ANONYMOUS, action=Draw()))
        )
        [(_, foreign), *_] = other.tokens
        await refused(
            "forbidden",
            w.games.act(Act(game_id=game_id, caller=Caller(seat_token=foreign), action=Draw())),
        )
        await refused(
            "unauthorized",
            w.games.act(Act(game_id=game_id, caller=Caller(seat_token="x.0.y"), action=Draw())),
        )
        await refused(
            "game_not_found", w.games.act(Act(game_id="f" * 20, caller=PLATFORM, action=Draw()))
        )
        assert (await w.store.load(game_id)).version == 0

    run(body)


def test_a_refused_action_changes_nothing():
    async def body(w: World) -> None:
        dealt = await w.lobby.deal([("ann", None), ("bob", None)], starting_seat=0)
        game_id = dealt.record.id
        tokens = dict(dealt.tokens)
        seat0 = Caller(seat_token=tokens[0])
        await refused(
            "version_mismatch",
            w.games.act(Act(game_id=game_id, caller=seat0, action=Draw(), expected_version=5)),
        )
        with pytest.raises(RuleError):
            await w.games.act(
                Act(game_id=game_id, caller=seat0, action=Bid(amount=1))
            )  # no auction now
        with pytest.raises(RuleError):
            await w.games.act(
                Act(game_id=game_id, caller=Caller(seat_token=tokens[1]), action=Draw())
            )  # not its turn
        stored = await w.store.load(game_id)
        assert stored.version == 0
        assert len(await w.store.events(game_id, 0, 100)) == dealt.record.state.last_seq
        acted = await w.games.act(
            Act(game_id=game_id, caller=seat0, action=Draw(), expected_version=0)
        )
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
        table = await w.lobby.create(
            CreateTable(caller=ANONYMOUS, seats=[SeatRequest(name="Ann"), SeatRequest(open=True)])
        )
        game = await w.lobby.deal([("ann", None), ("bob", None)])
        w.clock.now += 3600 + 1
        assert (await w.games.fire_due(table.record.id)).outcome == "cancelled"
        assert (await w.games.fire_due(game.record.id)).outcome == "abandoned"
        assert (await w.store.load(game.record.id)).status == "abandoned"
        assert [(g, status) for g, status, _ in w.told.seen][-2:] == [
            (table.record.id, "cancelled"),
            (game.record.id, "abandoned"),
        ]

    run(body, Settings(games=GameSettings(idle_ttl=3600)))


def _table(w: World, *seats: SeatRequest, caller: Caller = ANONYMOUS, **options: object):
    return w.lobby.create(CreateTable(caller=caller, seats=seats, **options))


def test_one_key_from_two_anonymous_clients_makes_two_tables_and_hands_neither_the_others_tokens():
    """Anonymous clients share no Idempotency-Keys: the same key and body from another
    address is another request (its own table and tokens); from the same address, a copy."""

    async def body(w: World) -> None:
        seats = (SeatRequest(name="Ann"), SeatRequest(open=True))
        mine = await _table(w, *seats, idempotency_key="k-1", origin="198.51.100.7")
        theirs = await _table(w, *seats, idempotency_key="k-1", origin="203.0.113.9")
        assert not theirs.replayed
        assert theirs.record.id != mine.record.id
        assert theirs.host_token != mine.host_token
        assert dict(theirs.tokens)[0] != dict(mine.tokens)[0]
        again = await _table(w, *seats, idempotency_key="k-1", origin="198.51.100.7")
        assert again.replayed
        assert (again.record.id, again.host_token) == (mine.record.id, mine.host_token)

    run(body)


def test_a_seat_left_is_open_again_and_only_its_holder_leaves_it():
    async def body(w: World) -> None:
        made = await _table(
            w, SeatRequest(name="Ann"), SeatRequest(open=True), SeatRequest(open=True)
        )
        game_id = made.record.id
        bob = await w.lobby.join(JoinSeat(caller=ANONYMOUS, game_id=game_id, name="Bob"))
        ann = Caller(seat_token=made.tokens[0][1])
        leave = LeaveSeat(caller=ann, game_id=game_id, seat=bob.seat)
        await refused("not_your_seat", w.lobby.leave(leave))
        await refused(
            "unauthorized", w.lobby.leave(LeaveSeat(caller=ANONYMOUS, game_id=game_id, seat=1))
        )
        await refused(
            "seat_not_found", w.lobby.leave(LeaveSeat(caller=ann, game_id=game_id, seat=7))
        )
        assert (await w.store.load(game_id)).version == bob.record.version  # nothing changed
        left = await w.lobby.leave(
            LeaveSeat(caller=Caller(seat_token=bob.token), game_id=game_id, seat=bob.seat)
        )
        assert left.table.seats[bob.seat] == Seat(open=True)
        assert left.token_hashes[bob.seat] is None
        assert left.version == bob.record.version + 1
        # the old token is worth nothing now (a bad credential: 401); the seat can be taken again
        await refused(
            "unauthorized",
            w.lobby.leave(LeaveSeat(caller=Caller(seat_token=bob.token), game_id=game_id, seat=1)),
        )
        again = await w.lobby.join(JoinSeat(caller=ANONYMOUS, game_id=game_id, name="Cy", seat=1))
        assert again.seat == 1

    run(body)


def test_a_reissued_token_replaces_the_old_one_at_once():
    async def body(w: World) -> None:
        dealt = await w.lobby.deal([("ann", None), ("bob", None)], starting_seat=0)
        game_id = dealt.record.id
        old = Caller(seat_token=dict(dealt.tokens)[0])
        await refused(
            "not_your_seat",
            w.lobby.reissue(ReissueToken(caller=old, game_id=game_id, seat=1)),
        )
        record, token = await w.lobby.reissue(ReissueToken(caller=old, game_id=game_id, seat=0))
        assert token != old.seat_token
        assert token.startswith(f"{game_id}.0.")
        assert record.version == dealt.record.version  # a token is no move of the game
        assert record.stamp > dealt.record.stamp  # but a save all the same
        await refused("unauthorized", w.games.act(Act(caller=old, game_id=game_id, action=Draw())))
        acted = await w.games.act(
            Act(caller=Caller(seat_token=token), game_id=game_id, action=Draw())
        )
        assert acted.seat == 0
        # the platform may reissue any seat's token, a stranger none
        _, platform_made = await w.lobby.reissue(
            ReissueToken(caller=PLATFORM, game_id=game_id, seat=1)
        )
        assert platform_made.startswith(f"{game_id}.1.")
        await refused(
            "unauthorized", w.lobby.reissue(ReissueToken(caller=ANONYMOUS, game_id=game_id, seat=1))
        )

    run(body)


@pytest.mark.parametrize(("fill", "players"), [("bots", 3), ("drop", 2)])
def test_the_host_starts_early_and_empty_seats_become_bots_or_go(fill: str, players: int):
    async def body(w: World) -> None:
        made = await _table(
            w, SeatRequest(name="Ann"), SeatRequest(open=True), SeatRequest(open=True), fill=fill
        )
        game_id = made.record.id
        bob = await w.lobby.join(JoinSeat(caller=ANONYMOUS, game_id=game_id, name="Bob"))
        await refused(
            "not_host",
            w.lobby.start(StartTable(caller=Caller(seat_token=bob.token), game_id=game_id)),
        )
        await refused("unauthorized", w.lobby.start(StartTable(caller=ANONYMOUS, game_id=game_id)))
        assert (await w.store.load(game_id)).status == "open"
        record, events = await w.lobby.start(
            StartTable(caller=Caller(seat_token=made.host_token), game_id=game_id)
        )
        assert record.status == "active"
        assert [p.name for p in record.state.players][:2] == ["Ann", "Bob"]
        assert len(record.state.players) == players
        assert [p.bot for p in record.state.players][2:] == ["basic"] * (players - 2)
        assert events
        assert w.told.seen[-1][:2] == (game_id, "active")
        await refused("game_not_open", w.lobby.start(StartTable(caller=PLATFORM, game_id=game_id)))

    run(body)


def test_a_table_of_bots_alone_cannot_be_started():
    async def body(w: World) -> None:
        made = await _table(w, SeatRequest(bot="basic"), SeatRequest(open=True), caller=PLATFORM)
        await refused(
            "no_players", w.lobby.start(StartTable(caller=PLATFORM, game_id=made.record.id))
        )
        assert (await w.store.load(made.record.id)).status == "open"

    run(body)


class WhereBotsMove(BotWork):
    """Bot work on a thread pool standing for the process pool, noting how each step was
    waited for (awaited or blocking) and from which thread."""

    def __init__(self) -> None:
        super().__init__(ThreadPoolExecutor(1, thread_name_prefix="bot-pool"))
        self.waited: list[tuple[str, str]] = []

    async def step(self, search, step, *args):  # type: ignore[no-untyped-def]
        if search:
            self.waited.append(("awaited", threading.current_thread().name))
        return await super().step(search, step, *args)

    def blocking_step(self, search, step, *args):  # type: ignore[no-untyped-def]
        if search:
            self.waited.append(("blocking", threading.current_thread().name))
        return super().blocking_step(search, step, *args)


def test_a_created_table_of_searching_bots_is_awaited_from_the_pool_on_the_loop():
    """The create deals on the event loop and awaits the bots' moves from the pool: no
    worker thread of the serving process waits for them (one competed with the loop for
    the interpreter lock in a storm of bot tables); a start, computed in a worker thread,
    waits there. The same game either way: dealt from the seed, then the bots' moves."""

    async def body(w: World) -> None:
        w.games.bots = bots = WhereBotsMove()
        experts = [SeatRequest(name=f"E{i}", bot="expert") for i in range(3)]
        made = await w.lobby.create(CreateTable(caller=PLATFORM, seats=experts))
        assert bots.waited == [("awaited", "MainThread")]
        assert made.record.status == "finished"  # played to its end in that one step
        logged = await w.store.events(made.record.id, 0, 10_000)
        assert [e.seq for e in logged] == list(range(1, made.record.state.last_seq + 1))
        assert logged[-1].data.startswith(b'{"type":"game_finished"')
        # the empty seat filled by an expert when the host starts: a change computed in a
        # worker thread, which waits there for the pool
        table = await _table(
            w, SeatRequest(name="Ann"), SeatRequest(open=True), fill="bots", fill_bot="expert"
        )
        started, _ = await w.lobby.start(
            StartTable(caller=Caller(seat_token=table.host_token), game_id=table.record.id)
        )
        assert started.status == "active"
        assert [p.bot for p in started.state.players] == [None, "expert"]
        assert len(bots.waited) == 2
        assert bots.waited[1][0] == "blocking"
        assert bots.waited[1][1] != "MainThread"
        bots._pool.shutdown()

    run(body)


def test_the_host_aborts_a_live_game_once_and_it_is_told():
    async def body(w: World) -> None:
        ann = Caller(kind="player", player_id="p-ann")
        made = await _table(
            w, SeatRequest(name="Ann", player_id="p-ann"), SeatRequest(open=True), caller=ann
        )
        game_id = made.record.id
        await refused("game_not_started", w.lobby.abort(AbortGame(caller=ann, game_id=game_id)))
        bob = await w.lobby.join(JoinSeat(caller=ANONYMOUS, game_id=game_id, name="Bob"))
        assert bob.record.status == "active"
        await refused(
            "not_host",
            w.lobby.abort(AbortGame(caller=Caller(seat_token=bob.token), game_id=game_id)),
        )
        await refused(
            "not_host",
            w.lobby.abort(
                AbortGame(caller=Caller(kind="player", player_id="p-eve"), game_id=game_id)
            ),
        )
        aborted = await w.lobby.abort(AbortGame(caller=ann, game_id=game_id))
        assert aborted.status == "aborted"
        assert w.told.seen[-1][:2] == (game_id, "aborted")
        await refused("game_over", w.lobby.abort(AbortGame(caller=PLATFORM, game_id=game_id)))
        await refused(
            "game_over",
            w.games.act(Act(caller=Caller(seat_token=bob.token), game_id=game_id, action=Draw())),
        )

    run(body)


def test_listings_show_public_open_tables_and_a_players_games_to_that_player():
    async def body(w: World) -> None:
        ann = Caller(kind="player", player_id="p-ann")
        public = [
            await _table(w, SeatRequest(name="Ann"), SeatRequest(open=True)) for _ in range(3)
        ]
        w.clock.now += 1
        private = await _table(
            w,
            SeatRequest(name="Ann", player_id="p-ann"),
            SeatRequest(open=True),
            caller=ann,
            private=True,
        )
        first = await w.lobby.list_open(None, 2)
        assert [g.id for g in first.games] == [public[2].record.id, public[1].record.id]
        rest = await w.lobby.list_open(first.next_cursor, 2)
        assert [g.id for g in rest.games] == [public[0].record.id]
        assert rest.next_cursor is None
        await refused("invalid_cursor", w.lobby.list_open("not a cursor", 2))
        mine = await w.lobby.list_player(ann, "p-ann", None, 10)
        assert [g.id for g in mine.games] == [private.record.id]
        # identities verified: only that player or the platform lists them
        w.lobby.identities_open = False
        await refused("player_id_not_yours", w.lobby.list_player(ANONYMOUS, "p-ann", None, 10))
        assert (await w.lobby.list_player(PLATFORM, "p-ann", None, 10)).games == mine.games

    run(body)


def test_the_event_log_of_a_game_and_nothing_for_a_game_unknown():
    async def body(w: World) -> None:
        dealt = await w.lobby.deal([("ann", None), ("bob", None)], starting_seat=0)
        game_id = dealt.record.id
        acted = await w.games.act(
            Act(caller=Caller(seat_token=dict(dealt.tokens)[0]), game_id=game_id, action=Draw())
        )
        log = await w.games.events(game_id, 0, 1000)
        assert [e.seq for e in log] == list(range(1, acted.record.state.last_seq + 1))
        tail = await w.games.events(game_id, dealt.record.state.last_seq, 1000)
        assert [e.seq for e in tail] == [e.seq for e in acted.events]
        await refused("game_not_found", w.games.events("0" * 20, 0, 10))
        await refused("game_not_found", w.games.events("../etc", 0, 10))

    run(body)


def test_a_caller_hosts_at_most_max_open_tables_and_a_slot_frees_when_one_leaves():
    """Past TEN_MAX_OPEN_TABLES a player's (or an address's) create is refused,
    too_many_open_tables with Retry-After the seconds until their oldest table would expire
    idle, and nothing is created; another caller, the platform, a game dealt at once and a
    copy of a keyed create are not refused; a table started or cancelled frees its slot."""

    async def body(w: World) -> None:
        ann = Caller(kind="player", player_id="p-ann")
        seats = (SeatRequest(name="Ann"), SeatRequest(open=True))
        first = await _table(w, *seats, caller=ann)
        w.clock.now += 100
        keyed = await _table(w, *seats, caller=ann, private=True, idempotency_key="k-1")
        with pytest.raises(ServiceError) as caught:
            await _table(w, *seats, caller=ann)
        assert caught.value.code == "too_many_open_tables"
        assert caught.value.retry_after == 1000 - 100  # the first table's idle expiry
        mine = await w.store.list_games(host_index("player:p-ann"), None, 10)
        assert {g.id for g in mine} == {first.record.id, keyed.record.id}  # no third
        again = await _table(w, *seats, caller=ann, private=True, idempotency_key="k-1")
        assert again.replayed
        assert again.record.id == keyed.record.id
        dealt = await _table(w, SeatRequest(name="Ann"), SeatRequest(bot="basic"), caller=ann)
        assert dealt.record.status == "active"  # not an open table: not counted
        bob = Caller(kind="player", player_id="p-bob")
        assert (await _table(w, *seats, caller=bob)).record.status == "open"
        for _ in range(3):
            await _table(w, *seats, caller=PLATFORM)  # the platform: no quota
        await w.lobby.cancel(CancelTable(caller=ann, game_id=first.record.id))
        assert (await _table(w, *seats, caller=ann)).record.status == "open"
        await refused("too_many_open_tables", _table(w, *seats, caller=ann))
        await w.lobby.start(StartTable(caller=ann, game_id=keyed.record.id))
        assert (await _table(w, *seats, caller=ann)).record.status == "open"

    run(
        body,
        Settings(quotas=QuotaSettings(max_open_tables=2), games=GameSettings(idle_ttl=1000)),
    )


def test_anonymous_hosts_are_counted_by_address_and_tools_without_one_are_not():
    async def body(w: World) -> None:
        seats = (SeatRequest(name="Ann"), SeatRequest(open=True))
        await _table(w, *seats, origin="10.0.0.1")
        await refused("too_many_open_tables", _table(w, *seats, origin="10.0.0.1"))
        await _table(w, *seats, origin="10.0.0.2")
        made = [await _table(w, *seats) for _ in range(3)]  # in process: no address
        assert all(m.record.host is None for m in made)
        listed = await w.lobby.list_open(None, 10)
        assert len(listed.games) == 5
        assert all("10.0.0" not in (g.host or "") for g in listed.games)  # a digest, never it

    run(body, Settings(quotas=QuotaSettings(max_open_tables=1)))


@pytest.mark.parametrize("limit", [0, 3])
def test_max_open_tables_zero_is_no_quota(limit: int):
    async def body(w: World) -> None:
        ann = Caller(kind="player", player_id="p-ann")
        seats = (SeatRequest(name="Ann"), SeatRequest(open=True))
        made = [await _table(w, *seats, caller=ann) for _ in range(limit or 5)]
        assert len({m.record.id for m in made}) == len(made)
        if limit:
            await refused("too_many_open_tables", _table(w, *seats, caller=ann))
        else:
            await _table(w, *seats, caller=ann)  # a sixth: no quota

    run(body, Settings(quotas=QuotaSettings(max_open_tables=limit)))


# ---------------------------------------------------------------- scheduled tables


def _scheduled(w: World, game_id: str, at: float, seats=None):
    seats = seats or [
        SeatRequest(name="Ann", player_id="ann"),
        SeatRequest(name="Bob", player_id="bob"),
        SeatRequest(bot="basic"),
    ]
    return w.lobby.creation.scheduled(
        CreateTable(caller=PLATFORM, seats=seats), game_id, starts_at=at
    )


def test_a_scheduled_table_waits_for_its_time_though_every_seat_is_taken():
    async def body(w: World) -> None:
        made = _scheduled(w, "a" * 20, T0 + 3600)
        stored = await w.lobby.creation.store_scheduled(made)
        assert stored.status == "open"
        assert stored.table.starts_at == T0 + 3600
        assert [seat for seat, _ in made.tokens] == [0, 1]
        assert w.told.seen == []
        # not listed among the open tables, but in each player's games
        assert (await w.lobby.list_open(None, 10)).games == []
        listed = await w.lobby.list_player(PLATFORM, "ann", None, 10)
        assert [g.id for g in listed.games] == [stored.id]
        # its idle expiry runs from its time, not from its creation
        assert stored.due == T0 + 3600 + w.games.settings.games.idle_ttl

    run(body)


def test_a_seat_holder_who_acts_before_the_start_is_told_the_game_has_not_started():
    async def body(w: World) -> None:
        made = _scheduled(w, "b" * 20, T0 + 60)
        await w.lobby.creation.store_scheduled(made)
        token = made.tokens[0][1]
        holder = Caller(kind="anonymous", seat_token=token)
        await refused(
            "game_not_started",
            w.games.act(Act(caller=holder, game_id=made.record.id, action=Draw())),
        )
        await refused(
            "seat_unavailable",
            w.lobby.leave(LeaveSeat(caller=holder, game_id=made.record.id, seat=0)),
        )
        assert (await w.store.load(made.record.id)).version == 0

    run(body)


def test_a_scheduled_start_deals_the_game_once_and_relays_its_start():
    async def body(w: World) -> None:
        made = _scheduled(w, "c" * 20, T0 + 60)
        await w.lobby.creation.store_scheduled(made)
        w.clock.now = T0 + 60
        first, again = await asyncio.gather(
            w.lobby.start_scheduled(made.record.id), w.lobby.start_scheduled(made.record.id)
        )
        assert first.status == again.status == "active"
        assert first.version == again.version
        assert list(first.player_ids) == ["ann", "bob", None]
        assert next(s for s in w.told.seen if s[0] == made.record.id)[1] == "active"
        assert len([s for s in w.told.seen if s[0] == made.record.id]) == 1
        token = made.tokens[0][1]
        seat = await w.games.seat_of(first, token)
        assert seat == 0

    run(body)


def test_a_scheduled_table_stored_twice_is_made_once():
    async def body(w: World) -> None:
        made = _scheduled(w, "d" * 20, T0 + 60)
        assert await w.lobby.creation.store_scheduled(made) is not None
        assert await w.lobby.creation.store_scheduled(_scheduled(w, "d" * 20, T0 + 60)) is None
        stored = await w.store.load("d" * 20)
        assert stored.token_hashes == made.record.token_hashes

    run(body)


def test_a_scheduled_table_with_a_seat_left_open_or_rules_it_cannot_deal_is_refused():
    async def body(w: World) -> None:
        with pytest.raises(ServiceError) as caught:
            _scheduled(w, "e" * 20, T0, [SeatRequest(name="Ann"), SeatRequest(open=True)])
        assert caught.value.code == "invalid_table"
        with pytest.raises((ServiceError, RuleError)):
            _scheduled(w, "e" * 20, T0, [SeatRequest(name=f"P{i}") for i in range(6)])
        assert await w.store.load("e" * 20) is None

    run(body)


def test_a_start_dealt_ahead_starts_its_clock_at_the_time_and_never_revives_a_table_changed():
    async def body(w: World) -> None:
        from domain.game.model import DeadlineClock

        seats = [SeatRequest(name="Ann", player_id="ann"), SeatRequest(name="Bob", player_id="bob")]
        create = CreateTable(caller=PLATFORM, seats=seats, clock=DeadlineClock(hours=24))
        made = w.lobby.creation.scheduled(create, "f" * 20, starts_at=T0 + 60)
        stored = await w.lobby.creation.store_scheduled(made)
        ready = await asyncio.to_thread(w.lobby.ready_to_start, stored)
        w.clock.now = T0 + 60
        started = await w.lobby.start_scheduled(stored.id, ready)
        assert started.status == "active"
        assert started.state.clock.since == T0 + 60
        assert started.state.players == ready.moved[0].players  # the deal made ahead
        other = await w.lobby.creation.store_scheduled(_scheduled(w, "0" * 20, T0 + 60))
        early = await asyncio.to_thread(w.lobby.ready_to_start, other)
        await w.lobby.cancel(CancelTable(caller=PLATFORM, game_id=other.id))
        assert (await w.lobby.start_scheduled(other.id, early)).status == "cancelled"

    run(body)
