"""The webhooks' durable outbox and their delivery (`service.reactions.webhooks` queues them).

- `WebhookOutbox`: the `webhooks` leased queue of `service.jobs.worker` (on Redis for every
  replica, in memory for the embedded store), one delivery per (message, endpoint). The
  endpoints are the configured `TEN_WEBHOOK_URLS` only, never a URL a request names.
- `DeliveryWorker`, in every replica, is the handler of a `service.jobs.worker.Worker`: it
  claims due deliveries for a lease (another replica takes a delivery over once its lease
  ends: the one holding it died), POSTs each one signed for this attempt (`webhook-id`,
  `webhook-timestamp`, `webhook-signature`: a receiver refuses a timestamp more than 5
  minutes off, so a replayed request is detectable), done on a 2xx, else tried again after
  an exponential backoff with jitter (capped at `TEN_WEBHOOK_MAX_BACKOFF`) until the message
  is older than `TEN_WEBHOOK_RETENTION`. Then, or at once when the endpoint refuses it for
  good (a 4xx other than 408, 409, 425, 429), the delivery is quarantined (counted `expired`
  or `rejected`, logged once; `python -m service.cli jobs list webhooks`), and the
  deliveries behind it go on. No order between messages is promised: a receiver orders by
  `timestamp`.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol
from urllib.parse import urlsplit

import msgspec

from service.jobs.worker import Job, LeasedQueue, PermanentFailure, Worker

log = logging.getLogger("ten.webhooks")

FIRST_BACKOFF = 1.0  # seconds before the second try; doubling from there
STORE_BACKOFF_CAP = 5.0  # seconds between two looks at an outbox that does not answer
POLL = 1.0  # seconds between two looks at the outbox with nothing queued here meanwhile
CONCURRENCY = 16  # deliveries in flight per replica


class Message(NamedTuple):
    """A webhook to send: its id (the same for the same fact), type and JSON body."""

    id: str
    type: str
    body: bytes


# ---------------------------------------------------------------- the outbox


SENT_WINDOW = 3600.0  # seconds a delivery that succeeded is remembered (not queued again)


def delivery_id(message_id: str, url: str) -> str:
    """One delivery: a message to one endpoint (the URL hashed: bounded, nothing secret)."""
    return f"{message_id}.{hashlib.sha256(url.encode()).hexdigest()[:16]}"


class Delivery(NamedTuple):
    """A claimed delivery: `attempt` counts its tries so far, this one included; `token`
    the claim's (only its holder settles it)."""

    id: str
    message_id: str
    type: str
    url: str
    body: bytes
    created_at: float  # when the message was queued (unix seconds)
    attempt: int
    token: int = 0


class Claimed(NamedTuple):
    deliveries: list[Delivery]
    backlog: int  # deliveries pending in the outbox (claimed ones included)


class _Stored(msgspec.Struct, frozen=True, array_like=True):
    message_id: str
    type: str
    url: str
    body: bytes
    queued_at: float


_stored_encoder = msgspec.msgpack.Encoder()
_stored_decoder = msgspec.msgpack.Decoder(_Stored)


class WebhookOutbox:
    """Deliveries waiting to succeed: one job per (message, endpoint) in a leased queue
    (`service.jobs.worker`; on Redis shared by every replica: infra.webhook_outbox), kept until it
    succeeds or is quarantined. The same delivery queued again while queued, or within an
    hour after it succeeded, is left as it is."""

    def __init__(self, queue: LeasedQueue, *, sent_window: float = SENT_WINDOW) -> None:
        self.queue = queue
        self.sent_window = sent_window

    async def put(self, messages: Sequence[Message], urls: Sequence[str], now: float) -> int:
        """Queue each message for each URL, due at `now`; the number of deliveries added."""
        added = 0
        for message in messages:
            for url in urls:
                stored = _Stored(message.id, message.type, url, message.body, now)
                key = delivery_id(message.id, url)
                added += bool(
                    await self.queue.put(key, _stored_encoder.encode(stored), now, keep=True)
                )
        return added

    @staticmethod
    def delivery(job: Job) -> Delivery:
        stored = _stored_decoder.decode(job.payload)
        return Delivery(
            job.id, stored.message_id, stored.type, stored.url, stored.body,
            stored.queued_at, job.failures + 1, job.token,
        )  # fmt: skip

    async def claim(self, now: float, lease: float, limit: int) -> Claimed:
        """Up to `limit` deliveries due at `now`, each claimed for `lease` seconds."""
        jobs = await self.queue.claim(now, lease, limit)
        return Claimed([self.delivery(job) for job in jobs], await self.queue.backlog())

    async def done(self, delivery_id: str, token: int, now: float) -> bool:
        """The delivery succeeded: it leaves the outbox (remembered for `sent_window`)."""
        return await self.queue.done(delivery_id, token, now=now, remember=self.sent_window)

    async def backlog(self) -> int:
        return await self.queue.backlog()


# ---------------------------------------------------------------- delivery


def origin(url: str) -> str:
    """What the logs say of an endpoint: scheme, host and port (never a path or query,
    which may carry a token)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"


class _Streaks:
    """Logs a failure once when a streak of them begins, and once when it ends."""

    def __init__(self) -> None:
        self._failing: dict[str, int] = {}

    def failed(self, key: str, message: str, *args: object) -> None:
        count = self._failing.get(key, 0)
        self._failing[key] = count + 1
        if count == 0:
            log.warning(message, *args)

    def ok(self, key: str, message: str) -> None:
        count = self._failing.pop(key, 0)
        if count:
            log.info(message, count)


class Sender(Protocol):
    """Sends one attempt of a delivery (infra.webhook_sender: signed per Standard Webhooks,
    over HTTP)."""

    async def send(
        self, url: str, message_id: str, body: bytes, now: float
    ) -> tuple[str | None, bool]:
        """(None, False) when the endpoint took it (a 2xx); else what went wrong and whether
        it is for good (the endpoint will never take this request)."""

    async def close(self) -> None: ...


class DeliveryFailed(Exception):
    """An attempt failed in a way that may pass (the endpoint down, a 5xx, a timeout)."""


class DeliveryWorker:
    """Delivers what the outbox holds: the handler of a `service.jobs.worker.Worker` over the
    outbox's queue (see the module docstring). An endpoint failing is a failure of that
    delivery (tried again after a backoff); a delivery older than `retention`, or refused
    for good (a 4xx other than 408, 409, 425 and 429), is quarantined."""

    def __init__(
        self,
        outbox: WebhookOutbox,
        sender: Sender,
        *,
        timeout: float = 10.0,
        max_backoff: float = 600.0,
        retention: float = 3 * 24 * 3600,
        lease: float | None = None,
        first_backoff: float = FIRST_BACKOFF,
        poll: float = POLL,
        concurrency: int = CONCURRENCY,
        clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
        metrics: Any = None,
    ) -> None:
        self.outbox = outbox
        self.sender = sender
        self.retention = retention
        self.clock = clock
        self.metrics = metrics
        self._streaks = _Streaks()
        self.worker = Worker(
            outbox.queue,
            self.handle,
            # an attempt takes `timeout` at most: a claim outlives it with room to spare
            lease=lease if lease is not None else 2 * timeout + 10,
            batch=concurrency,
            concurrency=concurrency,
            poll=poll,
            max_failures=None,  # the retention decides
            first_backoff=first_backoff,
            max_backoff=max_backoff,
            unavailable_cap=STORE_BACKOFF_CAP,
            remember_done=outbox.sent_window,
            log_failures=False,  # logged per endpoint here, once a streak
            clock=clock,
            jitter=jitter,
            count=self._settled,
        )

    def wake(self) -> None:
        """Something was queued: look at the outbox now rather than at the next poll."""
        self.worker.wake()

    def backoff(self, attempt: int) -> float:
        """Seconds before the next try after `attempt` failed (`Worker.backoff`)."""
        return self.worker.backoff(attempt)

    async def run_once(self) -> int:
        """Claim what is due (up to `concurrency`) and try each; the number tried."""
        deliveries = await self.worker.run_once()
        if self.metrics is not None:
            self.metrics.webhook_backlog.set(await self.outbox.backlog())
        return deliveries

    async def run_forever(self) -> None:
        await self.worker.run_forever()

    async def handle(self, job: Job) -> None:
        """One attempt of a claimed delivery; raises when it failed (the worker settles)."""
        if self.metrics is not None:  # the outbox is shared: every replica sees one figure
            self.metrics.webhook_backlog.set(await self.outbox.backlog())
        delivery = self.outbox.delivery(job)
        failure, lasting = await self.sender.send(
            delivery.url, delivery.message_id, delivery.body, self.clock()
        )
        where = origin(delivery.url)
        if failure is None:
            self._count("delivered")
            self._streaks.ok(where, f"webhook endpoint {where} answering again (%d failures)")
            return
        self._count("failed")
        self._streaks.failed(
            where, "webhook endpoint %s failed (%s); retrying with backoff", where, failure
        )
        if lasting:
            self._count("rejected")
            raise PermanentFailure(f"{where} refused it: {failure}")
        if self.clock() - delivery.created_at >= self.retention:
            self._count("expired")
            raise PermanentFailure(
                f"given up after {delivery.attempt} attempts (older than "
                f"{self.retention:g} s): {failure}"
            )
        raise DeliveryFailed(failure)

    def _settled(self, queue: str, outcome: str) -> None:
        if self.metrics is not None and outcome == "retried":
            self.metrics.webhook_retries.inc()

    def _count(self, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.webhook_deliveries.labels(outcome).inc()

    async def close(self) -> None:
        await self.sender.close()
