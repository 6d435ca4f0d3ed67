"""Which webhooks a stored change of a game calls for, and their bodies (service.reactions.webhooks).

Games are played by the real engine (basic bots on every seat); no I/O, no clock."""

from __future__ import annotations

import base64
import time
from datetime import UTC, datetime

import msgspec
import pytest
from msgspec.structs import replace
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from domain.game.engine import take_over
from domain.game.model import Event, GameStarted
from infra.queues import MemoryQueue
from infra.webhook_sender import HttpSender, signed_headers
from service.core.model import Table
from service.games.use_cases import encode_events
from service.reactions.relay import saved_change
from service.reactions.webhook_delivery import DeliveryWorker, WebhookOutbox
from service.reactions.webhook_payloads import (
    WEBHOOK_PAYLOADS,
    GameAbortedWebhook,
    GameFinishedWebhook,
    GameStartedWebhook,
    SeatTakenOverWebhook,
)
from service.reactions.webhooks import messages_for
from tests.support.games import NOW, play_to_end, started, step

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()


def decoded(body: bytes) -> dict:
    return msgspec.json.decode(body)


def test_a_game_created_sends_game_started_with_its_seats():
    record, events = started()
    [message] = messages_for(None, record, events)
    assert message.id == f"msg_{record.id}_started"
    assert message.type == "game_started"
    payload = msgspec.json.decode(message.body, type=GameStartedWebhook)
    assert payload.timestamp == datetime.fromtimestamp(NOW, UTC)
    assert payload.data.game_id == record.id
    assert [(s.seat, s.name, s.player_id, s.bot) for s in payload.data.seats] == [
        (0, "ann", "p-ann", None),
        (1, "bob", "p-bob", None),
        (2, "cy", None, "basic"),
    ]
    body = decoded(message.body)
    assert list(body) == ["type", "timestamp", "data"]  # Standard Webhooks' shape
    assert body["type"] == "game_started"
    assert body["timestamp"] == "2025-10-09T08:53:20.500000Z"


def test_moves_in_play_send_nothing():
    record, _ = started()
    for _ in range(5):
        new, events = step(record)
        assert events
        assert messages_for(record, new, events) == []
        record = new


def test_an_open_table_sends_nothing_until_it_starts():
    record, _ = started()
    table = replace(record, state=None, table=Table(seats=()))
    assert messages_for(None, table, []) == []


def test_the_last_move_sends_game_finished_with_the_results():
    record, events = started()
    before, after, events = play_to_end(record)
    [message] = messages_for(before, after, events)
    assert message.id == f"msg_{record.id}_finished"
    payload = msgspec.json.decode(message.body, type=GameFinishedWebhook)
    results = {r.seat: r for r in after.state.results}
    assert [r.seat for r in payload.data.results] == [0, 1, 2]
    for sent in payload.data.results:
        assert (sent.rank, sent.score, sent.winner) == (
            results[sent.seat].rank,
            results[sent.seat].score,
            results[sent.seat].winner,
        )
    assert [r.player_id for r in payload.data.results] == ["p-ann", "p-bob", None]
    assert sum(r.winner for r in payload.data.results) >= 1
    assert payload.data.ranked  # two verified humans, the standard deck, played out
    assert payload.data.unranked_reason is None
    # handed over again (a sweep): the same message, byte for byte
    assert messages_for(None, after, []) == [message]
    # a later save of the finished game (nothing new): nothing
    assert messages_for(after, replace(after, updated_at=after.updated_at + 5), []) == []


def test_resigned_and_taken_over_seats_show_in_the_results():
    record, _ = started()
    state, _ = take_over(record.state, 0, "resigned")
    record = replace(record, state=state)
    state, _ = take_over(record.state, 1, "timeouts")
    before, after, events = play_to_end(replace(record, state=state))
    payload = msgspec.json.decode(messages_for(before, after, events)[0].body)
    sent = {r["seat"]: r for r in payload["data"]["results"]}
    assert sent[0]["resigned"] is True
    assert sent[0]["winner"] is False
    assert sent[0]["rank"] == 3  # below every seat that did not resign
    assert sent[1]["taken_over"] is True
    assert sent[1]["resigned"] is False
    # the game counts, but not for the player whose seat was taken over after timeouts
    assert payload["data"]["ranked"] is True
    assert [sent[seat]["ranked"] for seat in (0, 1, 2)] == [True, False, True]


def test_a_seat_taken_over_sends_seat_taken_over_named_by_its_event():
    record, _ = started()
    for reason, seat in (("timeouts", 1), ("resigned", 0)):
        state, events = take_over(record.state, seat, reason)
        new = replace(record, state=state, updated_at=record.updated_at + 1)
        [message] = messages_for(record, new, events)
        assert message.id == f"msg_{record.id}_taken_{events[0].seq}"
        payload = msgspec.json.decode(message.body, type=SeatTakenOverWebhook)
        assert payload.data.seat == seat
        assert payload.data.player_id == ("p-ann", "p-bob")[seat]
        assert payload.data.bot == "basic"
        assert payload.data.reason == reason
        record = new


def test_a_stand_in_event_of_the_same_shape_is_enough():
    """Matched on the event's tag and attributes, not its class."""

    class StandIn(Event, tag="seat_taken_over"):
        seat: int
        bot: str
        reason: str

    record, _ = started()
    event = StandIn(seq=42, version=1, seat=1, bot="random", reason="timeouts")
    [message] = messages_for(record, record, [event])
    assert message.id == f"msg_{record.id}_taken_42"
    assert decoded(message.body)["data"]["bot"] == "random"


def test_events_as_the_relay_reads_them_give_the_same_messages():
    """The relay hands a reaction the stored events decoded once (`Change.events`)."""
    record, events = started()
    state, taken = take_over(record.state, 1, "timeouts")
    over = replace(record, state=state)
    before, after, last = play_to_end(over)
    for old, new, produced in (
        (None, record, events),
        (record, over, taken),
        (before, after, last),
    ):
        read = saved_change(old, new, encode_events(produced)).events
        assert messages_for(old, new, read) == messages_for(old, new, produced)
    moved, played = step(record)
    assert (
        messages_for(record, moved, saved_change(record, moved, encode_events(played)).events) == []
    )


@pytest.mark.parametrize(("field", "reason"), [("aborted", "aborted"), ("abandoned", "abandoned")])
def test_an_aborted_or_abandoned_game_sends_game_aborted_once(field, reason):
    record, _ = started()
    ended = replace(record, **{field: True}, updated_at=NOW + 9)
    [message] = messages_for(record, ended, [])
    assert message.id == f"msg_{record.id}_aborted"
    payload = msgspec.json.decode(message.body, type=GameAbortedWebhook)
    assert payload.data.reason == reason
    assert messages_for(ended, replace(ended, updated_at=NOW + 10), []) == []
    assert messages_for(None, ended, []) == [message]  # handed over again: the same one


def test_created_and_finished_in_one_change_sends_both():
    record, events = started()
    _, after, last = play_to_end(record)
    found = messages_for(None, after, [*events, *last])
    assert [m.type for m in found] == ["game_started", "game_finished"]
    assert isinstance(events[0], GameStarted)


def test_every_payload_type_is_listed_and_decodes_its_bodies():
    assert set(WEBHOOK_PAYLOADS) == {
        "game_started",
        "game_finished",
        "seat_taken_over",
        "game_aborted",
        "tournament_started",  # a tournament's (tests/unit/service/tournaments/test_tournaments.py)
        "round_started",
        "tournament_finished",
        "ticket_matched",  # a matchmaking ticket's (its tests)
        "your_turn",  # a correspondence turn's (tests/unit/service/correspondence)
    }
    record, events = started()
    state, taken = take_over(record.state, 1, "timeouts")
    before, after, last = play_to_end(replace(record, state=state))
    bodies = [
        *messages_for(None, record, events),
        *messages_for(record, replace(record, state=state), taken),
        *messages_for(before, after, last),
        *messages_for(record, replace(record, aborted=True), []),
    ]
    told_elsewhere = ("tournament", "round", "ticket", "your_turn")
    games = [k for k in WEBHOOK_PAYLOADS if not any(w in k for w in told_elsewhere)]
    assert sorted(m.type for m in bodies) == sorted(games)
    for message in bodies:
        payload = msgspec.json.decode(message.body, type=WEBHOOK_PAYLOADS[message.type])
        assert payload.data.game_id == record.id


def worker(jitter: float) -> DeliveryWorker:
    outbox, sender = WebhookOutbox(MemoryQueue("webhooks")), HttpSender(SECRET)
    return DeliveryWorker(outbox, sender, max_backoff=60.0, jitter=lambda: jitter)


def test_backoff_doubles_from_one_second_to_the_cap_with_jitter():
    middle = worker(0.5)
    assert [middle.backoff(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert middle.backoff(10_000) == 60  # no overflow after days of failures
    low, high = worker(0.0), worker(0.999)
    assert low.backoff(3) == 3.0
    assert 4.99 < high.backoff(3) < 5.0
    assert high.backoff(7) == 60  # jitter never exceeds the cap
    assert 45 <= low.backoff(7) < 60


def test_signed_headers_verify_and_detect_tampering():
    verifier = Webhook(SECRET)
    body = b'{"type":"game_started","timestamp":"2025-10-09T08:53:20Z","data":{"game_id":"g"}}'
    now = time.time()
    headers = signed_headers(verifier, "msg_g_started", body, now)
    assert headers["webhook-id"] == "msg_g_started"
    assert headers["webhook-timestamp"] == str(int(now))
    assert verifier.verify(body, headers)["data"]["game_id"] == "g"
    with pytest.raises(WebhookVerificationError):
        verifier.verify(body.replace(b'"g"', b'"h"'), headers)
    with pytest.raises(WebhookVerificationError):  # another message's id
        verifier.verify(body, {**headers, "webhook-id": "msg_g_finished"})
    old = signed_headers(verifier, "msg_g_started", body, now - 301)
    with pytest.raises(WebhookVerificationError, match="too old"):
        verifier.verify(body, old)
    with pytest.raises(WebhookVerificationError):  # a fresh timestamp on the old signature
        verifier.verify(body, {**old, "webhook-timestamp": str(int(now))})
    other = Webhook("whsec_" + base64.b64encode(b"x" * 32).decode())
    with pytest.raises(WebhookVerificationError):
        other.verify(body, headers)
