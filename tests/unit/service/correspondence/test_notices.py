"""Turn notices (service.correspondence.notices) on in-memory adapters: what a change that
hands a deadline game's turn to a player queues (one webhook and one push per subscription,
ids fixed by the turn, queued once however often the change is relayed), nothing for a
player watching; and the push queue's handler on each answer of a push service."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
from msgspec.structs import replace

from domain.bots.clock import start_clock
from domain.game.model import DeadlineClock
from infra.memory_presence import MemoryPresence
from infra.memory_push import MemoryPlayerStore
from infra.queues import MemoryQueue
from service.core.callers import ANONYMOUS
from service.core.settings import Settings
from service.core.unit_of_work import Retry
from service.correspondence.notices import EndpointRefused, PushDelivery, TurnNotices
from service.correspondence.records import PushKeys
from service.correspondence.turns import TURN_WAITS, turn_waits
from service.correspondence.use_cases import Correspondence
from service.games.use_cases import encode_events
from service.jobs.worker import PermanentFailure
from service.reactions.relay import relayed_change
from tests.support.games import started

NOW = 1_800_000_000.0
KEYS = PushKeys(p256dh="B" + "A" * 85 + "A", auth="A" * 22)


def _deadline_game():
    record, events = started()
    state = start_clock(record.state, DeadlineClock(hours=24), NOW)
    return replace(record, state=state), events


class Parts:
    def __init__(self) -> None:
        self.players = MemoryPlayerStore()
        self.presence = MemoryPresence()
        self.queue = MemoryQueue("push")
        self.told: list = []

        async def announce(messages) -> None:
            self.told.extend(messages)

        self.notices = TurnNotices(
            self.presence, self.players, self.queue, announce=announce, clock=lambda: NOW
        )
        self.corr = Correspondence(self.players, Retry(3), clock=lambda: NOW)


def test_a_turn_handed_to_a_player_queues_one_webhook_and_one_push_per_browser_once():
    async def body() -> None:
        parts = Parts()
        record, events = _deadline_game()
        seat = record.state.clock.seat
        player = record.player_ids[seat]
        for n in range(2):
            await parts.corr.subscribe(ANONYMOUS, player, f"https://push.example/{n}", KEYS)
        change = relayed_change(record, encode_events(events), {TURN_WAITS: turn_waits})
        assert TURN_WAITS in change.kinds
        await parts.notices.react(change)
        await parts.notices.react(change)  # relayed again (at least once): the same ids
        ids = {m.id for m in parts.told}
        assert len(ids) == 1
        body_ = msgspec.json.decode(parts.told[0].body)
        assert body_["type"] == "your_turn"
        assert body_["data"] == {
            "game_id": record.id, "seat": seat, "player_id": player,
            "deadline": body_["data"]["deadline"],
        }  # fmt: skip
        assert await parts.queue.backlog() == 2  # one push per browser, queued once

    asyncio.run(body())


def test_nothing_is_queued_for_a_player_watching_the_game():
    async def body() -> None:
        parts = Parts()
        record, events = _deadline_game()
        seat = record.state.clock.seat
        await parts.corr.subscribe(
            ANONYMOUS, record.player_ids[seat], "https://push.example/0", KEYS
        )
        await parts.presence.enter(record.id, seat, "stream", NOW + 30)
        await parts.notices.react(relayed_change(record, encode_events(events)))
        assert parts.told == []
        assert await parts.queue.backlog() == 0
        assert parts.notices.skipped == 1

    asyncio.run(body())


class Sender:
    public_key = "k"

    def __init__(self, status: int | None) -> None:
        self.status = status
        self.sent: list[bytes] = []

    async def send(self, subscription, body: bytes, ttl: int) -> int:
        self.sent.append(body)
        if self.status is None:
            raise EndpointRefused("push.example resolves to 10.0.0.1")
        return self.status


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (201, "done"),
        (410, "forgotten"),
        (404, "forgotten"),
        (400, "set aside"),
        (302, "set aside"),  # a redirect, not followed
        (503, "again"),
        (None, "forgotten and set aside"),  # an endpoint the sender refuses to post to
    ],
)
def test_the_push_handler_on_each_answer_of_the_push_service(status, outcome):
    async def body() -> None:
        parts = Parts()
        record, events = _deadline_game()
        seat = record.state.clock.seat
        player = record.player_ids[seat]
        await parts.corr.subscribe(ANONYMOUS, player, "https://push.example/0", KEYS)
        await parts.notices.react(relayed_change(record, encode_events(events)))
        sender = Sender(status)
        delivery = PushDelivery(parts.queue, parts.players, sender, parts.corr.forget)
        [job] = await parts.queue.claim(NOW, 30, 10)
        if outcome.endswith("set aside"):
            with pytest.raises(PermanentFailure):
                await delivery.handle(job)
        elif outcome == "again":
            with pytest.raises(RuntimeError):
                await delivery.handle(job)
        else:
            assert await delivery.handle(job) is None
        held = (await parts.players.load_player(player)).subscriptions
        assert len(held) == (0 if outcome.startswith("forgotten") else 1)
        payload = msgspec.json.decode(sender.sent[0])
        assert payload["url"] == f"/app/#/games/{record.id}"

    asyncio.run(body())


def test_settings_group_reads_its_variables():
    s = Settings.from_env({"TEN_VACATION_DAYS": "12", "TEN_PUSH_ALLOW_HTTP_LOOPBACK": "true"})
    assert (s.correspondence.vacation_days, s.correspondence.push_allow_http_loopback) == (12, True)
    with pytest.raises(ValueError, match="TEN_VAPID_SUBJECT"):
        Settings.from_env({"TEN_VAPID_SUBJECT": "operator"})
