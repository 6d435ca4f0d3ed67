"""Webhooks to the platform: `game_started`, `game_finished`, `seat_taken_over` and
`game_aborted`, signed as the Standard Webhooks spec says, delivered at least once.

- What is sent: `messages_for(old, new, events)` turns one stored change of a game into
  messages (the domain events say a game started, a seat was taken over or the game
  finished; the status says it was aborted or abandoned). Every message has an id fixed by
  the fact it reports (`msg_<game id>_finished`, `msg_<game id>_taken_<event seq>`, ...): the
  same fact queued twice is one message, and a receiver de-duplicates on `webhook-id`.
- The body is `{"type", "timestamp", "data"}` (the payload Structs below; the OpenAPI
  document shows them: `WEBHOOK_PAYLOADS`); `data.game_id` always.
- Durable outbox (`WebhookOutbox`: the `webhooks` leased queue of `service.jobs.worker`, on Redis
  for every replica, in memory for the embedded store), one delivery per (message,
  endpoint). The endpoints are the configured `TEN_WEBHOOK_URLS` only, never a URL a
  request names.
- `DeliveryWorker`, in every replica, is the handler of a `service.jobs.worker.Worker`: it claims
  due deliveries for a lease (another replica takes a delivery over once its lease ends:
  the one holding it died), POSTs each one signed for this attempt (`webhook-id`,
  `webhook-timestamp`, `webhook-signature`: a receiver refuses a timestamp more than 5
  minutes off, so a replayed request is detectable), done on a 2xx, else tried again after
  an exponential backoff with jitter (1 s, 2 s, 4 s ... capped at
  `TEN_WEBHOOK_MAX_BACKOFF`) until the message is older than `TEN_WEBHOOK_RETENTION`. Then,
  or at once when the endpoint refuses it for good (a 4xx other than 408, 409, 425, 429),
  the delivery is quarantined (counted `expired` or `rejected`, logged once; `python -m
  service.cli jobs list webhooks`), and the deliveries behind it go on. No order between
  messages is promised: a receiver orders by `timestamp`.
- `Webhooks`: the facade the composition root builds; it is one of the relay's reactions
  (`service.reactions.relay`): every change that tells the platform something is queued
  (`react`) at least once, from the game's event log, whatever process died where.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, Protocol
from urllib.parse import urlsplit

import msgspec

from domain.game.model import TimeControl
from service.core.model import GameRecord
from service.history.ranking import UnrankedReason, ranking
from service.jobs.worker import Job, LeasedQueue, PermanentFailure, Worker
from service.reactions.relay import Change

log = logging.getLogger("ten.webhooks")

FIRST_BACKOFF = 1.0  # seconds before the second try; doubling from there
STORE_BACKOFF_CAP = 5.0  # seconds between two looks at an outbox that does not answer
POLL = 1.0  # seconds between two looks at the outbox with nothing queued here meanwhile
CONCURRENCY = 16  # deliveries in flight per replica


# ---------------------------------------------------------------- payloads


class WebhookSeat(msgspec.Struct, frozen=True, kw_only=True):
    """A seat of the game as it started."""

    seat: int
    name: str
    player_id: str | None = None  # the platform's id of the seat's player; None for a bot
    bot: str | None = None  # the bot level of a bot seat


class SeatResult(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's result: rank 1 wins (ties share the rank); a player who resigned ranks
    below every one who did not and never wins."""

    seat: int
    name: str
    player_id: str | None = None
    bot: str | None = None
    rank: int
    score: int
    winner: bool
    resigned: bool = False
    taken_over: bool = False  # a bot took the seat over after timeouts at some point
    ranked: bool = False  # counts for this player's stats and the leaderboard


class GameStartedData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    seats: tuple[WebhookSeat, ...]
    time_control: TimeControl | None = None  # None: no clock


class GameFinishedData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    results: tuple[SeatResult, ...]  # in seat order
    ranked: bool  # the game counts for stats and the leaderboard (each seat: `ranked`)
    unranked_reason: UnrankedReason | None = None  # why not, when it does not


class SeatTakenOverData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    seat: int
    player_id: str | None = None
    bot: str  # the bot level that plays the seat from now on
    reason: Literal["timeouts", "resigned"]


class GameAbortedData(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    # aborted: stopped by its host or the platform; abandoned: nobody acted for TEN_IDLE_TTL
    reason: Literal["aborted", "abandoned"]


class TournamentEntrantOut(msgspec.Struct, frozen=True, kw_only=True):
    entrant: str  # the player id, or `bot:<n>` for a bot
    bot: str | None = None  # a bot's level


class TournamentStartedData(msgspec.Struct, frozen=True, kw_only=True):
    tournament_id: str
    name: str
    format: Literal["swiss", "round_robin"]
    deal_mode: Literal["duplicate", "fresh"]
    table_size: int
    rounds: int
    entrants: tuple[TournamentEntrantOut, ...]


class RoundTableOut(msgspec.Struct, frozen=True, kw_only=True):
    table: int
    game_id: str
    seats: tuple[str, ...]  # entrant ids in seat order


class RoundStartedData(msgspec.Struct, frozen=True, kw_only=True):
    tournament_id: str
    round: int
    tables: tuple[RoundTableOut, ...]
    byes: tuple[str, ...] = ()


class StandingOut(msgspec.Struct, frozen=True, kw_only=True):
    """An entrant's place in the standings (`domain.tournaments.rules.standings`)."""

    position: int
    entrant: str
    points: float
    matchpoints: float
    buchholz: float
    score: int


class TournamentFinishedData(msgspec.Struct, frozen=True, kw_only=True):
    tournament_id: str
    status: Literal["finished", "stopped"]  # stopped: by its organiser, before its last round
    rounds_played: int
    standings: tuple[StandingOut, ...]


_WEBHOOK = {"frozen": True, "kw_only": True, "tag_field": "type"}


class GameStartedWebhook(msgspec.Struct, tag="game_started", **_WEBHOOK):
    """A game started (dealt at once, or a table whose seats were taken)."""

    timestamp: datetime  # when it happened (UTC)
    data: GameStartedData


class GameFinishedWebhook(msgspec.Struct, tag="game_finished", **_WEBHOOK):
    """A game played to its end, with its results."""

    timestamp: datetime
    data: GameFinishedData


class SeatTakenOverWebhook(msgspec.Struct, tag="seat_taken_over", **_WEBHOOK):
    """A bot plays a seat from now on: its player timed out too often (they may take the
    seat back) or resigned."""

    timestamp: datetime
    data: SeatTakenOverData


class GameAbortedWebhook(msgspec.Struct, tag="game_aborted", **_WEBHOOK):
    """A game ended without results: aborted by its host or the platform, or abandoned."""

    timestamp: datetime
    data: GameAbortedData


class TournamentStartedWebhook(msgspec.Struct, tag="tournament_started", **_WEBHOOK):
    """A tournament started: its entrants are fixed (`data.tournament_id`)."""

    timestamp: datetime
    data: TournamentStartedData


class RoundStartedWebhook(msgspec.Struct, tag="round_started", **_WEBHOOK):
    """A round of a tournament was paired: its tables and their games."""

    timestamp: datetime
    data: RoundStartedData


class TournamentFinishedWebhook(msgspec.Struct, tag="tournament_finished", **_WEBHOOK):
    """A tournament ended (its last round played, or stopped), with its standings."""

    timestamp: datetime
    data: TournamentFinishedData


WebhookPayload = (
    GameStartedWebhook
    | GameFinishedWebhook
    | SeatTakenOverWebhook
    | GameAbortedWebhook
    | TournamentStartedWebhook
    | RoundStartedWebhook
    | TournamentFinishedWebhook
)
# the body of each webhook by its `type` (the OpenAPI document's `webhooks`)
WEBHOOK_PAYLOADS: dict[str, type] = {
    str(kind.__struct_config__.tag): kind
    for kind in (
        GameStartedWebhook, GameFinishedWebhook, SeatTakenOverWebhook, GameAbortedWebhook,
        TournamentStartedWebhook, RoundStartedWebhook, TournamentFinishedWebhook,
    )
}  # fmt: skip


# ---------------------------------------------------------------- messages


class Message(NamedTuple):
    """A webhook to send: its id (the same for the same fact), type and JSON body."""

    id: str
    type: str
    body: bytes


_encoder = msgspec.json.Encoder()


_TOLD = ("game_started", "seat_taken_over")  # the events that are webhooks of their own


def _tag(event: object) -> object:
    config = getattr(type(event), "__struct_config__", None)
    return None if config is None else config.tag


def _told(events: Sequence[object]) -> list[Any]:
    """The events of a change that are webhooks of their own."""
    return [event for event in events if _tag(event) in _TOLD]


def _player_id(record: GameRecord, seat: int) -> str | None:
    ids = record.player_ids
    return ids[seat] if seat < len(ids) else None


def messages_for(
    old: GameRecord | None, new: GameRecord, events: Sequence[object]
) -> list[Message]:
    """The webhooks one stored change of a game calls for: `old` the game as it was (None:
    created, or an ended game handed over again), `new` as saved, `events` the domain events
    of the change (or the change's `StoredEvent`s). An ended game given again with old None and no events yields its end
    message again (the same id: queued once)."""
    if new.state is None:  # an open table: nothing to tell yet
        return []
    told = _told(events)
    ended = _ended(old, new)
    if not told and ended is None:  # most changes: an action in play
        return []
    at = datetime.fromtimestamp(new.updated_at, UTC)
    found = [
        _started(new, at) if _tag(e) == "game_started" else _taken_over(new, at, e) for e in told
    ]
    if ended == "finished":
        found.append(_finished(new, at))
    elif ended is not None:
        data = GameAbortedData(game_id=new.id, reason=ended)
        payload = GameAbortedWebhook(timestamp=at, data=data)
        found.append(_message(f"msg_{new.id}_aborted", payload))
    return found


def _ended(old: GameRecord | None, new: GameRecord) -> str | None:
    """How the game ended in this change (finished, aborted, abandoned), None if it did not."""
    state = new.state
    if state is None:
        return None
    if new.stopped:
        if old is None or not old.stopped:
            return "aborted" if new.aborted else "abandoned"
        return None
    if state.phase == "finished" and (
        old is None or old.state is None or old.state.phase != "finished"
    ):
        return "finished"
    return None


def message(message_id: str, payload: WebhookPayload) -> Message:
    """A webhook of this payload, its id fixed by the fact it reports."""
    return _message(message_id, payload)


def _message(message_id: str, payload: WebhookPayload) -> Message:
    return Message(message_id, str(type(payload).__struct_config__.tag), _encoder.encode(payload))


def _started(record: GameRecord, at: datetime) -> Message:
    state = record.state
    assert state is not None
    seats = tuple(
        WebhookSeat(seat=p.seat, name=p.name, player_id=_player_id(record, p.seat), bot=p.bot)
        for p in state.players
    )
    control = state.clock.control if state.clock is not None else None
    data = GameStartedData(game_id=record.id, seats=seats, time_control=control)
    return _message(f"msg_{record.id}_started", GameStartedWebhook(timestamp=at, data=data))


def _taken_over(record: GameRecord, at: datetime, event: Any) -> Message:
    data = SeatTakenOverData(
        game_id=record.id,
        seat=event.seat,
        player_id=_player_id(record, event.seat),
        bot=event.bot,
        reason=event.reason,
    )
    payload = SeatTakenOverWebhook(timestamp=at, data=data)
    return _message(f"msg_{record.id}_taken_{event.seq}", payload)


def _finished(record: GameRecord, at: datetime) -> Message:
    state = record.state
    assert state is not None
    assert state.results is not None
    players = state.players
    decided = ranking(record)
    results = tuple(
        SeatResult(
            seat=r.seat,
            name=players[r.seat].name,
            player_id=_player_id(record, r.seat),
            bot=players[r.seat].bot,
            rank=r.rank,
            score=r.score,
            winner=r.winner,
            resigned=r.resigned,
            taken_over=players[r.seat].taken_over,
            ranked=decided.counts(r.seat),
        )
        for r in sorted(state.results, key=lambda r: r.seat)
    )
    data = GameFinishedData(
        game_id=record.id, results=results, ranked=decided.ranked, unranked_reason=decided.reason
    )
    return _message(f"msg_{record.id}_finished", GameFinishedWebhook(timestamp=at, data=data))


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


# ---------------------------------------------------------------- the facade


class Webhooks:
    """What the composition root wires: a reaction of the relay (`react`),
    `run_forever` as a background task, `close` at shutdown. With no endpoint configured it
    does nothing (and `run_forever` returns at once)."""

    def __init__(
        self,
        outbox: WebhookOutbox | None,
        urls: Sequence[str] = (),
        sender: Sender | None = None,
        *,
        clock: Callable[[], float] = time.time,
        metrics: Any = None,
        **worker: Any,
    ) -> None:
        self.outbox = outbox
        self.urls = tuple(urls)
        self.clock = clock
        self.metrics = metrics
        self.worker: DeliveryWorker | None = None
        if self.urls:
            if outbox is None or sender is None:
                raise ValueError("webhook endpoints need an outbox and a sender")
            self.worker = DeliveryWorker(outbox, sender, clock=clock, metrics=metrics, **worker)

    @property
    def enabled(self) -> bool:
        return self.worker is not None

    # the relay's reaction (service.reactions.relay.Reaction), listed for the kinds that tell
    # the platform something (`TOLD`): each is queued at least once, whatever process died
    name = "webhooks"
    durable: Literal[True] = True

    async def react(self, change: Change) -> None:
        """Queue the webhooks of the game's events not relayed yet and of its end (the same
        fact queued again is one message: its id). Raises when the outbox does not answer
        (the relay tries again)."""
        if self.worker is None:
            return
        messages = messages_for(None, change.new, change.events)
        if not messages:
            return
        assert self.outbox is not None
        await self.outbox.put(messages, self.urls, self.clock())
        self.worker.wake()

    async def announce(self, messages: Sequence[Message]) -> None:
        """Queue webhooks that are no game's change (a tournament's: `service.tournaments.use_cases`),
        each once per id. Raises when the outbox does not answer (the caller retries)."""
        if self.worker is None or not messages:
            return
        assert self.outbox is not None
        await self.outbox.put(messages, self.urls, self.clock())
        self.worker.wake()

    async def run_forever(self) -> None:
        if self.worker is not None:
            await self.worker.run_forever()

    async def run_once(self) -> int:
        return 0 if self.worker is None else await self.worker.run_once()

    async def close(self) -> None:
        """Close the HTTP client (the Redis client is the caller's)."""
        if self.worker is not None:
            await self.worker.close()
