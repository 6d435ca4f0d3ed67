"""Hidden information (rules.md 9) in the web client's own traffic: while the browser plays a
game from the lobby, nothing the page receives reveals the draw pile's order or the seed.

What is recorded, all of it from the browser's side:
- every HTTP response the page receives (the document, scripts, styles, every fetch: the
  game's views, the actions' answers, the event pages), body and headers, read through
  Playwright's `Response.body()`;
- every byte of the game's server-sent event stream (the page reads it with `fetch`, to send
  its seat's token), from Chromium's own network layer (the DevTools protocol's
  `Network.streamResourceContent` and the `Network.dataReceived` it then sends), not from the
  page's script, and parsed into its messages here. A stream not captured so fails the check
  that the stream was captured (and says so) rather than pass unexamined.

The secrets are read from the game's record in Redis at every step (the layout the e2e secrets
test reads, tests/e2e/test_secrets.py): the seed, and the draw pile as it stands then. Each
response is checked against the pile of the step it arrived in: no run of five consecutive
pile cards as a JSON list, nor of eight as a run of items or bare codes, taken anywhere in the
pile (so also the cards after the next ones); and the seed nowhere, in any case. The stream's
messages are also compared with the game's event log: the stream sends exactly the log.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from tests.browser.web import BROWSER_GROUP, App
from tests.support.api import compact
from tests.support.secrets import SECRET_FIELDS, field_names, reveals_seed, stored_record

pytestmark = BROWSER_GROUP


def pile_windows(pile: tuple[str, ...]) -> set[bytes]:
    """Every five consecutive cards of the pile as a JSON list, every eight as a run."""
    patterns: set[bytes] = set()
    for i in range(len(pile) - 4):
        five = list(pile[i : i + 5])
        patterns |= {compact(five).encode(), json.dumps(five).encode()}
    for i in range(len(pile) - 7):
        eight = list(pile[i : i + 8])
        patterns |= {
            compact(eight)[1:-1].encode(),
            json.dumps(eight)[1:-1].encode(),
            "".join(eight).encode(),
        }
    return patterns


def sse_messages(raw: bytes) -> tuple[list[dict[str, str]], bytes]:
    """The complete messages of a stream's bytes (the service ends lines with CRLF), as the
    DevTools protocol names an EventSource's (eventName, eventId, data), and the rest."""
    *blocks, rest = raw.replace(b"\r\n", b"\n").split(b"\n\n")
    messages = []
    for block in blocks:
        fields: dict[str, list[str]] = {}
        for line in block.decode().split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value.removeprefix(" "))
        if "data" in fields:
            messages.append(
                {
                    "eventName": fields.get("event", ["message"])[-1],
                    "eventId": fields.get("id", [""])[-1],
                    "data": "\n".join(fields["data"]),
                }
            )
    return messages, rest


class Traffic:
    """What the page received, by step: HTTP responses and the stream's messages."""

    def __init__(self, app: App) -> None:
        self.responses: list[Any] = []
        self.stream_messages: list[dict[str, Any]] = []
        self.stream_urls: list[str] = []
        self.stream_bytes: dict[str, bytes] = {}  # by request id: the bytes not parsed yet
        page = app.page
        page.on("response", self._on_response)  # a bound method: Playwright tags handlers
        cdp = page.context.new_cdp_session(page)
        cdp.on("Network.responseReceived", self._response_received)
        cdp.on("Network.dataReceived", self._data_received)
        cdp.send("Network.enable")
        self.cdp = cdp
        self.read = 0  # responses already read
        self.streamed = 0  # stream messages already taken
        self.bodies: list[bytes] = []
        self.revealed: list[str] = []  # the seeds the ended game's views revealed

    def _on_response(self, response: Any) -> None:
        self.responses.append(response)

    def _response_received(self, params: dict[str, Any]) -> None:
        if params["response"].get("mimeType") == "text/event-stream":
            self.stream_urls.append(params["response"]["url"])
            request = params["requestId"]
            # what arrived before this, then every chunk through Network.dataReceived
            streamed = self.cdp.send("Network.streamResourceContent", {"requestId": request})
            self.stream_bytes[request] = base64.b64decode(streamed["bufferedData"])
            self._parse(request)

    def _data_received(self, params: dict[str, Any]) -> None:
        request = params["requestId"]
        if request in self.stream_bytes and params.get("data"):
            self.stream_bytes[request] += base64.b64decode(params["data"])
            self._parse(request)

    def _parse(self, request: str) -> None:
        messages, self.stream_bytes[request] = sse_messages(self.stream_bytes[request])
        self.stream_messages += messages

    def take(self) -> list[bytes]:
        """Everything received since the last call, as bytes (bodies with their headers)."""
        blobs = []
        for response in self.responses[self.read :]:
            headers = response.all_headers()
            text = "".join(f"{k}: {v}\n" for k, v in headers.items()).encode()
            if headers.get("content-type", "").startswith("text/event-stream"):
                blobs.append(text)  # its messages come through the DevTools protocol
                continue
            body = b"" if 300 <= response.status < 400 else response.body()
            if headers.get("content-type", "").split(";")[0] in (
                "application/json",
                "application/problem+json",
            ):
                decoded = json.loads(body)
                if reveals_seed(decoded):  # an ended game's view reveals its seed (fair deals)
                    self.revealed.append(decoded["fairness"]["seed"])
                    continue
                names = set(field_names(decoded))
                assert not names & SECRET_FIELDS, (response.url, names & SECRET_FIELDS)
            blobs.append(body + b"\n" + text)
        self.read = len(self.responses)
        for message in self.stream_messages[self.streamed :]:
            blobs.append(f"{message['eventName']} {message['eventId']} {message['data']}".encode())
        self.streamed = len(self.stream_messages)
        self.bodies += blobs
        return blobs


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        client.close()


@pytest.mark.parametrize("app_server", ["redis"], indirect=True)
def test_the_page_never_receives_the_draw_pile_or_the_seed(
    app: App, api: httpx.Client, redis_client: redis.Redis
) -> None:
    rng = random.Random("browser/secrets")
    traffic = Traffic(app)
    app.goto("/", "lobby")
    game_id = app.create_table("Ann", ["basic"])
    # the bots' moves all at once: the pace is the page's own (the traffic is the same)
    app.choose_pace("instant")
    record = stored_record(redis_client, game_id)
    seed = record.state.seed
    assert len(seed) >= 16

    def check_step() -> dict[str, Any]:
        view = app.synced(api, game_id)
        pile = stored_record(redis_client, game_id).state.draw_pile
        assert view["draw_pile_size"] == len(pile)
        patterns = pile_windows(pile)
        for blob in traffic.take():
            assert seed.encode() not in blob
            leaked = [p for p in patterns if p in blob]
            assert not leaked, f"the pile's order in a response: {leaked[:3]} in {blob[:300]!r}"
        return view

    view = check_step()
    decisions = 0
    while view["status"] != "finished":
        assert decisions < 1000, "the game did not end"
        app.play_turn(api, rng, view)
        decisions += 1
        view = check_step()

    everything = b"\n".join(traffic.bodies)
    assert set(traffic.revealed) <= {seed}  # an ended game's view reveals its own seed only
    assert seed.encode() not in everything
    assert seed.upper().encode() not in everything.upper()
    for name in SECRET_FIELDS:
        assert f'"{name}"'.encode() not in everything

    # the stream was captured, and it carried the game's own log (checked above, step by step)
    log: list[dict[str, Any]] = []
    while True:
        page = api.get(f"/v1/games/{game_id}/events", params={"after": len(log)}).json()
        log += page["events"]
        if not page["more"]:
            break
    assert traffic.stream_urls, "the page opened no event stream"
    assert all(f"/v1/games/{game_id}/events/stream" in url for url in traffic.stream_urls)
    assert traffic.stream_messages, "no stream message seen through the DevTools protocol"
    by_seq = {e["seq"]: e for e in log}
    for message in traffic.stream_messages:
        event = json.loads(message["data"])
        assert event == by_seq[int(message["eventId"])], event
        assert message["eventName"] == event["type"]


def test_pile_windows_catch_the_order_anywhere_in_the_pile() -> None:
    """The patterns above can fail: a body with any five pile cards in order is caught."""
    pile = ("R1", "B7", "W3", "$2", "G9", "O4", "R#", "B2", "G5", "R8")
    patterns = pile_windows(pile)
    leaks = [
        json.dumps({"next": list(pile[:5])}),
        compact({"peek": list(pile[3:8])}),
        "event: x\ndata: " + compact(list(pile[2:10]))[1:-1],
        "".join(pile[1:9]),
    ]
    for leak in leaks:
        assert any(p in leak.encode() for p in patterns), leak
    public = compact({"tableau": ["R1", "B7", "W3", "$2"], "market": ["G9", "O4"]}).encode()
    assert not any(p in public for p in patterns)


def test_sse_messages_parses_complete_messages_and_keeps_the_rest() -> None:
    raw = (
        b': hello\r\nretry: 2000\r\n\r\nid: 3\r\nevent: card_drawn\r\ndata: {"a":1}\r\n\r\nid: 4\r'
    )
    messages, rest = sse_messages(raw)
    assert messages == [{"eventName": "card_drawn", "eventId": "3", "data": '{"a":1}'}]
    more, rest = sse_messages(rest + b"\nevent: stopped\r\ndata: x\r\ndata: y\r\n\r\n")
    assert more == [{"eventName": "stopped", "eventId": "4", "data": "x\ny"}]
    assert rest == b""
