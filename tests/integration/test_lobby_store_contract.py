"""The lobby's part of the GameStore contract, run against both adapters (and, through
tests/scaleout/test_cluster_store_contract.py, on a Redis Cluster): games created open (no
engine state yet) and listings (`list_games`, kept in step by create and save).

On Redis each test has its own listing and live keys (other tests share
the database, and may list open games at the same time), deleted afterwards.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from msgspec.structs import replace

from domain.game.engine import new_game
from infra.observability.instrumented_store import InstrumentedStore
from service.core.errors import ServiceError
from service.core.model import OPEN_INDEX, GameRecord, Seat, Table, host_index, player_index
from service.core.ports import GameExists, IdempotentResponse
from service.core.quotas import GRACE, Quota
from service.core.settings import QuotaSettings, Settings
from service.games.use_cases import GameService, encode_events
from service.lobby.use_cases import Lobby as LobbyUseCase
from tests.support.records import NOW, PLAYERS, TTL, advance, new_record


class Lobby:
    """A test's store settings and key names: `lobby.run(body)` as `backend.run(body)`."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.redis = backend.kind != "memory"
        tag = backend.new_id()
        self.index_prefix = f"ten:test-index:{tag}:"
        self.kwargs: dict[str, Any] = {}
        if self.redis:
            self.kwargs = {
                "index_prefix": self.index_prefix,
                "live_key": f"ten:test-live:{tag}",
                "live_recheck": 0,
            }
        self.indexes = {OPEN_INDEX}

    def player(self) -> str:
        pid = f"player-{self.backend.new_id()}"
        self.indexes.add(player_index(pid))
        return pid

    def host(self) -> str:
        """A host of open tables (`GameRecord.host`), its listing deleted after the test."""
        host = f"player:host-{self.backend.new_id()}"
        self.indexes.add(host_index(host))
        return host

    def index_key(self, index: str) -> str:
        return f"{self.index_prefix}{{{index}}}"

    def run(self, body) -> None:
        if self.redis:  # deleted after the test, with its games' keys
            self.backend.other_keys += [self.index_key(index) for index in self.indexes]
            self.backend.other_keys += [self.kwargs["live_key"]]
        self.backend.run(body, **self.kwargs)


def table(game_id: str, at: float, seats=(None, None, None, None), **options) -> GameRecord:
    """A game created open: a seat reserved for each player id given, the others open."""
    return GameRecord(
        id=game_id,
        state=None,
        token_hashes=(None,) * len(seats),
        created_at=at,
        updated_at=at,
        player_ids=tuple(seats),
        verified=(False,) * len(seats),
        table=Table(seats=tuple(Seat(player_id=p, open=p is None) for p in seats), **options),
        host_id=seats[0],
    )


def joined(record: GameRecord, seat: int, player_id: str) -> GameRecord:
    """The table once `player_id` took an open seat (one version more)."""
    assert record.table is not None
    seats = list(record.table.seats)
    seats[seat] = Seat(name=player_id, player_id=player_id, verified=True, open=True)
    ids = list(record.player_ids)
    ids[seat] = player_id
    changed = replace(record.table, seats=tuple(seats), version=record.table.version + 1)
    return replace(record, table=changed, player_ids=tuple(ids))


def started(record: GameRecord) -> tuple[GameRecord, list]:
    """The table's game started (every seat a player), and its first events."""
    assert record.table is not None
    state, events = new_game(PLAYERS, f"seed-{record.id}", version=record.version + 1)
    return replace(record, state=state), encode_events(events)


def cancelled(record: GameRecord) -> GameRecord:
    assert record.table is not None
    version = record.table.version + 1
    return replace(record, table=replace(record.table, cancelled=True, version=version))


def ids(records: list[GameRecord]) -> list[str]:
    return [record.id for record in records]


async def page_through(store, index: str, limit: int) -> list[str]:
    """Every game of a listing, page after page with the keyset cursor."""
    seen: list[str] = []
    before = None
    for _ in range(100):
        page = await store.list_games(index, before, limit)
        assert len(page) <= limit
        seen += ids(page)
        if len(page) < limit:
            return seen
        before = (page[-1].created_at, page[-1].id)
    raise AssertionError("the listing never ended")


# ------------------------------------------------------------------ listings


def test_open_games_are_listed_newest_first_paged_by_created_at_then_id(backend):
    """Equal created_at are ordered by id (newest first: the greater id first), and a page
    starts strictly after its cursor, whether the cursor's game is still listed or not."""
    lobby = Lobby(backend)
    times = [NOW + 5, NOW + 1, NOW + 3, NOW + 3, NOW + 3, NOW + 2, NOW + 3, NOW + 0.5]
    records = [table(backend.new_id(), at) for at in times]
    newest_first = sorted(records, key=lambda r: (r.created_at, r.id), reverse=True)
    expected = ids(newest_first)
    private = table(backend.new_id(), NOW + 4, invite_hash="0" * 64)  # never listed

    async def body(store):
        for record in [*records, private]:
            await store.create(record, [], TTL)
        assert ids(await store.list_games(OPEN_INDEX, None, 100)) == expected
        for limit in (1, 2, 3, 7, 8):
            assert await page_through(store, OPEN_INDEX, limit) == expected
        tie = newest_first[2]  # a game of the four at NOW + 3
        after_tie = await store.list_games(OPEN_INDEX, (tie.created_at, tie.id), 100)
        assert ids(after_tie) == expected[3:]
        between = (NOW + 3, tie.id[:-1] + "!")  # no such game: ids after it, still ordered
        assert ids(await store.list_games(OPEN_INDEX, between, 100)) == [
            r.id for r in newest_first if (r.created_at, r.id) < between
        ]
        assert ids(await store.list_games(OPEN_INDEX, (NOW + 3, ""), 2)) == expected[5:7]
        assert await store.list_games(OPEN_INDEX, (NOW, "0"), 10) == []
        assert await store.list_games(OPEN_INDEX, None, 0) == []
        assert await store.list_games(player_index("nobody"), None, 10) == []

    lobby.run(body)


def test_saves_move_a_game_between_listings_as_its_indexes_change(backend):
    """Reserved seat, join, start, finish: each save with `previous` (the game as read)
    leaves the listings the game left and joins the new ones."""
    lobby = Lobby(backend)
    host, guest = lobby.player(), lobby.player()
    other = table(backend.new_id(), NOW + 10)
    waiting = table(backend.new_id(), NOW, seats=(host, None, None, None))
    with_guest = joined(waiting, 1, guest)
    playing, start_events = started(with_guest)
    finished = replace(playing, state=replace(playing.state, phase="finished"))

    async def listed(store, index):
        return ids(await store.list_games(index, None, 10))

    async def body(store):
        await store.create(other, [], TTL)
        await store.create(waiting, [], TTL)
        assert await listed(store, OPEN_INDEX) == [other.id, waiting.id]
        assert await listed(store, player_index(host)) == [waiting.id]
        assert await listed(store, player_index(guest)) == []
        await store.save(with_guest, 0, [], TTL, previous=waiting)
        assert await listed(store, player_index(guest)) == [waiting.id]
        assert await listed(store, OPEN_INDEX) == [other.id, waiting.id]
        await store.save(playing, with_guest.version, start_events, TTL, previous=with_guest)
        assert await listed(store, OPEN_INDEX) == [other.id]  # started: no longer joinable
        assert await listed(store, player_index(host)) == [waiting.id]  # live: still theirs
        assert await listed(store, player_index(guest)) == [waiting.id]
        await store.save(finished, playing.version, [], TTL, previous=playing)
        assert await listed(store, player_index(host)) == []
        assert await listed(store, player_index(guest)) == []
        assert await listed(store, OPEN_INDEX) == [other.id]

    lobby.run(body)
    if lobby.redis:  # the entries went with the saves, not only from the answers
        client = backend.client
        assert client.zscore(lobby.index_key(OPEN_INDEX), waiting.id) is None
        assert client.zscore(lobby.index_key(player_index(host)), waiting.id) is None
        assert client.zscore(lobby.index_key(OPEN_INDEX), other.id) == other.created_at


def test_a_save_without_previous_changes_no_listing_and_stale_entries_are_dropped(backend):
    """Without `previous` a save leaves every listing as it was: a game no longer in one is
    passed over (and its entry dropped) by `list_games`; one it joined is not listed."""
    lobby = Lobby(backend)
    guest = lobby.player()
    games = [table(backend.new_id(), NOW + i) for i in range(5)]
    leaving = games[2]
    playing, start_events = started(joined(leaving, 0, guest))

    async def body(store):
        for record in games:
            await store.create(record, [], TTL)
        await store.save(playing, leaving.version, start_events, TTL)
        assert await store.list_games(player_index(guest), None, 10) == []
        page = await store.list_games(OPEN_INDEX, None, 3)  # a page of 3 all the same
        assert ids(page) == [games[4].id, games[3].id, games[1].id]
        assert ids(await store.list_games(OPEN_INDEX, None, 10)) == [
            games[i].id for i in (4, 3, 1, 0)
        ]

    lobby.run(body)
    if lobby.redis:
        assert backend.client.zscore(lobby.index_key(OPEN_INDEX), leaving.id) is None
        assert backend.client.zcard(lobby.index_key(OPEN_INDEX)) == 4


def test_an_expired_game_is_dropped_from_its_listings(backend):
    lobby = Lobby(backend)
    host = lobby.player()
    short = table(backend.new_id(), NOW + 2, seats=(host, None))
    kept = [table(backend.new_id(), NOW + 1, seats=(host, None)), table(backend.new_id(), NOW)]

    async def body(store):
        await store.create(short, [], 1)
        for record in kept:
            await store.create(record, [], TTL)
        assert ids(await store.list_games(OPEN_INDEX, None, 2)) == [short.id, kept[0].id]
        await asyncio.sleep(1.2)
        assert ids(await store.list_games(OPEN_INDEX, None, 2)) == ids(kept)
        assert ids(await store.list_games(player_index(host), None, 2)) == [kept[0].id]

    lobby.run(body)
    if lobby.redis:
        client = backend.client
        assert client.zscore(lobby.index_key(OPEN_INDEX), short.id) is None
        assert client.zscore(lobby.index_key(player_index(host)), short.id) is None


def test_a_page_reads_past_many_stale_entries_to_fill_its_limit(backend):
    """A listing's entries left by games that changed unseen (saved without `previous`) do
    not shorten a page: reading goes on until `limit` games or the end."""
    lobby = Lobby(backend)
    games = [table(backend.new_id(), NOW + i) for i in range(60)]
    gone = games[5:55]  # the 50 newest but five

    async def body(store):
        for record in games:
            await store.create(record, [], TTL)
        for record in gone:
            await store.save(cancelled(record), record.version, [], TTL)
        still_open = [g.id for g in reversed(games[55:])] + [g.id for g in reversed(games[:5])]
        assert ids(await store.list_games(OPEN_INDEX, None, 8)) == still_open[:8]
        assert await page_through(store, OPEN_INDEX, 3) == still_open

    lobby.run(body)


def test_redis_saves_that_keep_the_listings_cost_no_other_round_trip(redis_backend):
    """Actions are benchmarked: a save whose listings do not change is the save script
    alone; only a save that changes them (or ends the game) sends the one pipeline more."""
    lobby = Lobby(redis_backend)
    host = lobby.player()
    waiting = table(redis_backend.new_id(), NOW, seats=(host, None, None, None))
    playing, start_events = started(waiting)
    r1, e1 = advance(playing, 1)
    r2, e2 = advance(r1, 2)

    async def body(store):
        pipelines = []
        pipeline = store._pipeline
        store._pipeline = lambda: pipelines.append(1) or pipeline()
        await store.create(waiting, [], TTL)
        assert len(pipelines) == 1  # the create's
        await store.save(playing, waiting.version, start_events, TTL, previous=waiting)
        assert len(pipelines) == 2  # left "open"
        await store.save(r1, playing.version, e1, TTL, previous=playing)
        await store.save(r2, r1.version, e2, TTL, previous=r1)
        assert len(pipelines) == 2  # two actions: the save script alone
        assert ids(await store.list_games(player_index(host), None, 5)) == [waiting.id]

    lobby.run(body)


# ------------------------------------------------------------------ games created open


def test_an_open_table_without_engine_state_is_stored_and_counted(backend):
    """A game created open has no state: create, load, save (a join, a cancel); it is live
    until cancelled."""
    lobby = Lobby(backend)
    waiting = table(backend.new_id(), NOW)
    one_in = joined(waiting, 0, lobby.player())
    gone = cancelled(one_in)

    async def body(store):
        assert await store.live_games() == 0
        await store.create(waiting, [], TTL)
        loaded = await store.load(waiting.id)
        assert loaded == waiting
        assert loaded.state is None
        assert loaded.status == "open"
        assert await store.live_games() == 1
        await store.save(one_in, 0, [], TTL, previous=waiting)
        assert await store.load(waiting.id) == one_in
        await store.save(gone, 1, [], TTL, previous=one_in)
        assert (await store.load(waiting.id)).status == "cancelled"
        assert await store.live_games() == 0
        assert await store.list_games(OPEN_INDEX, None, 10) == []

    lobby.run(body)


def test_an_aborted_game_is_stored_ended_and_no_longer_live(backend):
    lobby = Lobby(backend)
    waiting = table(backend.new_id(), NOW)
    playing, start_events = started(waiting)
    aborted = replace(playing, aborted=True)
    live, live_events = new_record(backend.new_id())

    async def body(store):
        await store.create(waiting, [], TTL)
        await store.create(live, live_events, TTL)
        await store.save(playing, waiting.version, start_events, TTL, previous=waiting)
        assert await store.live_games() == 2
        await store.save(aborted, playing.version, [], TTL, previous=playing)
        assert (await store.load(waiting.id)).status == "aborted"
        assert await store.live_games() == 1
        assert (await store.load(waiting.id)).ended

    lobby.run(body)


def test_the_instrumented_store_hands_lobby_calls_through(memory_backend):
    waiting = table(memory_backend.new_id(), NOW)
    outcome = IdempotentResponse(fingerprint="c1:create:x", seat=None, record=waiting, events=[])

    async def body(store):
        instrumented = InstrumentedStore(store, None)
        await instrumented.create(waiting, [], TTL)
        assert ids(await instrumented.list_games(OPEN_INDEX, None, 5)) == [waiting.id]
        other = replace(waiting, id=memory_backend.new_id())
        await instrumented.create(other, [], TTL, ("create:k", outcome))  # handed through
        assert await instrumented.idempotent_response(other.id, "create:k") == outcome
        with pytest.raises(GameExists) as taken:
            await instrumented.create(other, [], TTL, ("create:k", outcome))
        assert taken.value.remembered == outcome
        assert await instrumented.live_games() == 2

    memory_backend.run(body)


# ------------------------------------------------------------------ a host's open tables


def hosted(backend, host: str, at: float, **options) -> GameRecord:
    return replace(table(backend.new_id(), at, **options), host=host)


def quota(store, limit: int) -> Quota:
    """The lobby's quota of open tables (`service.lobby.creation.TableCreation.open_tables`) on this store."""
    return LobbyUseCase(
        GameService(store, Settings(quotas=QuotaSettings(max_open_tables=limit)))
    ).creation.open_tables


async def hold(store, record: GameRecord, limit: int) -> float | None:
    """Hold `record` in its host's quota of open tables: None, or the refusal's Retry-After."""
    try:
        await quota(store, limit).take(record.host, record.id, record.created_at)
    except ServiceError as error:
        if error.code != "too_many_open_tables":
            raise
        return error.retry_after
    return None


def test_a_hosts_open_tables_are_counted_up_to_the_limit_and_freed_as_they_leave(backend):
    """The quota of open tables counts a host's tables (public and private) up to the limit,
    then refuses with Retry-After (when the oldest would expire idle) and counts nothing;
    another host is unaffected; a table that started or was cancelled frees its slot, and so
    does an entry whose game was never created once GRACE has passed (one in flight counts)."""
    lobby = Lobby(backend)
    host, other = lobby.host(), lobby.host()
    backend.other_keys += [f"ten:quota:{{open-tables:{h}}}" for h in (host, other)]
    first = hosted(backend, host, NOW)
    second = hosted(backend, host, NOW + 1, invite_hash="0" * 64)  # private: counted too
    third = hosted(backend, host, NOW + 2)
    in_flight = hosted(backend, host, NOW + 3)  # held, its create not yet written
    idle = Settings().games.idle_ttl

    async def body(store):
        for record in (first, second, third):
            assert await hold(store, record, 3) is None
            await store.create(record, [], TTL)
        assert await hold(store, third, 3) is None  # counted already: a copy
        late = hosted(backend, host, NOW + 4)
        assert await hold(store, late, 3) == idle - 4  # the first's idle end
        assert await hold(store, hosted(backend, other, NOW + 4), 3) is None
        playing, events = started(first)
        await store.save(playing, first.version, events, TTL, previous=first)
        await store.save(cancelled(second), second.version, [], TTL, previous=second)
        assert await hold(store, in_flight, 3) is None  # two slots freed
        assert await hold(store, late, 3) is None
        assert await hold(store, hosted(backend, host, NOW + 5), 3) == idle - 3  # the third's
        # GRACE later than in_flight's hold, not late's: in_flight's lapsed, late's counts
        after = NOW + 3.5 + GRACE
        assert await hold(store, hosted(backend, host, after), 3) is None
        assert await hold(store, hosted(backend, host, after), 3) is not None

    lobby.run(body)


def test_concurrent_holds_of_one_host_never_overshoot_the_limit(backend):
    """Forty tables of one host held at once, limit 7: exactly seven are counted."""
    lobby = Lobby(backend)
    host = lobby.host()
    backend.other_keys += [f"ten:quota:{{open-tables:{host}}}"]
    records = [hosted(backend, host, NOW + i / 100) for i in range(40)]

    async def body(store):
        answers = await asyncio.gather(*(hold(store, r, 7) for r in records))
        assert sum(answer is None for answer in answers) == 7

    lobby.run(body)
