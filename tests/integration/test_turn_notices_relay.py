"""Turn notices at least once, whatever process died where: a replica that dies after saving
the move that hands a correspondence game to the next player, before any reaction, leaves
its mark; another replica's relay worker picks it up once due and queues the `your_turn`
webhook and the push of every subscription of that player, once per id. On the embedded
store and on real Redis (the game store, the queues, the outbox, the players' records and
the presence all shared by the two replicas)."""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

from domain.bots.basic import BOTS, bot_rng
from domain.game.engine import information_state, to_act
from domain.game.model import DeadlineClock
from infra.memory_presence import MemoryPresence
from infra.memory_push import MemoryPlayerStore
from infra.queues import MemoryQueue, RedisQueue
from infra.redis_client import connect
from infra.redis_presence import RedisPresence
from infra.redis_push import RedisPlayerStore
from infra.webhook_sender import HttpSender
from service.bootstrap import CAPABILITY_FACTS, reaction_table
from service.core.callers import ANONYMOUS, Caller
from service.core.settings import Settings
from service.core.unit_of_work import Retry
from service.correspondence.notices import TurnNotices
from service.correspondence.records import PushKeys
from service.correspondence.use_cases import Correspondence
from service.games.commands import Act, CreateTable, SeatRequest
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from service.reactions.relay import GRACE, Relay
from service.reactions.webhook_delivery import WebhookOutbox
from service.reactions.webhooks import Webhooks

URL = "http://127.0.0.1:9/hooks"
SECRET = "whsec_" + base64.b64encode(b"relay-test-secret-of-32-bytes!!!").decode()
KEYS = PushKeys(p256dh="B" + "A" * 86, auth="A" * 22)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Shared:
    """What the replicas share: the store, and the queues, players and presence."""

    def __init__(self, backend, store) -> None:
        self.backend, self.store = backend, store
        tag = secrets.token_hex(6)
        self.memory: dict[str, Any] = {}
        if backend.kind == "memory":
            self.client = None
            self.players, self.presence = MemoryPlayerStore(), MemoryPresence()
        else:
            self.client = connect(backend.url)
            self.players = RedisPlayerStore(self.client, prefix=f"test-{tag}")
            self.presence = RedisPresence(self.client, prefix=f"test-{tag}")
        self.tag = tag

    def queue(self, name: str):
        if self.client is None:
            return self.memory.setdefault(name, MemoryQueue(name))
        queue = RedisQueue(self.client, name, prefix=f"test-{self.tag}:")
        self.backend.other_keys.extend(queue.keys.values())
        return queue

    async def close(self) -> None:
        if self.client is not None:
            for key in [k async for k in self.client.scan_iter(match=f"test-{self.tag}:*")]:
                await self.client.delete(key)
            await self.client.aclose()


class Replica:
    def __init__(self, shared: Shared, clock: Clock) -> None:
        self.push = shared.queue("push")
        self.hooks = Webhooks(
            WebhookOutbox(shared.queue("webhooks")), [URL], HttpSender(SECRET), clock=clock
        )
        notices = TurnNotices(
            shared.presence, shared.players, self.push, announce=self.hooks.announce, clock=clock
        )
        self.relay = Relay(
            shared.store,
            shared.queue("relay"),
            reaction_table(notices=notices),
            facts=CAPABILITY_FACTS,
            clock=clock,
        )
        self.games = GameService(shared.store, Settings(), relay=self.relay, clock=clock)
        self.lobby = Lobby(self.games)
        self.corr = Correspondence(shared.players, Retry(3), clock=clock)


def test_a_turn_handed_over_by_a_replica_that_died_is_told_by_another_once(backend):
    async def main(store) -> None:
        shared = Shared(backend, store)
        try:
            clock = Clock()
            dying = Replica(shared, clock)

            async def nothing(game_id: str, mark: Any) -> None:
                return None  # the process died after the save, before any reaction

            dying.relay.settle = nothing  # type: ignore[method-assign]
            await dying.corr.subscribe(ANONYMOUS, "bob", "https://push.example/bob", KEYS)
            seats = (
                SeatRequest(name="Ann", player_id="ann"),
                SeatRequest(name="Bob", player_id="bob"),
            )
            made = await dying.lobby.create(
                CreateTable(
                    caller=ANONYMOUS, seats=seats, starting_seat=0, clock=DeadlineClock(hours=24)
                )
            )
            game_id, token = made.record.id, dict(made.tokens)[0]
            backend.ids.append(game_id)
            record = made.record
            while to_act(record.state) == 0:  # ann plays until the game waits on bob
                state = record.state
                action = BOTS["basic"](
                    information_state(state), 0, bot_rng(state.seed, state.version)
                )
                record = (
                    await dying.games.act(
                        Act(caller=Caller(seat_token=token), game_id=game_id, action=action)
                    )
                ).record
            other = Replica(shared, clock)
            worker = other.relay.worker(clock=clock)
            assert await worker.run_once() == 0  # not due before the grace
            clock.now += GRACE + 0.01
            assert await worker.run_once() == 1
            for _ in range(2):  # relayed again: nothing more
                await other.relay.relay(game_id)
            deliveries = (await other.hooks.outbox.claim(4e9, 30.0, 100)).deliveries
            told = sorted((json.loads(d.body)["data"]["seat"], d.message_id) for d in deliveries)
            # bob, once: the game's start no longer waits on ann (she moved since), so the
            # catching-up relay tells only the turn the game waits on now
            assert [seat for seat, _ in told] == [1]
            pushes = await other.push.claim(4e9, 30.0, 100)
            assert len(pushes) == 1  # bob's one browser, once
            assert pushes[0].id.startswith(f"{game_id}_turn_")
        finally:
            await shared.close()

    backend.run(main)
