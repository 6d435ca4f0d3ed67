"""The tournaments' use case and director (`service.tournaments.use_cases`) on in-memory adapters (the
embedded game and tournament stores, embedded queues), a fake clock and fake randomness:
who may do what, the states, and bot tournaments played to their end by the director, each
step run as its worker would (`drain`), twice where a replica could."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

import msgspec
import pytest

from domain.bots.review import LuckAdjusted
from domain.tournaments.rules import Adjusted, place_points, standings, table_result
from infra.memory_store import MemoryGameStore
from infra.memory_tournaments import MemoryTournamentStore
from infra.queues import MemoryQueue
from service.core.callers import ANONYMOUS, Caller
from service.core.errors import ServiceError
from service.core.ranking import ranking
from service.core.settings import Settings
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.reactions.relay import GAME_ENDED, Relay
from service.reactions.webhook_delivery import WebhookOutbox
from service.reactions.webhook_payloads import WEBHOOK_PAYLOADS
from service.reactions.webhooks import Webhooks
from service.tournaments.director import LuckOf, TournamentReaction
from service.tournaments.records import (
    DEFAULT_CLOCK,
    GRACE,
    LEASE,
    MAX_AHEAD,
    MAX_ROUND_INTERVAL,
    REVIEW_WAIT,
    CreateTournament,
    current_standings,
    game_id,
    standings_out,
    tournament_messages,
)
from service.tournaments.use_cases import Tournaments

T0 = 1_800_000_000.0
PLATFORM = Caller(kind="platform")
ALICE = Caller(kind="player", player_id="alice")
BOB = Caller(kind="player", player_id="bob")


class World:
    def __init__(self, adjusted: LuckOf | None = None) -> None:
        self.now = T0
        clock = lambda: self.now  # noqa: E731
        counter = itertools.count(1)
        hexes = lambda n: f"{next(counter):0{2 * n}x}"  # noqa: E731
        self.store = MemoryGameStore(clock=clock)
        self.tournament_store = MemoryTournamentStore()
        self.queue = MemoryQueue("tournaments")
        self.told: list[str] = []
        reaction = TournamentReaction(
            lambda record: self.tournaments.director.record_result(record)  # noqa: PLW0108 - made below
        )
        relay = Relay(self.store, MemoryQueue("relay"), {GAME_ENDED: [reaction]}, clock=clock)
        self.games = GameService(self.store, Settings(), relay=relay, clock=clock, random_hex=hexes)
        self.lobby = Lobby(self.games)
        self.tournaments = Tournaments(
            self.tournament_store, self.queue, self.lobby.create, announce=self.announce,
            clock=clock, random_hex=hexes, adjusted=adjusted,
        )  # fmt: skip

    async def announce(self, messages) -> None:
        self.told.extend(m.id for m in messages)

    async def drain(self, twice: bool = False) -> int:
        """Run the director's jobs as a worker would, until none is left; the steps run."""
        steps = 0
        for _ in range(500):
            jobs = await self.queue.claim(self.now + 1000, 60.0, 10)
            if not jobs:
                return steps
            for job in jobs:
                if twice:  # two replicas on one job: every step is safe at once
                    await asyncio.gather(
                        *(self.tournaments.director.advance(job.id) for _ in range(2))
                    )
                else:
                    await self.tournaments.director.advance(job.id)
                await self.queue.done(job.id, job.token)
                steps += 1
        raise AssertionError("the director never settled")

    async def bots_only(self, **fields: object):
        options = {"name": "Bots", "table_size": 4, "places": 8, "rounds": 3, "bot_level": "random"}
        options.update(fields)
        record, _ = await self.tournaments.create(CreateTournament(caller=PLATFORM, **options))
        return record


def run(body: Callable[[World], Awaitable[None]]) -> None:
    asyncio.run(body(World()))


async def refused(code: str, call: Awaitable[object]) -> None:
    with pytest.raises(ServiceError) as caught:
        await call
    assert caught.value.code == code


def test_only_the_platform_or_a_player_creates_and_the_settings_are_checked():
    async def body(w: World) -> None:
        await refused(
            "authentication_required",
            w.tournaments.create(CreateTournament(caller=ANONYMOUS, name="x")),
        )
        for bad in ({"places": 3}, {"places": 65}, {"rounds": 0}, {"table_size": 6}):
            await refused(
                "invalid_tournament",
                w.tournaments.create(CreateTournament(caller=ALICE, name="x", **bad)),
            )
        await refused(
            "duplicate_player_id",
            w.tournaments.create(CreateTournament(caller=ALICE, name="x", invited=("a", "a"))),
        )
        record, replayed = await w.tournaments.create(CreateTournament(caller=ALICE, name="x"))
        assert (record.organiser, record.status, replayed) == ("player:alice", "registering", False)

    run(body)


def test_a_keyed_create_made_twice_is_one_tournament():
    async def body(w: World) -> None:
        ask = CreateTournament(caller=ALICE, name="Cup", idempotency_key="k1")
        first, replayed = await w.tournaments.create(ask)
        again, replayed_again = await w.tournaments.create(ask)
        assert (again, replayed, replayed_again) == (first, False, True)
        other = msgspec.structs.replace(ask, name="Other cup")
        await refused("idempotency_key_reused", w.tournaments.create(other))
        for changed in (
            {"standings_by": "luck_adjusted"},
            {"ranked_by": "margin"},
            {"ranked_by": "strength"},
        ):
            other = msgspec.structs.replace(ask, **changed)
            await refused("idempotency_key_reused", w.tournaments.create(other))
        by_bob = msgspec.structs.replace(ask, caller=BOB)  # another caller's keys: its own
        assert (await w.tournaments.create(by_bob))[0].id != first.id

    run(body)


def test_registration_invited_open_full_and_withdraw():
    async def body(w: World) -> None:
        invited, _ = await w.tournaments.create(
            CreateTournament(caller=PLATFORM, name="i", places=4, invited=("alice",))
        )
        await refused("not_invited", w.tournaments.register(BOB, invited.id, None))
        await refused("player_id_not_yours", w.tournaments.register(BOB, invited.id, "alice"))
        record, _ = await w.tournaments.register(ALICE, invited.id, None)
        again, _ = await w.tournaments.register(ALICE, invited.id, None)  # changes nothing
        assert record.registered == again.registered == ("alice",)
        assert again.version == record.version
        open_, _ = await w.tournaments.create(
            CreateTournament(caller=PLATFORM, name="o", table_size=2, places=2)
        )
        await w.tournaments.register(PLATFORM, open_.id, "p1")
        await w.tournaments.register(PLATFORM, open_.id, "p2")
        await refused("tournament_full", w.tournaments.register(PLATFORM, open_.id, "p3"))
        left, _ = await w.tournaments.withdraw(PLATFORM, open_.id, "p1")
        assert left.registered == ("p2",)
        await refused("invalid_tournament", w.tournaments.register(PLATFORM, open_.id, None))
        await refused("invalid_tournament", w.tournaments.register(PLATFORM, open_.id, "bot:1"))
        await refused("tournament_not_found", w.tournaments.register(ALICE, "0" * 20, None))

    run(body)


def test_the_organiser_alone_starts_pauses_resumes_and_stops():
    async def body(w: World) -> None:
        record, _ = await w.tournaments.create(CreateTournament(caller=ALICE, name="a", places=4))
        for caller in (BOB, PLATFORM):
            await refused("not_organiser", w.tournaments.start(caller, record.id))
        await refused("authentication_required", w.tournaments.start(ANONYMOUS, record.id))
        await refused("tournament_not_running", w.tournaments.pause(ALICE, record.id))
        await refused("tournament_not_paused", w.tournaments.resume(ALICE, record.id))
        stopped, _ = await w.tournaments.stop(ALICE, record.id)
        assert stopped.status == "stopped"
        await refused("tournament_over", w.tournaments.stop(ALICE, record.id))
        await refused("tournament_not_registering", w.tournaments.start(ALICE, record.id))
        await refused("tournament_not_registering", w.tournaments.register(BOB, record.id, None))

    run(body)


def test_a_keyed_command_sent_twice_is_done_once():
    async def body(w: World) -> None:
        record = await w.bots_only()
        started, replayed = await w.tournaments.start(PLATFORM, record.id, "s1")
        again, replayed_again = await w.tournaments.start(PLATFORM, record.id, "s1")
        assert (replayed, replayed_again, again.version) == (False, True, started.version)
        await refused("idempotency_key_reused", w.tournaments.pause(PLATFORM, record.id, "s1"))

    run(body)


async def _played(w: World, record, twice: bool = False):
    await w.tournaments.start(PLATFORM, record.id)
    await w.drain(twice)
    return await w.tournaments.get(record.id)


def _recomputed(w: World, record, games: dict) -> list:
    results = [
        table_result(played.number, table, games[(played.number, table.number)].state.results)
        for played in record.rounds
        for table in played.tables
    ]
    return standings(record.settings, record.entrants, record.rounds, results)


@pytest.mark.parametrize("twice", [False, True])
def test_a_duplicate_bot_tournament_plays_to_its_end(twice: bool):
    async def body(w: World) -> None:
        record = await _played(w, await w.bots_only(), twice)
        assert record.status == "finished"
        assert [r.number for r in record.rounds] == [1, 2, 3]
        games = {}
        for played in record.rounds:
            for table in played.tables:
                game = await w.store.load(game_id(record.id, played.number, table.number))
                assert game is not None
                assert game.status == "finished"
                assert game.tournament.round == played.number
                games[(played.number, table.number)] = game
            seeds = {games[(played.number, t.number)].state.seed for t in played.tables}
            assert len(seeds) == 1  # duplicate: one deal per round
        assert len({g.state.seed for g in games.values()}) == 3  # each round its own deal
        assert current_standings(record) == _recomputed(w, record, games)
        expected = [
            f"msg_t_{record.id}_started",
            *(f"msg_t_{record.id}_round_{n}" for n in (1, 2, 3)),
        ]
        assert sorted(set(w.told)) == sorted([*expected, f"msg_t_{record.id}_finished"])
        if not twice:
            assert len(w.told) == len(set(w.told))  # each queued once

    run(body)


def test_fresh_deals_differ_between_tables_and_round_robin_plays_too():
    async def body(w: World) -> None:
        record = await _played(
            w, await w.bots_only(deal_mode="fresh", format="round_robin", rounds=2)
        )
        assert record.status == "finished"
        for played in record.rounds:
            seeds = set()
            for table in played.tables:
                game = await w.store.load(game_id(record.id, played.number, table.number))
                seeds.add(game.state.seed)
            assert len(seeds) == len(played.tables)

    run(body)


def test_byes_when_the_entrants_do_not_fill_the_tables():
    async def body(w: World) -> None:
        record = await _played(w, await w.bots_only(places=6, rounds=2))
        assert record.status == "finished"
        assert all(len(r.byes) == 2 and len(r.tables) == 1 for r in record.rounds)
        assert len(record.results) == 2

    run(body)


def test_pause_holds_the_next_round_and_resume_goes_on():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=2)
        await w.tournaments.start(PLATFORM, record.id)
        await w.tournaments.pause(PLATFORM, record.id)
        await w.drain()
        paused = await w.tournaments.get(record.id)
        assert paused.status == "paused"
        assert len(paused.rounds) == 1
        assert paused.results == ()  # the round's games are not dealt while paused
        await w.tournaments.resume(PLATFORM, record.id)
        await w.drain()
        assert (await w.tournaments.get(record.id)).status == "finished"

    run(body)


def test_a_result_is_kept_once_and_a_stopped_game_scores_a_tie():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=1, places=4)
        await w.tournaments.start(PLATFORM, record.id)
        await w.drain()
        record = await w.tournaments.get(record.id)
        game = await w.store.load(game_id(record.id, 1, 0))
        await w.tournaments.director.record_result(game)  # the reaction again: nothing changes
        assert len((await w.tournaments.get(record.id)).results) == 1
        void = msgspec.structs.replace(game, aborted=True)
        other = await w.bots_only(rounds=1, places=4)
        await w.tournaments.start(PLATFORM, other.id)
        # the other tournament's table taken as aborted before its game is dealt
        ref = msgspec.structs.replace(void.tournament, tournament_id=other.id)
        await w.tournaments.director.record_result(msgspec.structs.replace(void, tournament=ref))
        kept = (await w.tournaments.get(other.id)).results
        assert [r.ranks for r in kept] == [(1, 1, 1, 1)]
        assert kept[0].scores == (0, 0, 0, 0)

    run(body)


def test_next_table_names_the_players_game():
    async def body(w: World) -> None:
        record, _ = await w.tournaments.create(
            CreateTournament(caller=PLATFORM, name="h", places=4, rounds=1)
        )
        await w.tournaments.register(ALICE, record.id, None)
        assert (await w.tournaments.next_table(record.id, "alice")).game_id is None
        await w.tournaments.start(PLATFORM, record.id)
        await w.drain()
        where = await w.tournaments.next_table(record.id, "alice")
        game = await w.games.get(where.game_id)
        assert game.verified_seat_of("alice") == where.seat
        assert game.status == "active"  # waiting on alice (bots move until she must)

    run(body)


def test_the_webhooks_decode_as_their_payload_types_and_tell_no_deal():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=1, places=4)
        await w.tournaments.start(PLATFORM, record.id)
        await w.drain()
        record = await w.tournaments.get(record.id)
        messages = tournament_messages(record, ("started", "round:1", "finished"))
        assert [m.type for m in messages] == [
            "tournament_started",
            "round_started",
            "tournament_finished",
        ]
        for message in messages:
            payload = msgspec.json.decode(message.body, type=WEBHOOK_PAYLOADS[message.type])
            assert payload.data.tournament_id == record.id
            assert record.settings.seed.encode() not in message.body  # the secret stays here
        end = msgspec.json.decode(messages[2].body, type=WEBHOOK_PAYLOADS["tournament_finished"])
        assert [s.entrant for s in end.data.standings] == [
            s.entrant for s in current_standings(record)
        ]

    run(body)


def test_a_director_dying_mid_step_leaves_the_rest_to_the_next_one():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=2)
        create, calls = w.tournaments.director.create_game, []

        async def dies_at_the_second_table(command):
            calls.append(command.tournament)
            if len(calls) == 2:
                raise ConnectionError("the replica died here")
            return await create(command)

        w.tournaments.director.create_game = dies_at_the_second_table
        await w.tournaments.start(PLATFORM, record.id)
        [job] = await w.queue.claim(w.now, 60.0, 10)
        with pytest.raises(ConnectionError):
            await w.tournaments.director.advance(
                job.id
            )  # its claim lapses: another replica takes it
        half = await w.tournaments.get(record.id)
        assert len(half.results) == 1  # the first table's game was dealt and played
        w.now += 61
        await w.drain()
        done = await w.tournaments.get(record.id)
        assert done.status == "finished"
        games = [
            await w.store.load(game_id(record.id, r.number, t.number))
            for r in done.rounds
            for t in r.tables
        ]
        assert all(g.status == "finished" for g in games)
        assert len(done.results) == 4  # 2 rounds of 2 tables, each result kept once

    run(body)


def test_a_writer_that_lost_the_race_judges_its_change_again_on_the_winner():
    async def body(w: World) -> None:
        record = await w.bots_only()
        store = w.tournament_store
        saved, raced = store.save_tournament, []

        async def racing(new):
            if not raced:  # another replica registers carl between bob's read and save
                raced.append(new)
                await w.tournaments.register(PLATFORM, record.id, "carl")
            await saved(new)

        store.save_tournament = racing
        after, _ = await w.tournaments.register(PLATFORM, record.id, "bob")
        assert raced[0].registered == ("bob",)  # bob's first try, refused by the version
        assert after.registered == ("carl", "bob")
        assert (await w.tournaments.get(record.id)).version == record.version + 2

    run(body)


def test_an_unranked_tournaments_games_are_unranked():
    async def body(w: World) -> None:
        for ranked in (True, False):
            record, _ = await w.tournaments.create(
                CreateTournament(caller=PLATFORM, name="r", places=4, rounds=1, ranked=ranked)
            )
            for pid in ("ann", "bob"):
                await w.tournaments.register(PLATFORM, record.id, pid)
            await w.tournaments.start(PLATFORM, record.id)
            await w.drain()
            game = await w.store.load(game_id(record.id, 1, 0))
            finished = msgspec.structs.replace(
                game, state=msgspec.structs.replace(game.state, phase="finished")
            )
            reasons = ranking(finished).reasons
            assert reasons == (() if ranked else ("unranked_tournament",))

    run(body)


class Received:
    """A webhook endpoint that takes everything (`service.reactions.webhook_delivery.Sender`), counting."""

    def __init__(self) -> None:
        self.got: list[tuple[str, bytes]] = []

    async def send(self, url: str, message_id: str, body: bytes, now: float):
        self.got.append((message_id, body))
        return None, False

    async def close(self) -> None:
        pass


def test_each_tournament_webhook_is_delivered_once_per_id_through_the_outbox():
    async def body(w: World) -> None:
        endpoint = Received()
        outbox = WebhookOutbox(MemoryQueue("webhooks"))
        webhooks = Webhooks(
            outbox, ["https://platform.example/hook"], endpoint, clock=lambda: w.now
        )
        w.tournaments.director.announce = webhooks.announce
        record = await w.bots_only(rounds=2)
        await w.tournaments.start(PLATFORM, record.id)
        await w.drain(twice=True)  # two replicas on every step: messages queued twice
        for _ in range(10):
            await webhooks.run_once()
        ids = [message_id for message_id, _ in endpoint.got]
        t = record.id
        assert sorted(ids) == sorted(
            [
                f"msg_t_{t}_started",
                f"msg_t_{t}_round_1",
                f"msg_t_{t}_round_2",
                f"msg_t_{t}_finished",
            ]
        )
        finished = dict(endpoint.got)[f"msg_t_{t}_finished"]
        payload = msgspec.json.decode(finished, type=WEBHOOK_PAYLOADS["tournament_finished"])
        assert payload.data.status == "finished"
        assert len(payload.data.standings) == 8

    run(body)


def test_a_decisions_job_is_due_only_once_it_is_saved_or_after_the_grace():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=1, places=4)
        put, seen = w.queue.put, []

        async def watched(job_id, payload, at, **options):
            stored = await w.tournament_store.load_tournament(job_id)
            seen.append((stored.status, at - w.now))
            return await put(job_id, payload, at, **options)

        w.queue.put = watched
        await w.tournaments.start(PLATFORM, record.id)
        # before the save: due after the grace; after it: at once
        assert seen[:2] == [("registering", GRACE), ("running", 0.0)]

    run(body)


def test_a_director_dying_before_it_deals_leaves_the_round_to_another_after_its_lease():
    """Found by tests/scaleout/test_tournament_replicas.py: a replica killed after a round
    was paired and announced but before any of its games was dealt holds the director's
    job until its claim lapses, nothing queueing it again meanwhile: the director's worker
    claims for LEASE seconds (a step is one round's deals), not the workers' default 60."""

    async def body(w: World) -> None:
        record = await w.bots_only(rounds=1, places=4)
        create = w.tournaments.director.create_game

        async def dies_at_once(command):
            raise ConnectionError("the replica died here")

        worker = w.tournaments.director.worker(clock=lambda: w.now)
        assert worker.lease == LEASE < 60.0
        w.tournaments.director.create_game = dies_at_once
        await w.tournaments.start(PLATFORM, record.id)
        [job] = await w.queue.claim(w.now, worker.lease, 10)  # the replica that dies
        with pytest.raises(ConnectionError):
            await w.tournaments.director.advance(job.id)
        announced = await w.tournaments.get(record.id)
        assert announced.pending == ()
        assert announced.results == ()
        assert await w.queue.claim(w.now + LEASE - 0.5, 60.0, 10) == []
        w.tournaments.director.create_game = create
        w.now += LEASE
        assert await worker.run_once() == 1  # another replica's worker takes it over
        await w.drain()
        assert (await w.tournaments.get(record.id)).status == "finished"

    run(body)


def test_a_step_pairs_one_round_and_leaves_its_deals_to_the_next_step():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=3)
        await w.tournaments.start(PLATFORM, record.id)
        [job] = await w.queue.claim(w.now, 60.0, 10)
        await w.tournaments.director.advance(
            job.id
        )  # round 1 dealt and played (bots), round 2 paired
        after = await w.tournaments.get(record.id)
        assert [r.number for r in after.rounds] == [1, 2]
        assert [r.round for r in after.results] == [1, 1]  # round 2: not dealt in this step
        assert await w.queue.claim(w.now, 60.0, 10) != []  # its step is due at once
        await w.drain()
        assert (await w.tournaments.get(record.id)).status == "finished"

    run(body)


# ---------------------------------------------------------------- times and clocks


async def _settled(w: World, worker) -> None:
    """Run the director's worker at the fake clock's now until nothing is due."""
    for _ in range(100):
        if await worker.run_once() == 0:
            return
    raise AssertionError("the director never settled")


async def _first_round_played(w: World, **fields: object):
    """A bot tournament started, its first round played (at once) by the director's worker
    on the fake clock: (the tournament, the worker)."""
    record = await w.bots_only(**fields)
    worker = w.tournaments.director.worker(clock=lambda: w.now)
    await w.tournaments.start(PLATFORM, record.id)
    await _settled(w, worker)
    return record, worker


async def _nothing_stored(w: World) -> None:
    assert await w.tournament_store.list_tournaments(None, 10) == []
    assert await w.queue.backlog() == 0


def test_bad_times_are_refused_and_change_nothing():
    async def body(w: World) -> None:
        for bad in (
            {"starts_at": T0 - 1},
            {"starts_at": T0},
            {"starts_at": T0 + MAX_AHEAD + 1},
            {"round_interval": -1.0},
            {"round_interval": MAX_ROUND_INTERVAL + 1},
        ):
            await refused(
                "invalid_tournament",
                w.tournaments.create(CreateTournament(caller=ALICE, name="x", **bad)),
            )
            await _nothing_stored(w)
        record, _ = await w.tournaments.create(
            CreateTournament(
                caller=ALICE, name="x", starts_at=T0 + MAX_AHEAD, round_interval=MAX_ROUND_INTERVAL
            )
        )
        assert (record.starts_at, record.round_interval) == (T0 + MAX_AHEAD, MAX_ROUND_INTERVAL)
        assert record.next_round_at is None

    run(body)


def test_a_tournament_starts_itself_at_its_time_not_before():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=1, places=4, starts_at=T0 + 600)
        await w.tournaments.register(ALICE, record.id, None)
        worker = w.tournaments.director.worker(clock=lambda: w.now)
        await _settled(w, worker)
        assert (await w.tournaments.get(record.id)).status == "registering"
        w.now += 599
        assert await worker.run_once() == 0  # its job is due at the time, not before
        assert (await w.tournaments.get(record.id)).status == "registering"
        w.now += 1
        # two replicas at once: it starts once
        [job] = await w.queue.claim(w.now, LEASE, 10)
        await asyncio.gather(*(w.tournaments.director.advance(job.id) for _ in range(2)))
        started = await w.tournaments.get(record.id)
        assert started.status in ("running", "finished")
        assert [e.id for e in started.entrants] == ["alice", "bot:1", "bot:2", "bot:3"]
        assert len(started.rounds) == 1
        assert f"msg_t_{record.id}_started" in w.told
        await refused("tournament_not_registering", w.tournaments.register(BOB, record.id, None))

    run(body)


def test_a_step_run_early_leaves_the_job_due_at_the_start_not_at_every_lease():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=1, places=4, starts_at=T0 + 3600)
        await w.tournaments.register(ALICE, record.id, None)
        await w.queue.put(record.id, b"", T0)  # due now (another change queued it)
        worker = w.tournaments.director.worker(clock=lambda: w.now)
        assert await worker.run_once() == 1  # the step finds it too early
        assert await w.queue.claim(T0 + LEASE + 1, 60.0, 10) == []  # not at its lease's end
        assert [j.id for j in await w.queue.claim(T0 + 3600, 60.0, 10)] == [record.id]

    run(body)


def test_the_organiser_may_start_it_before_its_time_and_the_time_then_changes_nothing():
    async def body(w: World) -> None:
        record = await w.bots_only(rounds=1, places=4, starts_at=T0 + 600)
        worker = w.tournaments.director.worker(clock=lambda: w.now)
        await w.tournaments.start(PLATFORM, record.id)
        await _settled(w, worker)
        done = await w.tournaments.get(record.id)
        assert done.status == "finished"
        w.now = T0 + 700
        await w.queue.put(record.id, b"", T0 + 600)  # its start's job, however late
        await _settled(w, worker)
        assert await w.tournaments.get(record.id) == done
        assert w.told.count(f"msg_t_{record.id}_started") == 1

    run(body)


def test_a_keyed_create_replayed_after_its_start_time_is_the_same_tournament():
    async def body(w: World) -> None:
        ask = CreateTournament(caller=ALICE, name="Cup", starts_at=T0 + 60, idempotency_key="k")
        first, _ = await w.tournaments.create(ask)
        w.now += 120
        again, replayed = await w.tournaments.create(ask)
        assert (again.id, replayed) == (first.id, True)
        other = msgspec.structs.replace(ask, round_interval=5.0)
        await refused("idempotency_key_reused", w.tournaments.create(other))

    run(body)


def test_the_next_round_waits_for_its_interval():
    async def body(w: World) -> None:
        record, worker = await _first_round_played(w, rounds=2, round_interval=120.0)
        waiting = await w.tournaments.get(record.id)
        assert [r.number for r in waiting.rounds] == [1]
        assert len(waiting.results) == len(waiting.rounds[0].tables)
        assert waiting.next_round_at == T0 + 120
        w.now += LEASE + 1
        assert await worker.run_once() == 0  # due at its time, not at its lease's end
        w.now = T0 + 119
        await _settled(w, worker)
        assert len((await w.tournaments.get(record.id)).rounds) == 1
        w.now = T0 + 120
        await _settled(w, worker)
        finished = await w.tournaments.get(record.id)
        assert [r.number for r in finished.rounds] == [1, 2]
        assert (finished.status, finished.next_round_at) == ("finished", None)

    run(body)


def test_a_pause_across_the_next_rounds_time_pairs_nothing_and_its_resume_pairs_at_once():
    async def body(w: World) -> None:
        record, worker = await _first_round_played(w, rounds=3, round_interval=120.0)
        assert (await w.tournaments.get(record.id)).next_round_at == T0 + 120
        w.now = T0 + 10
        await w.tournaments.pause(PLATFORM, record.id)
        w.now = T0 + 500  # its time passes while it is paused
        await _settled(w, worker)
        paused = await w.tournaments.get(record.id)
        assert (paused.status, len(paused.rounds)) == ("paused", 1)
        await w.tournaments.resume(PLATFORM, record.id)
        await _settled(w, worker)  # round 2 paired at once, played, round 3 waits its interval
        resumed = await w.tournaments.get(record.id)
        assert [r.number for r in resumed.rounds] == [1, 2]
        assert resumed.next_round_at == T0 + 500 + 120
        # a pause and a resume before the time: the round still waits for it
        await w.tournaments.pause(PLATFORM, record.id)
        w.now = T0 + 550
        await w.tournaments.resume(PLATFORM, record.id)
        await _settled(w, worker)
        assert len((await w.tournaments.get(record.id)).rounds) == 2
        w.now = T0 + 620
        await _settled(w, worker)
        assert (await w.tournaments.get(record.id)).status == "finished"

    run(body)


def test_stop_in_an_interval_clears_the_next_rounds_time():
    async def body(w: World) -> None:
        record, worker = await _first_round_played(w, rounds=2, round_interval=60.0)
        stopped, _ = await w.tournaments.stop(PLATFORM, record.id)
        assert (stopped.status, stopped.next_round_at) == ("stopped", None)
        w.now = T0 + 60
        await _settled(w, worker)
        assert len((await w.tournaments.get(record.id)).rounds) == 1

    run(body)


def test_a_tournament_without_a_clock_plays_with_the_default_and_a_no_show_is_taken_over():
    async def body(w: World) -> None:
        record, _ = await w.tournaments.create(
            CreateTournament(caller=PLATFORM, name="h", places=4, rounds=1, bot_level="random")
        )
        assert record.clock == DEFAULT_CLOCK
        await w.tournaments.register(ALICE, record.id, None)  # who never plays
        await w.tournaments.start(PLATFORM, record.id)
        await w.drain()
        where = await w.tournaments.next_table(record.id, "alice")
        game = await w.store.load(where.game_id)
        assert game.state.clock.control == DEFAULT_CLOCK
        taken_at = None
        while not game.ended:  # the deadline poller, at each due
            w.now = max(w.now, game.due)
            await w.games.fire_due(game.id)
            game = await w.store.load(where.game_id)
            if taken_at is None and game.state.players[where.seat].stand_in is not None:
                taken_at = w.now
        # `takeover_after` timeouts in a row: the bank's time, then its increment each time
        bank, back = DEFAULT_CLOCK.initial_seconds, DEFAULT_CLOCK.increment_seconds
        assert taken_at == T0 + bank + (DEFAULT_CLOCK.takeover_after - 1) * back
        await w.drain()
        done = await w.tournaments.get(record.id)
        assert done.status == "finished"
        assert done.result_of(1, where.table) is not None

    run(body)


def test_a_tournament_stored_without_a_clock_deals_its_games_with_the_default():
    async def body(w: World) -> None:
        record, _ = await w.tournaments.create(
            CreateTournament(caller=PLATFORM, name="o", places=4)
        )
        old = msgspec.structs.replace(record, clock=None, version=record.version + 1)
        await w.tournament_store.save_tournament(old)  # as a tournament made before
        await w.tournaments.register(ALICE, record.id, None)
        await w.tournaments.start(PLATFORM, record.id)
        await w.drain()
        where = await w.tournaments.next_table(record.id, "alice")
        game = await w.store.load(where.game_id)
        assert game.state.clock.control == DEFAULT_CLOCK

    run(body)


class FakeReviews:
    """The reviews' luck-adjusted results (`Reviews.luck_adjusted`) as the test decides: a
    game's is None (computed) until the test computes it, then its seats' scores turned
    around (the luck made the result: the last is first); `failed` games' reviews fail."""

    def __init__(self, w_store: MemoryGameStore) -> None:
        self.store = w_store
        self.asked: set[str] = set()
        self.computed: set[str] = set()
        self.failed: set[str] = set()

    async def luck_adjusted(self, game_id: str) -> tuple[LuckAdjusted, ...] | None:
        self.asked.add(game_id)
        if game_id in self.failed:
            raise ServiceError("review_failed")
        if game_id not in self.computed:
            return None
        return self.of(game_id, await self.store.load(game_id))

    @staticmethod
    def of(game_id: str, game) -> tuple[LuckAdjusted, ...]:
        scores = [-r.score - 0.5 for r in sorted(game.state.results, key=lambda r: r.seat)]
        return tuple(
            LuckAdjusted(margin=0.0, score=s, rank=1 + sum(o > s for o in scores)) for s in scores
        )

    def compute_all(self) -> None:
        self.computed |= self.asked


async def _tables_games(w: World, record) -> dict:
    return {
        (played.number, table.number): await w.store.load(
            game_id(record.id, played.number, table.number)
        )
        for played in record.rounds
        for table in played.tables
    }


def test_a_luck_adjusted_tournament_pairs_and_ends_only_once_its_reviews_are_in() -> None:
    """Each round waits for its tables' reviews (asked for as the tables end, asked again
    REVIEW_WAIT later, never paired before), then ranks by the luck-adjusted results."""

    async def body() -> None:
        w = World()
        reviews = FakeReviews(w.store)
        w.tournaments.director.adjusted = reviews.luck_adjusted
        record, worker = await _first_round_played(w, rounds=2, standings_by="luck_adjusted")
        assert record.settings.standings_by == "luck_adjusted"
        for _ in range(2):
            waiting = await w.tournaments.get(record.id)
            number = len(waiting.rounds)
            assert waiting.status == "running"
            ended = [r for r in waiting.results if r.round == number]
            assert len(ended) == len(waiting.rounds[-1].tables) == 2  # played, not adjusted
            assert all(r.adjusted is None and not r.unadjusted for r in ended)
            assert reviews.asked == {game_id(record.id, r.round, r.table) for r in waiting.results}
            w.now += LEASE * 10  # long after: still waiting for the fact, not for a time
            await _settled(w, worker)
            assert len((await w.tournaments.get(record.id)).rounds) == number
            reviews.compute_all()
            assert await worker.run_once() == 0  # due again REVIEW_WAIT after its last step
            w.now += REVIEW_WAIT
            await _settled(w, worker)
        final = await w.tournaments.get(record.id)
        assert (final.status, [r.number for r in final.rounds]) == ("finished", [1, 2])
        games = await _tables_games(w, final)
        for result in final.results:
            seats = FakeReviews.of("", games[(result.round, result.table)])
            assert result.adjusted == Adjusted(
                ranks=tuple(a.rank for a in seats), scores=tuple(a.score for a in seats)
            )
        results = [
            msgspec.structs.replace(
                table_result(r, table, games[(r, table.number)].state.results),
                adjusted=final.result_of(r, table.number).adjusted,
            )
            for r, played in enumerate(final.rounds, start=1)
            for table in played.tables
        ]
        expected = standings(final.settings, final.entrants, final.rounds, results)
        assert current_standings(final) == expected
        plain = msgspec.structs.replace(final.settings, standings_by="results")
        by_results = standings(plain, final.entrants, final.rounds, results)
        assert [s.entrant for s in expected] != [s.entrant for s in by_results]  # luck turned
        shown = {s.entrant: s for s in standings_out(final)}
        for s in by_results:
            row = shown[s.entrant]
            assert (row.result_points, row.result_matchpoints, row.result_margin) == (
                s.points, s.matchpoints, s.margin,
            )  # fmt: skip
            assert (row.strength, row.result_strength) == (None, None)  # not ranked by it
        # ranked by strength: the luck-adjusted strengths rank, the results' own beside them
        strong = msgspec.structs.replace(
            final, settings=msgspec.structs.replace(final.settings, ranked_by="strength")
        )
        fitted = standings(strong.settings, final.entrants, final.rounds, results)
        plain = msgspec.structs.replace(strong.settings, standings_by="results")
        own = {
            s.entrant: s.strength for s in standings(plain, final.entrants, final.rounds, results)
        }
        shown_rows = standings_out(strong)
        assert [(r.entrant, r.strength) for r in shown_rows] == [
            (s.entrant, s.strength) for s in fitted
        ]
        assert {r.entrant: r.result_strength for r in shown_rows} == own
        assert all(isinstance(v, float) for v in own.values())
        assert own != {s.entrant: s.strength for s in fitted}  # the luck moved them

    asyncio.run(body())


def test_a_failed_review_counts_its_table_by_its_results_and_stalls_nothing() -> None:
    """A review set aside for good (`review_failed`): its table is kept unadjusted and counts
    by its results; the tournament goes on. A game ended without results needs no review."""

    async def body() -> None:
        w = World()
        reviews = FakeReviews(w.store)
        w.tournaments.director.adjusted = reviews.luck_adjusted
        record, worker = await _first_round_played(
            w, rounds=1, places=8, standings_by="luck_adjusted"
        )
        first, second = (game_id(record.id, 1, t) for t in (0, 1))
        reviews.failed.add(first)
        reviews.computed.add(second)
        w.now += REVIEW_WAIT
        await _settled(w, worker)
        final = await w.tournaments.get(record.id)
        assert final.status == "finished"
        failed, adjusted = final.result_of(1, 0), final.result_of(1, 1)
        assert (failed.unadjusted, failed.adjusted) == (True, None)
        assert (adjusted.unadjusted, adjusted.adjusted is not None) == (False, True)
        points = {s.entrant: s.points for s in current_standings(final)}
        for result in (failed,):  # by its results: the place points of its ranks
            for entrant, pts in zip(result.seats, place_points(result.ranks), strict=True):
                assert points[entrant] == pts
        # a table whose game ended without results: unadjusted at once, no review asked
        other = await w.bots_only(rounds=1, places=4, standings_by="luck_adjusted")
        await w.tournaments.start(PLATFORM, other.id)
        game = await w.store.load(first)
        ref = msgspec.structs.replace(game.tournament, tournament_id=other.id, table=0)
        void = msgspec.structs.replace(game, aborted=True, tournament=ref)
        await w.tournaments.director.record_result(void)
        (kept,) = (await w.tournaments.get(other.id)).results
        assert (kept.ranks, kept.unadjusted) == ((1, 1, 1, 1), True)
        assert game_id(other.id, 1, 0) not in reviews.asked
        await _settled(w, worker)
        assert (await w.tournaments.get(other.id)).status == "finished"

    asyncio.run(body())
