"""Logs: one JSON object per line on stdout (or plain text on a terminal), a request id on
every response and on every log line written while a request is served, and an optional
access log line per request.

The request id comes from the client's `X-Request-ID` when it is a safe, bounded token
(1-128 characters of `A-Z a-z 0-9 . _ : @ / + = -`), else the service makes one; either way
it is echoed in the response's `X-Request-ID`, so a client, a proxy and these logs can name
the same request.
"""

from __future__ import annotations

import itertools
import logging
import re
import secrets
import sys
import time
from contextvars import ContextVar
from time import perf_counter
from typing import Any

import msgspec

REQUEST_ID: ContextVar[str | None] = ContextVar("ten_request_id", default=None)
HEADER = b"x-request-id"
_VALID_ID = re.compile(rb"[A-Za-z0-9._:@/+=\-]{1,128}")
ACCESS_LOGGER = "ten.access"
# record attributes copied into a JSON line when a log call gives them (`extra=`)
FIELDS = ("method", "path", "route", "status", "duration_ms", "game_id", "seat")
_encoder = msgspec.json.Encoder()


class _RequestIds:
    """Unique ids without a system call per request: a random per-process prefix + a count."""

    def __init__(self) -> None:
        self._prefix = secrets.token_hex(6)
        self._count = itertools.count(1)

    def new(self) -> str:
        return f"{self._prefix}-{next(self._count):08x}"


_ids = _RequestIds()


def request_id_from(value: bytes | None) -> str:
    """The client's id when it is safe to echo and log, else a new one."""
    if value is not None and _VALID_ID.fullmatch(value) is not None:
        return value.decode("ascii")
    return _ids.new()


class _Clock:
    """ISO-8601 UTC timestamps with milliseconds; the seconds part is formatted once a second."""

    def __init__(self) -> None:
        self._second = -1
        self._text = ""

    def iso(self, created: float) -> str:
        second = int(created)
        if second != self._second:
            self._second = second
            self._text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._text}.{int((created - second) * 1000):03d}Z"


class JsonFormatter(logging.Formatter):
    """timestamp, level, logger, message, request_id (+ access fields, exception)."""

    def __init__(self) -> None:
        super().__init__()
        self._clock = _Clock()

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "timestamp": self._clock.iso(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = record.__dict__.get("request_id") or REQUEST_ID.get()
        if request_id is not None:
            doc["request_id"] = request_id
        fields = record.__dict__
        for name in FIELDS:
            value = fields.get(name)
            if value is not None:
                doc[name] = value
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            doc["stack"] = self.formatStack(record.stack_info)
        return _encoder.encode(doc).decode()


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if "request_id" not in record.__dict__:
            record.request_id = REQUEST_ID.get() or "-"
        return super().format(record)


class _StdoutHandler(logging.StreamHandler):
    """Writes to whatever `sys.stdout` is at the time (test runners swap it)."""

    def __init__(self) -> None:
        super().__init__(sys.stdout)

    @property  # type: ignore[override]
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, value) -> None:
        pass


def configure_logging(log_format: str, level: str, access_log: bool) -> str:
    """Route every log (the service's, Litestar's, uvicorn's) to one stdout handler in the
    chosen format; returns the format used (`auto`: text on a terminal, else JSON)."""
    if log_format == "auto":
        log_format = "text" if sys.stdout.isatty() else "json"
    handler = _StdoutHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler._ten_handler = True  # type: ignore[attr-defined]
    # neither format shows the thread, the process or the calling source line: not computing
    # them makes every log call cheaper (the logging docs' "Optimization" switches)
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # type: ignore[attr-defined]
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_ten_handler", False):
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # uvicorn configured its own text handlers before it imported the app: use ours instead
    uvicorn_access = logging.getLogger("uvicorn.access")
    # `uvicorn --no-access-log` leaves its access logger with no handler and not propagating
    # (the state this function also leaves it in below, marked, when it silences it itself)
    silenced_by_uvicorn = (
        not uvicorn_access.propagate
        and not uvicorn_access.handlers
        and not getattr(uvicorn_access, "_ten_silenced", False)
    )
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # uvicorn writes its access lines only while that logger reaches a handler
    # (`hasHandlers()`, checked per connection), and then formats each line's arguments even
    # when the level drops it: silenced means no handler anywhere up the chain. Silenced when
    # uvicorn was told so, and when the service's own access log is on (uvicorn's lines,
    # without request ids, would double it).
    silence = silenced_by_uvicorn or access_log
    uvicorn_access.propagate = not silence
    uvicorn_access._ten_silenced = silence and not silenced_by_uvicorn  # type: ignore[attr-defined]
    # Alembic logs a line per plugin it sets up at INFO on every start: chatter, not news
    # (its "Running upgrade ..." lines stay)
    logging.getLogger("alembic.runtime.plugins").setLevel(max(root.level, logging.WARNING))
    # httpx logs every request's whole URL at INFO: a webhook endpoint's query may hold a token
    logging.getLogger("httpx").setLevel(max(root.level, logging.WARNING))
    return log_format


class RequestContext:
    """Outermost ASGI wrapper: request id in and out, request metrics, access log line.

    Around the whole Litestar app (its router and exception handling), so responses that
    never reach a route (404, 405) get an id, a count and a log line too. One wrapper doing
    the three costs less than three middlewares."""

    def __init__(self, app, access_log: bool, http_metrics=None) -> None:
        self.app = app
        self.access_log = access_log
        self.http_metrics = http_metrics  # a `request(method, route, status, seconds)`
        self._log = logging.getLogger(ACCESS_LOGGER)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = None
        for name, value in scope["headers"]:
            if name == HEADER:
                sent = value
                break
        request_id = request_id_from(sent)
        id_header = (HEADER, request_id.encode("ascii"))
        token = REQUEST_ID.set(request_id)
        status = 500
        start = perf_counter()

        async def send_with_id(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), id_header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = perf_counter() - start
            if self.http_metrics is not None:
                self.http_metrics.request(
                    scope["method"], scope.get("path_template"), status, seconds
                )
            if self.access_log and self._log.isEnabledFor(logging.INFO):
                self._access(scope, status, seconds)
            REQUEST_ID.reset(token)

    def _access(self, scope, status: int, seconds: float) -> None:
        params = scope.get("path_params") or {}
        # a player's routes by their template: no player id in the logs (`service.privacy`)
        path = scope.get("path_template") if "player_id" in params else scope["path"]
        self._log.info(
            "%s %s %d",
            scope["method"],
            path,
            status,
            extra={
                "method": scope["method"],
                "path": path,
                "route": scope.get("path_template"),
                "status": status,
                "duration_ms": round(seconds * 1000, 3),
                "game_id": params.get("game_id"),
            },
        )
