"""At least once, whatever process died where (service.reactions.relay): the reactions to a change (the
archive queue, the platform's webhooks) are relayed from the game's event log, so a replica
that dies between the save and any reaction loses nothing. Another replica's relay worker
picks the game up once its mark is due, and every webhook message and every archive job
arrives, once per id. On the embedded store and on real Redis (the queues, the webhook
outbox and the game store all shared by the two replicas)."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.model import Resign
from infra.queues import MemoryQueue, RedisQueue
from infra.redis_client import connect
from infra.webhook_sender import HttpSender
from service.bootstrap import reaction_table
from service.core.callers import Caller
from service.core.ports import VersionConflict
from service.core.settings import Settings
from service.games.commands import AbortGame, Act
from service.games.use_cases import GameService
from service.history.archiver import ArchiveReaction
from service.jobs.worker import Worker
from service.lobby.use_cases import Lobby
from service.reactions.relay import GRACE, Relay
from service.reactions.webhook_delivery import WebhookOutbox
from service.reactions.webhooks import Webhooks

URL = "http://127.0.0.1:9/hooks"
SECRET = "whsec_" + base64.b64encode(b"relay-test-secret-of-32-bytes!!!").decode()
PLATFORM = Caller(kind="platform")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Shared:
    """What the replicas share: the game store and, on Redis, the queues and the outbox."""

    def __init__(self, backend, store) -> None:
        self.backend, self.store = backend, store
        self.tag = secrets.token_hex(6)
        self.client = None if backend.kind == "memory" else connect(backend.url)
        self.memory: dict[str, Any] = {}

    def queue(self, name: str):
        if self.client is None:
            return self.memory.setdefault(name, MemoryQueue(name))
        queue = RedisQueue(self.client, name, prefix=f"test-{self.tag}:")
        self.backend.other_keys.extend(queue.keys.values())
        return queue

    def webhook_outbox(self) -> WebhookOutbox:
        return WebhookOutbox(self.queue("webhooks"))

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()


class Replica:
    """One process: its relay with the archive and webhook reactions, its use cases."""

    def __init__(self, shared: Shared, clock: Clock) -> None:
        self.archive_queue = shared.queue("archive")
        self.hooks = Webhooks(shared.webhook_outbox(), [URL], HttpSender(SECRET), clock=clock)
        archive = ArchiveReaction(shared.store, self.archive_queue, clock=clock)
        table = reaction_table(archive=archive, webhooks=self.hooks)
        self.relay = Relay(shared.store, shared.queue("relay"), table, clock=clock)
        self.games = GameService(shared.store, Settings(), relay=self.relay, clock=clock)
        self.lobby = Lobby(self.games)

    def worker(self, clock: Clock) -> Worker:
        return self.relay.worker(clock=clock)


def die_after_the_save(replica: Replica) -> None:
    """The process dies after every save, before any reaction (and before the mark goes)."""

    async def nothing(game_id: str, token: int | None) -> None:
        return None

    replica.relay.settle = nothing  # type: ignore[method-assign]


def die_between_the_reactions(replica: Replica) -> None:
    """The archive reaction is done, then the process dies before the webhooks'."""

    async def dies(record, events) -> None:
        raise RuntimeError("killed between two reactions")

    replica.hooks.react = dies  # type: ignore[method-assign]


def die_before_the_mark_goes(replica: Replica) -> None:
    """Every reaction is done, then the process dies before it removes the mark."""

    class Dying:
        def __init__(self, queue) -> None:
            self.queue = queue

        def __getattr__(self, name: str) -> Any:
            return getattr(self.queue, name)

        async def done(self, job_id: str, token: int) -> bool:
            raise RuntimeError("killed before the mark was removed")

    replica.relay.queue = Dying(replica.relay.queue)


async def play(replica: Replica) -> tuple[set[str], set[str]]:
    """Changes that call for every kind of webhook: a game dealt (started), a seat resigned
    (taken over) whose bots then play the game to its end (finished), another game dealt
    then aborted by the platform. The message ids and archived game ids they call for."""
    first = await replica.lobby.deal([("ann", None), ("bob", "basic")])
    [(_, token)] = first.tokens
    acted = await replica.games.act(
        Act(caller=Caller(seat_token=token), game_id=first.record.id, action=Resign())
    )
    assert acted.record.status == "finished"
    taken = next(e for e in acted.events if json.loads(e.data)["type"] == "seat_taken_over")
    second = await replica.lobby.deal([("cy", None), ("dee", None)])
    aborted = await replica.lobby.abort(AbortGame(caller=PLATFORM, game_id=second.record.id))
    assert aborted.status == "aborted"
    a, b = first.record.id, second.record.id
    messages = {
        f"msg_{a}_started",
        f"msg_{a}_taken_{taken.seq}",
        f"msg_{a}_finished",
        f"msg_{b}_started",
        f"msg_{b}_aborted",
    }
    return messages, {a, b}


async def arrived(replica: Replica) -> tuple[list[str], list[str]]:
    """Every message id queued for the endpoint, and every game id in the archive queue
    (claimed far in the future: everything queued; repeats kept, to count them)."""
    deliveries = (await replica.hooks.outbox.claim(4e9, 30.0, 1000)).deliveries
    assert {d.url for d in deliveries} <= {URL}
    jobs = await replica.archive_queue.claim(4e9, 30.0, 1000)
    return [d.message_id for d in deliveries], [j.id for j in jobs]


def run(backend, body: Callable[[Shared], Awaitable[None]]) -> None:
    async def main(store) -> None:
        shared = Shared(backend, store)
        try:
            await body(shared)
        finally:
            await shared.close()

    backend.run(main)


@pytest.mark.parametrize(
    "dies", [die_after_the_save, die_between_the_reactions, die_before_the_mark_goes]
)
def test_every_reaction_arrives_once_per_id_whatever_process_died_where(backend, dies):
    async def body(shared: Shared) -> None:
        clock = Clock()
        dying = Replica(shared, clock)
        dies(dying)
        messages, games = await play(dying)
        backend.ids.extend(games)
        # the other replica: nothing is due before the grace has passed (the saving
        # process may still be relaying), then its worker relays every marked game
        other = Replica(shared, clock)
        worker = other.worker(clock)
        assert await worker.run_once() == 0
        clock.now += GRACE + 0.01
        assert await worker.run_once() == len(games)
        assert await other.relay.queue.backlog() == 0
        assert await worker.run_once() == 0
        sent, archived = await arrived(other)
        assert sorted(sent) == sorted(messages)  # each once: one id per fact
        assert sorted(archived) == sorted(games)
        # its webhook bodies are whole: the results of the finished game, the aborted reason
        bodies = {
            d.message_id: json.loads(d.body)
            for d in (await other.hooks.outbox.claim(4e9 + 60, 30.0, 1000)).deliveries
        }
        for message_id, payload in bodies.items():
            assert payload["data"]["game_id"] in games
            if message_id.endswith("_finished"):
                assert len(payload["data"]["results"]) == 2
            if message_id.endswith("_aborted"):
                assert payload["data"]["reason"] == "aborted"

    run(backend, body)


def test_a_replica_that_lives_relays_at_once_and_leaves_nothing_behind(backend):
    async def body(shared: Shared) -> None:
        clock = Clock()
        replica = Replica(shared, clock)
        messages, games = await play(replica)
        backend.ids.extend(games)
        assert await replica.relay.queue.backlog() == 0  # every mark settled in the request
        sent, archived = await arrived(replica)
        assert sorted(sent) == sorted(messages)
        assert sorted(archived) == sorted(games)
        clock.now += GRACE + 60
        assert await replica.worker(clock).run_once() == 0

    run(backend, body)


def test_moves_in_play_mark_nothing_and_cost_the_relay_nothing(backend):
    async def body(shared: Shared) -> None:
        clock = Clock()
        replica = Replica(shared, clock)
        dealt = await replica.lobby.deal([("ann", None), ("bob", None)])
        backend.ids.append(dealt.record.id)
        tokens = dict(dealt.tokens)
        relayed: list[str] = []
        real = replica.relay.relay

        async def counted(game_id: str) -> None:
            relayed.append(game_id)
            await real(game_id)

        replica.relay.relay = counted  # type: ignore[method-assign]
        record = dealt.record
        for _ in range(3):
            seat = to_act(record.state)
            assert seat is not None
            actions = legal_actions(record.state, seat)
            moves = [a for a in actions if not isinstance(a, Resign)]
            move = next((a for a in moves if type(a).__struct_config__.tag == "draw"), moves[0])
            acted = await replica.games.act(
                Act(caller=Caller(seat_token=tokens[seat]), game_id=record.id, action=move)
            )
            record = acted.record
            assert record.status == "active"
        assert relayed == []
        assert await replica.relay.queue.backlog() == 0

    run(backend, body)


def test_a_save_that_failed_leaves_a_mark_that_finds_nothing_and_goes(backend):
    async def body(shared: Shared) -> None:
        clock = Clock()
        replica = Replica(shared, clock)
        dealt = await replica.lobby.deal([("ann", None), ("bob", None)])
        backend.ids.append(dealt.record.id)
        record = dealt.record
        hooks_before = await replica.hooks.outbox.backlog()
        assert hooks_before == 1  # game_started
        stale = record.successor(updated_at=clock.now + 1)  # read, as if another save won
        with pytest.raises(VersionConflict):
            await replica.games.store_change(stale, stale.successor(aborted=True), [])
        assert await replica.relay.queue.backlog() == 1  # marked before the save was refused
        clock.now += GRACE + 1
        assert await replica.worker(clock).run_once() == 1
        assert await replica.relay.queue.backlog() == 0
        assert await replica.hooks.outbox.backlog() == hooks_before  # nothing told
        assert await replica.archive_queue.backlog() == 0  # nothing archived
        assert (await shared.store.load(record.id)).status == "active"

    run(backend, body)
