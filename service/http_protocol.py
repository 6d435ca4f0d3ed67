"""uvicorn's httptools protocol with bounds on a request's head: `BoundedHttpToolsProtocol`,
selected with `uvicorn --http service.http_protocol:BoundedHttpToolsProtocol` (the image's
`UVICORN_HTTP`).

uvicorn's httptools protocol (the fast one, chosen by `--http auto`) keeps no limit on the
request line and headers, and no timer until a first response is sent: a 10 MB header was
answered 200, 20 slow 20 MB headers grew a worker by 400 MB, and connections trickling a
header line every few seconds stayed open for good (past the file limit nothing answered,
/health neither). This subclass adds, per `service.settings.HttpLimits`:

- a header timeout: from the connection's start (or, on a kept-alive connection, the next
  request's first byte) to the end of its headers; past it the connection is closed (with a
  408 if a request had begun). uvicorn's own keep-alive timeout covers the idle time between
  requests.
- a size limit on the request line plus headers and a limit on the header count: past either,
  431 and the connection is closed, so that httptools stops buffering the head.
- `/health` exempt from uvicorn's `--limit-concurrency` (which answers every request past the
  limit 503): the liveness probe keeps saying whether the process answers, so a busy pod is
  not restarted for being busy; `/ready` and everything else get the 503.

Everything else (the body, the response, keep-alive, pipelining, upgrades) is uvicorn's.
"""

from __future__ import annotations

import asyncio
import functools
import http
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from service.settings import HttpLimits

# not under --limit-concurrency (the liveness probe, with or without a query)
UNLIMITED_PATHS = (b"/health",)


@functools.cache
def limits() -> HttpLimits:
    """The process's limits, read from the environment once."""
    return HttpLimits.from_env()


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
        self.header_timer: asyncio.TimerHandle | None = None
        self.head_open = False  # a request has begun and its headers are not complete
        self.head_received = 0  # bytes received since it began (an upper bound of its head)
        self.head_size = 0  # its request line and complete headers
        self.header_count = 0
        self.head_too_large = False

    # the header timeout

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
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
            self._refuse(http.HTTPStatus.REQUEST_TIMEOUT, "Request header timeout.")
        else:
            self.transport.close()

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
        # `self.url` is the request target as sent: the path, then maybe a query
        path = self.url.partition(b"?")[0]
        self.limit_concurrency = None if path in UNLIMITED_PATHS else self.config.limit_concurrency
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # a head still incomplete: httptools holds its partial line; everything fed since the
        # request began belongs to it (the chunk it began in may also end the previous request)
        if self.head_open and not self.transport.is_closing():
            self.head_received += len(data)
            if self.head_received > self.limits.max_header_bytes:
                self.head_too_large = True
                self._refuse_too_large()

    def send_400_response(self, msg: str) -> None:
        # a parser error: ours (HeadTooLarge, from a callback) or the request's
        if self.head_too_large:
            self._refuse_too_large()
        else:
            super().send_400_response(msg)

    def _refuse_too_large(self) -> None:
        self._refuse(
            http.HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            f"Request header fields too large (at most {self.limits.max_header_bytes} bytes "
            f"and {self.limits.max_headers} headers).",
        )

    def _refuse(self, status: http.HTTPStatus, message: str) -> None:
        """Answer `status` and close: the rest of this connection's bytes go unread."""
        self._cancel_header_timer()
        self.head_open = False
        body = message.encode("ascii")
        head = [f"HTTP/1.1 {status.value} {status.phrase}\r\n".encode("ascii")]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.append(
            b"content-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
        )
        self.transport.write(b"".join([*head, body]))
        self.transport.close()
