"""A Web Push endpoint on loopback, in a thread of the test, that plays the browser too: it
holds a subscription's keys (a P-256 key pair and an auth secret), decrypts every message
posted to it (RFC 8291, aes128gcm) with them, checks its VAPID signature (RFC 8292) against
the service's public key, and records what it got. A path in `gone` is answered 410."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass
class Pushed:
    path: str
    payload: dict[str, Any] | None  # decrypted JSON; None: it could not be decrypted
    signed: bool  # its VAPID signature verified against the service's key
    at: float  # when it arrived (time.time())


Answer = Callable[[str, dict[str, str], bytes], int]  # (path, headers, body) -> status


def serve(answer: Answer) -> ThreadingHTTPServer:
    """An HTTP server on a free loopback port, in a thread, that answers every POST with
    `answer`'s status and an empty body (a push endpoint, a webhook receiver)."""

    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # a connection a sender left half-way never holds a thread for good

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            status = answer(self.path, dict(self.headers.items()), body)
            with contextlib.suppress(OSError):  # a sender killed meanwhile
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class PushEndpoint:
    def __init__(self, vapid_public_key: str | None = None) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.vapid_public_key = vapid_public_key
        self.gone: set[str] = set()
        self.received: list[Pushed] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def keys(self) -> dict[str, str]:
        public = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"p256dh": b64url(public), "auth": b64url(self.auth)}

    def url(self, path: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def subscription(self, path: str) -> dict[str, Any]:
        return {"endpoint": self.url(path), "keys": self.keys}

    def start(self) -> PushEndpoint:
        self.server = serve(self.answer)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def answer(self, path: str, headers: dict[str, str], body: bytes) -> int:
        headers = {k.lower(): v for k, v in headers.items()}
        if path in self.gone:
            return 410
        try:
            plain = http_ece.decrypt(
                body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"
            )
            payload = json.loads(plain)
        except Exception:
            payload = None
        signed = self._signed(headers.get("authorization", ""))
        with self.lock:
            self.received.append(Pushed(path, payload, signed, time.time()))
        return 201

    def _signed(self, authorization: str) -> bool:
        """`vapid t=<jwt>,k=<key>`: the key is the service's, and it signed the token."""
        if self.vapid_public_key is None or not authorization.startswith("vapid "):
            return False
        fields = dict(part.split("=", 1) for part in authorization[6:].split(","))
        if fields.get("k") != self.vapid_public_key:
            return False
        try:
            return bool(Vapid02.verify(authorization))
        except Exception:
            return False

    def payloads(self, path: str) -> list[dict[str, Any] | None]:
        with self.lock:
            return [p.payload for p in self.received if p.path == path]
