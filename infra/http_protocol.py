"""uvicorn's httptools protocol with bounds on how a request arrives and on what it may cost
others: `BoundedHttpToolsProtocol`, selected with
`uvicorn --http infra.http_protocol:BoundedHttpToolsProtocol` (the image's `UVICORN_HTTP`,
and `scripts/run`'s).

uvicorn's httptools protocol (the fast one, chosen by `--http auto`) keeps no limit on the
request line and headers, no timer on a request until a first response is sent, and its
`--limit-concurrency` counts open connections and tasks, so idle or trickling connections
make it answer 503 to everybody. This subclass adds, per `service.core.settings.HttpLimits`:

- a header timeout: from the connection's start (or, on a kept-alive connection, the next
  request's first byte) to the end of its headers; past it the connection is closed (with a
  408 if a request had begun). uvicorn's own keep-alive timeout covers the idle time between
  requests.
- a body timeout: from the end of the headers to the end of the body; past it, 408 if the app
  has not begun its answer, and the connection is closed either way (a body still trickling
  after an early answer, such as a 413, is cut too).
- a size limit on the request line plus headers and a limit on the header count: past either,
  431 and the connection is closed, so that httptools stops buffering the head.
- `--limit-concurrency` counting only the work the app does: requests that have arrived whole
  and that the app has not begun to answer (a request whose client left counts until the app
  is done with it). Past the limit a request is answered 503 at once. Idle connections,
  trickling heads and bodies, slow readers of an answer and open event streams take none of
  it: they are bounded by the timeouts above, and streams by their own caps. `/health` is
  exempt (neither refused nor counted): the liveness probe keeps saying whether the process
  answers, so a busy pod is not restarted for being busy; `/ready` and everything else get
  the 503.

What the protocol answers itself (400, 408, 431, 503) is a problem document as the app's
(`type`, `title`, `status`, `detail`, `code`), in English. Everything else (the response,
keep-alive, pipelining, upgrades) is uvicorn's.
"""

from __future__ import annotations

import asyncio
import functools
import http
import json
import weakref
from typing import Any

from uvicorn._types import ASGI3Application, ASGIReceiveCallable, ASGISendCallable, Scope
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from service.core.settings import HttpLimits

# neither refused nor counted under --limit-concurrency (the liveness probe, any query)
UNLIMITED_PATHS = ("/health",)
# the app's problem types (service.entrypoints.api.problems.TYPE_BASE; this layer may not import it)
TYPE_BASE = "https://ten.example/problems/"
RETRY_AFTER_SECONDS = 1

# per server (one per worker process): the requests the app is working on
_IN_FLIGHT: weakref.WeakKeyDictionary[ServerState, set[RequestResponseCycle]] = (
    weakref.WeakKeyDictionary()
)


@functools.cache
def limits() -> HttpLimits:
    """The process's limits, read from the environment once."""
    return HttpLimits.from_env()


def problem_document(status: http.HTTPStatus, code: str, detail: str) -> bytes:
    """A problem document (RFC 9457) shaped as the app's, in English: the protocol answers
    before the app, and before the head (its Accept-Language) is whole."""
    document = {
        "type": TYPE_BASE + code,
        "title": status.phrase,
        "status": status.value,
        "detail": detail,
        "code": code,
    }
    return json.dumps(document, separators=(",", ":")).encode("ascii")


BUSY = problem_document(
    http.HTTPStatus.SERVICE_UNAVAILABLE,
    "server_busy",
    "The server is working on as many requests as it takes; retry shortly.",
)


async def busy(scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
    """The answer past the concurrency limit, in the app's stead."""
    headers = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", b"%d" % len(BUSY)),
        (b"retry-after", b"%d" % RETRY_AFTER_SECONDS),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": BUSY})


class HeadTooLarge(Exception):
    """Raised inside a parser callback: httptools stops parsing the request."""


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits = limits()
        self.max_in_flight = config.limit_concurrency
        self.limit_concurrency = None  # uvicorn's own count (connections, tasks) is not used
        self.in_flight = _IN_FLIGHT.setdefault(server_state, set())
        self.working: set[RequestResponseCycle] = set()  # counted requests whose app runs
        self.header_timer: asyncio.TimerHandle | None = None
        self.head_open = False  # a request has begun and its headers are not complete
        self.head_received = 0  # bytes received since it began (an upper bound of its head)
        self.head_size = 0  # its request line and complete headers
        self.header_count = 0
        self.head_too_large = False
        self.body_timer: asyncio.TimerHandle | None = None
        self.body_open = False  # a request's headers are complete and its body is not

    # the timeouts

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        self._cancel_body_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self.header_timer is None:
            self.header_timer = self.loop.call_later(
                self.limits.header_timeout, self._header_timeout
            )

    def _cancel_header_timer(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _header_timeout(self) -> None:
        self.header_timer = None
        if self.transport.is_closing():
            return
        if self.head_open:
            self._refuse(
                http.HTTPStatus.REQUEST_TIMEOUT, "request_timeout", "Request header timeout."
            )
        else:
            self.transport.close()

    def _cancel_body_timer(self) -> None:
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None

    def _body_timeout(self) -> None:
        self.body_timer = None
        if not self.body_open or self.transport.is_closing():
            return
        if self.flow.read_paused or self.pipeline:
            # the server is not reading (a request before this one is still being answered,
            # or the app has not taken the body so far): not the client's time
            self.body_timer = self.loop.call_later(self.limits.body_timeout, self._body_timeout)
            return
        cycle = self.cycle
        if cycle.response_started:
            self.transport.close()
            return
        # the app, waiting for the body, is told the client left (as when it does), and its
        # answer, if any, goes nowhere
        cycle.disconnected = True
        cycle.message_event.set()
        self._refuse(
            http.HTTPStatus.REQUEST_TIMEOUT,
            "request_timeout",
            f"The request body did not arrive within {self.limits.body_timeout:g} seconds.",
        )

    # the head's size and header count

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.head_open = True
        self.head_received = self.head_size = self.header_count = 0
        self._arm_header_timer()

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        self._count(len(url), 0)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4, 1)  # "name: value\r\n"
        super().on_header(name, value)

    def _count(self, size: int, headers: int) -> None:
        self.head_size += size
        self.header_count += headers
        if (
            self.head_size > self.limits.max_header_bytes
            or self.header_count > self.limits.max_headers
        ):
            self.head_too_large = True
            raise HeadTooLarge

    def on_headers_complete(self) -> None:
        self._cancel_header_timer()
        self.head_open = False
        previous = self.cycle
        super().on_headers_complete()
        # a request for the app (not an upgrade): its body is due, until on_message_complete
        # (in this same feed, if it has none)
        self.body_open = self.cycle is not previous

    def on_message_complete(self) -> None:
        self.body_open = False
        self._cancel_body_timer()
        super().on_message_complete()
        if self.cycle is not None:
            self._enter(self.cycle)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        # a body still to come: its timer runs from the end of the headers (in this feed)
        if self.body_open and self.body_timer is None:
            self.body_timer = self.loop.call_later(self.limits.body_timeout, self._body_timeout)
        # a head still incomplete: httptools holds its partial line; everything fed since the
        # request began belongs to it (the chunk it began in may also end the previous request)
        if self.head_open:
            self.head_received += len(data)
            if self.head_received > self.limits.max_header_bytes:
                self.head_too_large = True
                self._refuse_too_large()

    # the concurrency limit: the requests the app is working on

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        if app is self.app and self.max_in_flight is not None:
            scope = cycle.scope
            if scope["path"].removeprefix(scope["root_path"]) in UNLIMITED_PATHS:
                pass
            elif len(self.in_flight) >= self.max_in_flight:
                self.logger.warning("Exceeded concurrency limit.")
                app = busy
            else:
                self.working.add(cycle)
                app = functools.partial(self._counted, cycle, app)
                self._enter(cycle)
        super()._start_asgi_task(cycle, app)

    def _enter(self, cycle: RequestResponseCycle) -> None:
        """`cycle` counts from the moment the app has it and its whole body, until it answers."""
        if cycle in self.working and not cycle.more_body and not cycle.response_started:
            self.in_flight.add(cycle)

    async def _counted(
        self,
        cycle: RequestResponseCycle,
        app: ASGI3Application,
        scope: Scope,
        receive: ASGIReceiveCallable,
        send: ASGISendCallable,
    ) -> None:
        async def answer(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.in_flight.discard(cycle)
            await send(message)

        try:
            await app(scope, receive, answer)
        finally:
            self.working.discard(cycle)
            self.in_flight.discard(cycle)

    # refusals

    def send_400_response(self, msg: str) -> None:
        # a parser error: ours (HeadTooLarge, from a callback) or the request's
        if self.head_too_large:
            self._refuse_too_large()
        else:
            self._refuse(http.HTTPStatus.BAD_REQUEST, "invalid_request", msg)

    def _refuse_too_large(self) -> None:
        self._refuse(
            http.HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request_header_fields_too_large",
            f"Request header fields too large (at most {self.limits.max_header_bytes} bytes "
            f"and {self.limits.max_headers} headers).",
        )

    def _refuse(self, status: http.HTTPStatus, code: str, detail: str) -> None:
        """Answer `status` and close: the rest of this connection's bytes go unread."""
        self._cancel_header_timer()
        self._cancel_body_timer()
        self.head_open = self.body_open = False
        body = problem_document(status, code, detail)
        head = [f"HTTP/1.1 {status.value} {status.phrase}\r\n".encode("ascii")]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.append(
            b"content-type: application/problem+json\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
        )
        self.transport.write(b"".join([*head, body]))
        self.transport.close()
