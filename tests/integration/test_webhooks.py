"""Webhooks delivered to a real receiver on loopback (service.reactions.webhooks, infra.webhook_outbox).

The receiver is a small HTTP server on a free port, in a thread of the test: it checks every
request with the Standard Webhooks package's own verifier (`Webhook(secret).verify`), as a
platform would, and records what it got. The outboxes are the memory one and the Redis one
on the real Redis (a logical database of this test's own: `claim_redis_db`). The delivery
worker's clock is injected (it starts at the real time, so that the receiver's verifier,
which reads the real clock, accepts the signatures), so retries and leases take no waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from msgspec.structs import replace

from domain.game.engine import take_over
from infra.observability.metrics import Metrics
from infra.queues import MemoryQueue, RedisQueue
from infra.redis_client import connect
from infra.webhook_sender import HttpSender
from service.bootstrap import reaction_table
from service.core.ports import StoreUnavailable
from service.games.use_cases import encode_events
from service.reactions.relay import Relay, relayed_change, saved_change
from service.reactions.webhook_delivery import WebhookOutbox
from service.reactions.webhooks import Webhooks, messages_for
from tests.servers import ROOT, wait_until
from tests.support.aio import bounded, run_without_waiting
from tests.support.archive import claim_redis_db
from tests.support.games import play_to_end, started
from tests.support.webhooks import SECRET, Receiver

# the documented Redis layout (infra/webhook_outbox.py)
KEYS = [
    f"{{ten:q:webhooks}}:{name}"
    for name in ("jobs", "due", "token", "fails", "quarantine", "why", "done")
]


# ---------------------------------------------------------------- the receiver
# (`receiver`, listening: tests/integration/conftest.py)


@pytest.fixture
def down() -> Iterator[Receiver]:
    """A receiver not listening yet (connections refused); `start()` brings it up."""
    found = Receiver()
    try:
        yield found
    finally:
        found.stop()


# ---------------------------------------------------------------- outboxes, clocks, facts


@contextlib.contextmanager
def webhook_db(redis_url: str) -> Iterator[str]:
    """A Redis database of this test's own, its webhook keys deleted before and after."""
    with claim_redis_db(redis_url) as (url, client):
        client.delete(*KEYS)
        try:
            yield url
        finally:
            client.delete(*KEYS)


@pytest.fixture(params=["memory", "redis"])
def outbox_url(request: pytest.FixtureRequest, redis_url: str) -> Iterator[str | None]:
    """None: the memory outbox; else the URL of a Redis database of this test's own."""
    if request.param == "memory":
        yield None
        return
    with webhook_db(redis_url) as url:
        yield url


@pytest.fixture
def redis_db(redis_url: str) -> Iterator[str]:
    with webhook_db(redis_url) as url:
        yield url


@contextlib.asynccontextmanager
async def opened(url: str | None) -> AsyncIterator[Any]:
    if url is None:
        yield WebhookOutbox(MemoryQueue("webhooks"))
        return
    client = connect(url)
    try:
        yield WebhookOutbox(RedisQueue(client, "webhooks"))
    finally:
        await client.aclose()


class Clock:
    """Starts at the real time (whole seconds: sums of the backoffs stay exact)."""

    def __init__(self, offset: float = 0.0) -> None:
        self.now = float(int(time.time() + offset))

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# the counters these tests read (deltas: every test adds to them)
METRICS = Metrics()


def hooks_for(
    outbox: Any, *urls: str, clock: Any = None, client: Any = None, **options: Any
) -> Webhooks:
    options = {
        "timeout": 3.0,
        "max_backoff": 8.0,
        "jitter": lambda: 0.5,
        "concurrency": 100,
        **options,
    }
    sender = HttpSender(SECRET, timeout=options["timeout"], client=client)
    return Webhooks(outbox, urls, sender, clock=clock or Clock(), metrics=METRICS, **options)


def facts(games: int) -> list[tuple[Any, Any, list]]:
    """(old, new, events) of stored changes: per game, its start and a seat taken over,
    then its end (finished for odd games, aborted for even ones)."""
    record, events = started()
    state, taken = take_over(record.state, 1, "timeouts")
    over = replace(record, state=state, updated_at=record.updated_at + 1)
    before, after, last = play_to_end(over)
    found = []
    for i in range(games):
        game = {"id": f"{i:020x}"}
        g0, g1 = replace(record, **game), replace(over, **game)
        found += [(None, g0, events), (g0, g1, taken)]
        if i % 2:
            found.append((replace(before, **game), replace(after, **game), last))
        else:
            found.append((g1, replace(g1, aborted=True, updated_at=g1.updated_at + 2), []))
    return found


def expected(changes: list[tuple[Any, Any, list]]) -> dict[str, bytes]:
    return {m.id: m.body for change in changes for m in messages_for(*change)}


def sample(name: str, **labels: str) -> float:
    METRICS.flush()
    return METRICS.registry.get_sample_value(name, labels) or 0.0


async def tell(hooks: Webhooks, old: Any, new: Any, events: Any) -> None:
    """What the relay does with a stored change (service.reactions.relay): the webhooks' reaction
    when the reaction table lists it for a kind of the change (the relay hands the game as
    stored and its events not relayed yet)."""
    stored = encode_events(events)
    if Relay(None, None, reaction_table(webhooks=hooks)).durable_for(  # type: ignore[arg-type]
        saved_change(old, new, stored).kinds
    ):
        await hooks.react(relayed_change(new, stored))


async def drain(hooks: Webhooks, clock: Clock, step: float, rounds: int) -> int:
    """Run the worker `rounds` times, the clock `step` seconds further each time."""
    tried = 0
    for _ in range(rounds):
        tried += await hooks.run_once()
        clock.advance(step)
    return tried


# ---------------------------------------------------------------- delivery


def test_every_message_arrives_once_signed_and_verified(outbox_url, receiver):
    changes = facts(3)
    want = expected(changes)
    assert len(want) == 9
    delivered = sample("ten_webhook_deliveries_total", outcome="delivered")

    async def body() -> None:
        async with opened(outbox_url) as outbox:
            hooks = hooks_for(outbox, receiver.url)
            for change in changes:
                await tell(hooks, *change)
            assert await outbox.backlog() == 9
            assert await hooks.run_once() == 9
            assert await hooks.run_once() == 0
            assert await outbox.backlog() == 0
            await hooks.close()

    asyncio.run(body())
    assert receiver.ids() == Counter(want.keys())  # each once
    assert all(r.status == 204 for r in receiver.received)
    for got in receiver.accepted():
        assert got.body == want[got.id]
        assert got.headers["content-type"] == "application/json"
        assert json.loads(got.body)["data"]["game_id"] in got.id
    assert sample("ten_webhook_deliveries_total", outcome="delivered") - delivered == 9
    assert sample("ten_webhook_backlog") == 0


def test_the_same_fact_queued_again_is_one_delivery(outbox_url, receiver):
    changes = facts(1)

    async def body() -> None:
        async with opened(outbox_url) as outbox:
            hooks = hooks_for(outbox, receiver.url)
            for _ in range(2):
                for change in changes:
                    await tell(hooks, *change)
            assert await outbox.backlog() == 3
            await hooks.run_once()
            # relayed again after delivery (a relay worker took the mark over): not sent again
            await tell(hooks, None, changes[-1][1], [])
            assert await outbox.backlog() == 0
            assert await hooks.run_once() == 0
            await hooks.close()

    asyncio.run(body())
    assert receiver.ids() == Counter(expected(changes).keys())


def test_a_delivery_that_left_is_remembered_for_an_hour(outbox_url, receiver):
    """Within the hour after a delivery left the outbox, the same fact is not queued
    again; after it, it may be (a receiver de-duplicates on the id)."""
    messages = messages_for(*facts(1)[0])
    now = 1_760_000_000.0

    async def body() -> None:
        async with opened(outbox_url) as outbox:
            assert await outbox.put(messages, [receiver.url], now) == 1
            [claimed] = (await outbox.claim(now, 30.0, 10)).deliveries
            await outbox.done(claimed.id, claimed.token, now)
            assert await outbox.put(messages, [receiver.url], now + 3599) == 0
            assert await outbox.put(messages, [receiver.url, "http://127.0.0.1:9/"], now) == 1
            [other] = (await outbox.claim(now, 30.0, 10)).deliveries
            await outbox.done(
                other.id, other.token, now + 3601
            )  # trims what left over an hour before
            assert await outbox.put(messages, [receiver.url], now + 3601) == 1
            assert await outbox.backlog() == 1

    asyncio.run(body())


def test_a_receiver_down_for_a_while_then_up_gets_everything(outbox_url, down, receiver, caplog):
    """Two endpoints: one down for a while (then up, losing some acknowledgements: those
    come again, with the same id and body), one up all along (never held up by the other)."""
    changes = facts(4)
    want = expected(changes)
    retries = sample("ten_webhook_retries_total")
    down.lose_ack = set(list(want)[:3])
    clock = Clock()
    caplog.set_level(logging.INFO, logger="ten.webhooks")

    async def body() -> None:
        async with opened(outbox_url) as outbox:
            hooks = hooks_for(outbox, down.url, receiver.url, clock=clock)
            for change in changes:
                await tell(hooks, *change)
            assert await drain(hooks, clock, 8.0, 5) == 2 * 12 + 4 * 12  # the down one: 5 tries
            failing = [r for r in caplog.records if "failed" in r.getMessage()]
            assert len(failing) == 1  # once per failure streak, not once per try
            assert receiver.ids() == Counter(want.keys())  # the one up: everything, at once
            assert await outbox.backlog() == 12  # nothing lost while the other is down
            down.start()
            await drain(hooks, clock, 8.0, 4)
            assert await outbox.backlog() == 0
            await hooks.close()

    asyncio.run(body())
    assert set(down.ids()) == set(want)  # every message, none lost
    assert {i for i, n in down.ids().items() if n > 1} == down.lose_ack  # duplicates: only these
    for got in down.accepted():
        assert got.body == want[got.id]  # a duplicate is the same message
    assert receiver.ids() == Counter(want.keys())
    assert sample("ten_webhook_retries_total") - retries == 12 * 5 + 3
    assert "not-logged" not in caplog.text  # a URL's path and query (tokens) stay out of logs
    assert any("answering again" in r.getMessage() for r in caplog.records)


def test_retries_back_off_exponentially(outbox_url, down):
    clock = Clock()
    record, events = started()

    async def body() -> None:
        async with opened(outbox_url) as outbox:
            hooks = hooks_for(outbox, down.url, clock=clock, max_backoff=4.0)
            await tell(hooks, None, record, events)
            start = clock.now
            tries = []
            for at in (0.0, 0.99, 1.0, 2.99, 3.0, 6.99, 7.0, 10.99, 11.0):
                clock.now = start + at
                if await hooks.run_once():
                    tries.append(at)
            assert tries == [0.0, 1.0, 3.0, 7.0, 11.0]  # waits of 1, 2, 4, then the cap (4)
            await hooks.close()

    asyncio.run(body())


def test_a_message_older_than_the_retention_is_given_up(outbox_url, down, caplog):
    record, events = started()
    expired = sample("ten_webhook_deliveries_total", outcome="expired")
    clock = Clock()

    async def body() -> None:
        async with opened(outbox_url) as outbox:
            hooks = hooks_for(outbox, down.url, clock=clock, retention=20)
            await tell(hooks, None, record, events)
            await drain(hooks, clock, 8.0, 3)  # tried at 0, 8, 16 s
            assert await outbox.backlog() == 1
            await drain(hooks, clock, 8.0, 1)  # at 24 s: older than 20 s
            assert await outbox.backlog() == 0
            down.start()
            assert await drain(hooks, clock, 8.0, 2) == 0
            await hooks.close()

    asyncio.run(body())
    assert sample("ten_webhook_deliveries_total", outcome="expired") - expired == 1
    assert down.received == []
    assert f"msg_{record.id}_started" in caplog.text
    assert "given up" in caplog.text


def test_a_message_refused_for_good_is_quarantined_and_the_others_go_through(
    outbox_url, receiver, caplog
):
    """A 4xx that will not pass (422 here) sets that delivery aside at once, with its reason,
    logged once and counted `rejected`; every other message is delivered, and the refused
    one is never tried again until it is put back, then it goes through."""
    changes = facts(3)
    want = expected(changes)
    poisoned = sorted(want)[0]
    receiver.refuse.add(poisoned)
    rejected = sample("ten_webhook_deliveries_total", outcome="rejected")
    clock = Clock()

    async def body() -> None:
        async with opened(outbox_url) as outbox:
            hooks = hooks_for(outbox, receiver.url, clock=clock)
            for change in changes:
                await tell(hooks, *change)
            await drain(hooks, clock, 10.0, 5)
            assert await outbox.backlog() == 0
            [aside] = await outbox.queue.quarantined(10)
            assert aside.id.startswith(f"{poisoned}.")
            assert "HTTP 422" in aside.reason
            assert receiver.ids() == Counter(want.keys())  # the refused one tried once
            receiver.refuse.clear()  # the platform fixed its side
            assert await outbox.queue.requeue(aside.id, clock.now)
            await drain(hooks, clock, 10.0, 1)
            assert await outbox.queue.quarantined(10) == []
            await hooks.close()

    asyncio.run(body())
    assert sample("ten_webhook_deliveries_total", outcome="rejected") - rejected == 1
    assert receiver.ids()[poisoned] == 2
    assert len([r for r in caplog.records if "quarantined" in r.getMessage()]) == 1


def test_a_tampered_or_replayed_delivery_is_refused_by_the_verifier(receiver):
    """A captured delivery with its body changed, or replayed later than five minutes with
    its signature (or with its timestamp freshened), fails the receiver's verification."""
    record, events = started()
    stale = Clock(offset=-6 * 60)  # signed six minutes ago: a capture replayed now

    async def body() -> None:
        for clock in (Clock(), stale):
            outbox = WebhookOutbox(MemoryQueue("webhooks"))
            hooks = hooks_for(outbox, receiver.url, clock=clock)
            await tell(hooks, None, record, events)
            await hooks.run_once()
            await hooks.close()

    asyncio.run(body())
    fresh, replayed = receiver.received
    assert fresh.verified
    assert fresh.status == 204
    assert not replayed.verified
    assert replayed.status == 400
    assert replayed.error == "Message timestamp too old"
    tampered = fresh.body.replace(b'"name":"ann"', b'"name":"mallory"')
    assert tampered != fresh.body
    signed = ("webhook-id", "webhook-timestamp", "webhook-signature", "content-type")
    headers = {name: fresh.headers[name] for name in signed}
    old = {name: replayed.headers[name] for name in signed}
    with httpx.Client() as client:
        answers = [
            client.post(receiver.url, content=tampered, headers=headers).status_code,
            client.post(
                receiver.url,
                content=replayed.body,
                headers={**old, "webhook-timestamp": str(int(time.time()))},
            ).status_code,
        ]
    assert answers == [400, 400]
    assert [r.error for r in receiver.received[2:]] == ["No matching signature found"] * 2


# ---------------------------------------------------------------- replicas, claims, failures


def test_concurrent_claims_take_each_delivery_once(outbox_url, receiver):
    """Many claimers at once (two Redis clients: two replicas): every due delivery goes to
    exactly one of them; none again until its lease ends; then every one again."""
    changes = facts(20)
    now = time.time()

    async def body() -> None:
        async with opened(outbox_url) as first, opened(outbox_url) as second:
            if outbox_url is None:
                second = first  # noqa: PLW2901 - one process: one memory outbox
            await first.put(
                [m for change in changes for m in messages_for(*change)], [receiver.url], now
            )
            claims = await asyncio.gather(
                *(((first, second)[i % 2]).claim(now, 30.0, 4) for i in range(40))
            )
            ids = [d.id for claimed in claims for d in claimed.deliveries]
            assert len(ids) == len(set(ids)) == 60
            assert {d.attempt for c in claims for d in c.deliveries} == {1}
            assert (await second.claim(now + 29.9, 30.0, 100)).deliveries == []
            again = await first.claim(now + 30.0, 30.0, 100)
            assert {d.id for d in again.deliveries} == set(ids)
            assert {d.attempt for d in again.deliveries} == {1}  # a lapsed claim failed nothing
            assert again.backlog == 60
            # a claim that lapsed cannot settle the delivery any more; the new one can
            stale = next(c for c in claims if c.deliveries).deliveries[0]
            new = next(d for d in again.deliveries if d.id == stale.id)
            assert new.token != stale.token
            assert not await first.done(stale.id, stale.token, now)
            assert await first.done(new.id, new.token, now)

    asyncio.run(body())


def test_two_workers_on_one_redis_outbox_deliver_each_message_once(redis_db, receiver):
    changes = facts(50)
    want = expected(changes)
    receiver.delay = 0.01

    async def worker(name: str, stop: asyncio.Event) -> None:
        async with opened(redis_db) as outbox:
            client = httpx.AsyncClient(headers={"x-worker": name}, timeout=3.0)
            hooks = hooks_for(outbox, receiver.url, client=client, concurrency=8, poll=0.05)
            if name == "a":
                for change in changes:
                    await tell(hooks, *change)
            task = asyncio.create_task(hooks.run_forever())
            await stop.wait()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await hooks.close()

    async def body() -> None:
        stop = asyncio.Event()
        workers = [asyncio.create_task(worker(name, stop)) for name in "ab"]
        deadline = time.monotonic() + 30
        while len(receiver.ids()) < len(want) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        stop.set()
        await bounded(asyncio.gather(*workers), 30, "the two workers stopping")

    run_without_waiting(body())
    assert receiver.ids() == Counter(want.keys())  # every one, each once
    by_worker = Counter(r.headers["x-worker"] for r in receiver.received)
    assert set(by_worker) == {"a", "b"}  # both took part


WORKER = """
import asyncio, sys
from infra.redis_client import connect
from infra.queues import RedisQueue
from infra.webhook_sender import HttpSender
from service.reactions.webhooks import WebhookOutbox, Webhooks

async def main():
    url, endpoint, secret = sys.argv[1:4]
    outbox = WebhookOutbox(RedisQueue(connect(url), "webhooks"))
    sender = HttpSender(secret, timeout=60.0)
    await Webhooks(outbox, [endpoint], sender, timeout=60.0, lease=30.0).run_forever()

asyncio.run(main())
"""


def test_a_worker_killed_holding_claims_is_taken_over_after_the_lease(redis_db):
    """A replica's worker (its own process) claims three deliveries and hangs on the
    receiver; it is SIGKILLed. Another worker gets them only once the lease (30 s) ends."""
    changes = facts(1)
    want = expected(changes)
    receiver = Receiver().start()
    receiver.mode = "hang"
    process = None
    try:

        async def queue() -> None:
            async with opened(redis_db) as outbox:
                hooks = hooks_for(outbox, receiver.url)
                for change in changes:
                    await tell(hooks, *change)
                await hooks.close()

        asyncio.run(queue())
        process = subprocess.Popen(
            [sys.executable, "-c", WORKER, redis_db, receiver.url, SECRET],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        wait_until(lambda: len(receiver.received) == 3, 30, "the first worker's requests")
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        receiver.mode = "ok"
        receiver.release.set()
        clock = Clock()

        async def take_over_claims() -> None:
            async with opened(redis_db) as outbox:
                hooks = hooks_for(outbox, receiver.url, clock=clock)
                assert await hooks.run_once() == 0  # still held by the dead worker's lease
                clock.advance(31.0)
                assert await hooks.run_once() == 3
                assert await outbox.backlog() == 0
                await hooks.close()

        asyncio.run(take_over_claims())
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(10)
        receiver.stop()
    assert receiver.ids() == Counter(dict.fromkeys(want, 2))  # the hung try, then the real one
    assert [r.status for r in receiver.received[3:]] == [204] * 3


def test_an_unreachable_outbox_fails_the_reaction_and_the_worker_lives_on(caplog, receiver):
    """The reaction raises (the relay keeps the game's mark and tries again later: nothing is
    lost); the delivery worker logs the outbox's failure once and keeps retrying."""
    record, events = started()
    held = socket.socket()  # bound, not listening: connections refused
    held.bind(("127.0.0.1", 0))
    nowhere = f"redis://127.0.0.1:{held.getsockname()[1]}/0"

    async def body() -> None:
        async with opened(nowhere) as outbox:
            hooks = hooks_for(outbox, receiver.url, poll=0.02)
            with pytest.raises(StoreUnavailable):
                await tell(hooks, None, record, events)
            task = asyncio.create_task(hooks.run_forever())
            await asyncio.sleep(0.5)
            assert not task.done()  # the worker lives on, retrying
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await hooks.close()

    try:
        asyncio.run(body())
    finally:
        held.close()
    assert len([r for r in caplog.records if "webhooks unavailable" in r.getMessage()]) == 1
    assert receiver.received == []


def test_no_endpoint_configured_does_nothing():
    record, events = started()

    async def body() -> None:
        hooks = Webhooks(None)
        assert not hooks.enabled
        await hooks.react(relayed_change(record, encode_events(events)))  # no outbox: nothing
        await asyncio.wait_for(hooks.run_forever(), 1)  # returns at once
        assert await hooks.run_once() == 0
        await hooks.close()

    asyncio.run(body())
