"""Turn notices: a correspondence game that starts waiting on a player who is not watching
it tells them, by a webhook to the platform (`your_turn`) and a Web Push message to every
browser they subscribed.

- `TurnNotices` is a durable reaction of the relay (`service.reactions.relay`), listed for
  `TURN_WAITS` (a change that handed a deadline game's decision to a human seat): at least
  once, whatever process dies where. It asks the presence port whether the seat's player
  watches the game (an open event stream of theirs on it, on any replica): if so, nothing
  is sent. Else it queues the webhook (its id fixed by the game, the version that handed
  the turn over and the seat: queued again, it is one message) and one push job per
  subscription in the `push` leased queue (ids fixed the same way, remembered once sent).
- `PushDelivery` is the handler of that queue's worker: it encrypts and signs the message
  for its subscription (the `PushSender` port: `infra.push_sender`, pywebpush) and posts it;
  a subscription the push service says is gone (404, 410) is deleted; a refusal for good
  (another 4xx, a redirect: none is followed) is set aside at once; a subscription whose
  endpoint the sender refuses to post to (`EndpointRefused`: its name resolves to an
  address of this network, `service.correspondence.endpoints`) is deleted and its job set
  aside; anything else is tried again with backoff, a bounded
  number of times (`TEN_PUSH_TRIES`), then set aside (`python -m service.cli jobs list push`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Literal, Protocol

import msgspec

from service.correspondence.records import PlayerStore, Presence, PushSubscription
from service.correspondence.turns import handed_at, waiting_seat
from service.jobs.worker import Job, LeasedQueue, PermanentFailure, Worker
from service.reactions.relay import Change
from service.reactions.webhook_delivery import Message
from service.reactions.webhook_payloads import YourTurnData, YourTurnWebhook
from service.reactions.webhooks import message

log = logging.getLogger("ten.push")

QUEUE = "push"
SENT_WINDOW = 3600.0  # seconds a push sent is remembered (the same job queued again: ignored)
GONE = frozenset((404, 410))  # the push service no longer knows the subscription
AGAIN = frozenset((408, 409, 425, 429))  # refusals worth trying again
CONCURRENCY = 16  # pushes in flight per replica
# seconds a claimed push is held: past the sender's timeout; a replica that dies holding one
# leaves it to another this much later
LEASE = 30.0


class PushMessage(msgspec.Struct, frozen=True, kw_only=True):
    """What a browser's service worker receives (encrypted): no text, the worker words it."""

    type: Literal["your_turn"] = "your_turn"
    game_id: str
    seat: int
    deadline: datetime | None
    url: str


class EndpointRefused(Exception):
    """The sender will not post to this subscription's endpoint, now or later (its host
    resolves to an address the service does not connect to)."""


class PushSender(Protocol):
    """Encrypts a message for one subscription (aes128gcm) and posts it, signed (VAPID)."""

    public_key: str  # the application server key browsers subscribe with (base64url)

    async def send(self, subscription: PushSubscription, body: bytes, ttl: int) -> int:
        """The push service's HTTP status (a redirect is answered, not followed); raises
        `EndpointRefused` for an endpoint it will not post to, anything else when the push
        service does not answer (the job's failure: tried again, a bounded number of
        times)."""


class _PushJob(msgspec.Struct, frozen=True, array_like=True):
    player_id: str
    subscription_id: str
    body: bytes
    queued_at: float


_job_encoder = msgspec.msgpack.Encoder()
_job_decoder = msgspec.msgpack.Decoder(_PushJob)
_json = msgspec.json.Encoder()


def game_url(game_id: str) -> str:
    return f"/app/#/games/{game_id}"


class TurnNotices:
    """The relay's durable reaction to `TURN_WAITS` (see the module docstring)."""

    name = "turn_notices"
    durable: Literal[True] = True

    def __init__(
        self,
        presence: Presence,
        players: PlayerStore,
        queue: LeasedQueue,
        *,
        announce: Callable[[Sequence[Message]], Awaitable[None]] | None = None,
        wake: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.presence = presence
        self.players = players
        self.queue = queue
        self.announce = announce
        self.wake = wake
        self.clock = clock
        self.skipped = 0  # turns told nobody: their player was watching

    async def react(self, change: Change) -> None:
        record = change.new
        seat = waiting_seat(record)
        if seat is None:
            return
        version = handed_at(change.events, seat)
        if version is None:
            return
        now = self.clock()
        if await self.presence.watching(record.id, seat, now):
            self.skipped += 1
            return
        state = record.state
        assert state is not None
        assert state.clock is not None
        ids = record.player_ids
        player_id = ids[seat] if seat < len(ids) else None
        at = state.clock.deadline
        deadline = None if at is None else datetime.fromtimestamp(at, UTC)
        notice = f"{record.id}_turn_{version}_{seat}"
        if self.announce is not None:
            data = YourTurnData(
                game_id=record.id, seat=seat, player_id=player_id, deadline=deadline
            )
            payload = YourTurnWebhook(timestamp=datetime.fromtimestamp(now, UTC), data=data)
            await self.announce([message(f"msg_{notice}", payload)])
        if player_id is None:
            return
        held = await self.players.load_player(player_id)
        if held is None or not held.subscriptions:
            return
        body = _json.encode(
            PushMessage(game_id=record.id, seat=seat, deadline=deadline, url=game_url(record.id))
        )
        for subscription in held.subscriptions:
            job = _PushJob(player_id, subscription.id, body, now)
            await self.queue.put(
                f"{notice}.{subscription.id}", _job_encoder.encode(job), now, keep=True
            )
        if self.wake is not None:
            self.wake()


class PushDelivery:
    """The `push` queue's handler (see the module docstring); `worker` makes its worker."""

    def __init__(
        self,
        queue: LeasedQueue,
        players: PlayerStore,
        sender: PushSender,
        forget: Callable[[str, str], Awaitable[None]],
        *,
        ttl: int = 24 * 3600,
        tries: int = 5,
    ) -> None:
        self.queue = queue
        self.players = players
        self.sender = sender
        self.forget = forget  # (player id, subscription id): the subscription is gone
        self.ttl = ttl
        self.tries = tries

    async def handle(self, job: Job) -> None:
        stored = _job_decoder.decode(job.payload)
        held = await self.players.load_player(stored.player_id)
        subscription = None
        if held is not None:
            subscription = next(
                (s for s in held.subscriptions if s.id == stored.subscription_id), None
            )
        if subscription is None:
            return  # unsubscribed meanwhile: nothing to send
        try:
            status = await self.sender.send(subscription, stored.body, self.ttl)
        except EndpointRefused as refused:
            await self.forget(stored.player_id, stored.subscription_id)
            raise PermanentFailure(f"its endpoint is refused: {refused}") from None
        if 200 <= status < 300:
            return
        if status in GONE:
            await self.forget(stored.player_id, stored.subscription_id)
            return
        if 300 <= status < 400 or (400 <= status < 500 and status not in AGAIN):
            raise PermanentFailure(f"the push service refused it: {status}")
        raise RuntimeError(f"the push service answered {status}")

    def worker(self, **options: object) -> Worker:
        return Worker(
            self.queue,
            self.handle,
            max_failures=self.tries,
            concurrency=CONCURRENCY,
            lease=LEASE,
            remember_done=SENT_WINDOW,
            **options,  # type: ignore[arg-type]
        )
