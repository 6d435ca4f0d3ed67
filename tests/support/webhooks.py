"""A webhook receiver on loopback, in a thread of the test: it verifies every delivery's
Standard Webhooks signature and can fail, hang or lose an acknowledgement on purpose."""

from __future__ import annotations

import base64
import contextlib
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

SECRET = "whsec_" + base64.b64encode(b"integration-webhook-secret-32b!!").decode()


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    verified: bool
    error: str | None
    status: int

    @property
    def id(self) -> str:
        return self.headers.get("webhook-id", "")


class Receiver:
    """A webhook endpoint on 127.0.0.1: 204 for a delivery its verifier accepts, 400 for
    one it refuses; `mode` "fail" answers 503 to everything, "hang" holds every request
    until `release` is set. An id in `lose_ack` is accepted (recorded) the first time and
    answered 500 all the same: the acknowledgement the sender never saw. An id in `refuse` is
    answered 422 every time: a message the platform will never take."""

    def __init__(self) -> None:
        # the port held, bound but not listening (connections refused), until `start`
        self.held = socket.socket()
        self.held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.held.bind(("127.0.0.1", 0))
        self.port = self.held.getsockname()[1]
        self.verifier = Webhook(SECRET)
        self.mode = "ok"
        self.delay = 0.0  # seconds it takes to answer
        self.lose_ack: set[str] = set()
        self.refuse: set[str] = set()
        self.release = threading.Event()
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks?token=not-logged"

    def start(self) -> Receiver:
        receiver = self
        self.held.close()

        class Handler(BaseHTTPRequestHandler):
            timeout = 10  # a connection a sender left half-way never holds a thread for good

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = receiver.answer(dict(self.headers.items()), body)
                with contextlib.suppress(OSError):  # a sender killed meanwhile
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False  # stop() never waits for a held request
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.held.close()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        headers = {k.lower(): v for k, v in headers.items()}
        try:
            self.verifier.verify(body, headers)
            verified, error = True, None
        except WebhookVerificationError as exc:
            verified, error = False, str(exc)
        with self.lock:
            first = headers.get("webhook-id") not in {r.id for r in self.received if r.verified}
        status = 204 if verified else 400
        if self.mode == "fail":
            status = 503
        elif verified and first and headers["webhook-id"] in self.lose_ack:
            status = 500
        elif verified and headers["webhook-id"] in self.refuse:
            status = 422
        with self.lock:
            self.received.append(Received(headers, body, verified, error, status))
        time.sleep(self.delay)
        if self.mode == "hang":
            self.release.wait(30)
        return status

    def accepted(self) -> list[Received]:
        """The deliveries it verified (whatever it answered)."""
        with self.lock:
            return [r for r in self.received if r.verified]

    def ids(self) -> Counter[str]:
        return Counter(r.id for r in self.accepted())
