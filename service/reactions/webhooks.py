"""Webhooks to the platform: what a game's change tells it, queued at least once.

- What is sent: `messages_for(old, new, events)` turns one stored change of a game into
  messages (the domain events say a game started, a seat was taken over or the game
  finished; the status says it was aborted or abandoned). Every message has an id fixed by
  the fact it reports (`msg_<game id>_finished`, `msg_<game id>_taken_<event seq>`, ...): the
  same fact queued twice is one message, and a receiver de-duplicates on `webhook-id`. The
  bodies: `service.reactions.webhook_payloads`; their outbox and delivery:
  `service.reactions.webhook_delivery`.
- `Webhooks`: the facade the composition root builds; it is one of the relay's reactions
  (`service.reactions.relay`): every change that tells the platform something is queued
  (`react`) at least once, from the game's event log, whatever process died where.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

from service.core.model import GameRecord
from service.core.ranking import ranking
from service.reactions.relay import Change
from service.reactions.webhook_delivery import DeliveryWorker, Message, Sender, WebhookOutbox
from service.reactions.webhook_payloads import (
    GameAbortedData,
    GameAbortedWebhook,
    GameFinishedData,
    GameFinishedWebhook,
    GameStartedData,
    GameStartedWebhook,
    SeatResult,
    SeatTakenOverData,
    SeatTakenOverWebhook,
    WebhookPayload,
    WebhookSeat,
)

log = logging.getLogger("ten.webhooks")


# ---------------------------------------------------------------- messages


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
