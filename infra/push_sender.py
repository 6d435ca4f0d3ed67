"""Web Push (`service.correspondence.notices.PushSender`) with pywebpush: each message is
encrypted for its subscription (RFC 8291, aes128gcm) and posted with a VAPID signature
(RFC 8292) to the subscription's push service.

The VAPID key is `TEN_VAPID_PRIVATE_KEY` (PEM, or the raw key in base64url); without it a
key is made when the process starts, and browsers' subscriptions (made with the public key
of `GET /v1/push/key`) then do not outlive a restart: the push services refuse what another
key signs. The signature of an origin is reused for an hour (it is valid for twelve)."""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid02
from pywebpush import WebPusher

from service.correspondence.records import PushSubscription

SIGNATURE_LIFE = 12 * 3600  # seconds a VAPID signature is valid (the push services' limit: 24 h)
SIGNATURE_REUSE = 3600  # seconds one is reused for an origin


def vapid_key(private_key: str | None) -> Vapid02:
    """The service's VAPID key: configured (PEM, or raw base64url), else a new one."""
    if private_key is None:
        key = Vapid02()
        key.generate_keys()
        return key
    if private_key.lstrip().startswith("-----BEGIN"):
        return Vapid02.from_pem(private_key.encode())
    return Vapid02.from_string(private_key)


def public_key(key: Vapid02) -> str:
    """The application server key browsers subscribe with: the uncompressed P-256 point,
    base64url without padding."""
    raw = key.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class PushUnreachable(Exception):
    """The push service did not answer."""


class WebPushSender:
    def __init__(self, private_key: str | None, subject: str, *, timeout: float = 10.0) -> None:
        self.key = vapid_key(private_key)
        self.public_key = public_key(self.key)
        self.subject = subject
        self.timeout = timeout
        self._signed: dict[str, tuple[float, dict[str, str]]] = {}  # origin -> (until, headers)
        self._session: aiohttp.ClientSession | None = None

    def _headers(self, endpoint: str, now: float) -> dict[str, str]:
        parts = urlsplit(endpoint)
        origin = f"{parts.scheme}://{parts.netloc}"
        held = self._signed.get(origin)
        if held is None or held[0] <= now:
            claims = {"sub": self.subject, "aud": origin, "exp": int(now) + SIGNATURE_LIFE}
            held = (now + SIGNATURE_REUSE, self.key.sign(claims))
            self._signed[origin] = held
        return dict(held[1])

    async def send(self, subscription: PushSubscription, body: bytes, ttl: int) -> int:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        info: dict[str, Any] = {
            "endpoint": subscription.endpoint,
            "keys": {"p256dh": subscription.keys.p256dh, "auth": subscription.keys.auth},
        }
        pusher = WebPusher(info, aiohttp_session=self._session)
        try:
            response = await pusher.send_async(
                body,
                self._headers(subscription.endpoint, time.time()),
                ttl=ttl,
                content_encoding="aes128gcm",
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            # this job's failure (tried again, a bounded number of times), not the worker's
            # dependency down: one push service unreachable holds up no other's messages
            raise PushUnreachable(f"{type(exc).__name__}: {exc}") from None
        return response.status

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
