"""Web Push (`service.correspondence.notices.PushSender`): each message is encrypted for its
subscription (RFC 8291, aes128gcm, by pywebpush) and posted with a VAPID signature (RFC
8292, py_vapid) to the subscription's push service, by httpx.

An endpoint is a browser's word, so the post is guarded (`service.correspondence.endpoints`):
the host is resolved first and refused (`EndpointRefused`) unless every address is public
(loopback too when `TEN_PUSH_ALLOW_HTTP_LOOPBACK` allows it); the request goes to the address
checked (the name kept for the Host header and TLS: SNI and the certificate's check), so a
name resolving elsewhere a moment later gains nothing; no redirect is followed, no proxy of
the environment used, no connection kept for another request (one to an address shared by
two names would carry the second's request under the first's certificate), at most
`MAX_ANSWER` bytes of the answer read, and the whole exchange bounded in time.

The VAPID key is `TEN_VAPID_PRIVATE_KEY` (PEM, or the raw key in base64url); without it, on
Redis, the one every replica shares (`infra.push_keys`); else a key made when the process
starts, and browsers' subscriptions (made with the public key of `GET /v1/push/key`) then do
not outlive a restart: the push services refuse what another key signs. The signature of an origin is reused for an hour (it is valid for twelve)."""

from __future__ import annotations

import asyncio
import base64
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid02
from pywebpush import WebPusher

from service.core.errors import ServiceError
from service.correspondence.endpoints import address_allowed, check_endpoint
from service.correspondence.notices import EndpointRefused
from service.correspondence.records import PushSubscription

SIGNATURE_LIFE = 12 * 3600  # seconds a VAPID signature is valid (the push services' limit: 24 h)
SIGNATURE_REUSE = 3600  # seconds one is reused for an origin
MAX_ANSWER = 4096  # bytes of a push service's answer read (its status is what counts)

# (host, port) -> the addresses it resolves to
Resolve = Callable[[str, int], Awaitable[Sequence[str]]]


async def resolve(host: str, port: int) -> list[str]:
    """The addresses of `host` (the system's resolver)."""
    loop = asyncio.get_running_loop()
    try:
        found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise PushUnreachable(f"{host} did not resolve: {exc}") from None
    return [str(info[4][0]) for info in found]


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
    def __init__(
        self,
        private_key: str | None,
        subject: str,
        *,
        timeout: float = 10.0,
        allow_loopback: bool = False,
        resolve: Resolve = resolve,
    ) -> None:
        self.key = vapid_key(private_key)
        self.public_key = public_key(self.key)
        self.subject = subject
        self.timeout = timeout
        self.allow_loopback = allow_loopback
        self.resolve = resolve
        self._signed: dict[str, tuple[float, dict[str, str]]] = {}  # origin -> (until, headers)
        self._client: httpx.AsyncClient | None = None

    def _headers(self, endpoint: str, now: float) -> dict[str, str]:
        parts = urlsplit(endpoint)
        origin = f"{parts.scheme}://{parts.netloc}"
        held = self._signed.get(origin)
        if held is None or held[0] <= now:
            claims = {"sub": self.subject, "aud": origin, "exp": int(now) + SIGNATURE_LIFE}
            held = (now + SIGNATURE_REUSE, self.key.sign(claims))
            self._signed[origin] = held
        return dict(held[1])

    async def _address(self, endpoint: str) -> str:
        """The address to post `endpoint`'s message to: its host's first, when every one
        of them may be connected to; else `EndpointRefused`."""
        try:
            check_endpoint(endpoint, self.allow_loopback)
        except ServiceError:
            raise EndpointRefused(f"{endpoint!r} is no endpoint the service posts to") from None
        parts = urlsplit(endpoint)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = list(await self.resolve(host, port))
        refused = [a for a in addresses if not address_allowed(a, self.allow_loopback)]
        if not addresses or refused:
            raise EndpointRefused(f"{host} resolves to {refused or 'nothing'}")
        return addresses[0]

    def client(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:
            self._client = httpx.AsyncClient(
                follow_redirects=False,
                trust_env=False,  # no proxy of the environment between the check and the post
                limits=httpx.Limits(max_keepalive_connections=0),
                timeout=self.timeout,
            )
        return self._client

    async def send(self, subscription: PushSubscription, body: bytes, ttl: int) -> int:
        endpoint = subscription.endpoint
        parts = urlsplit(endpoint)
        address = await self._address(endpoint)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        at = f"[{address}]" if ":" in address else address
        pinned = urlunsplit((parts.scheme, f"{at}:{port}", parts.path or "/", parts.query, ""))
        info: dict[str, Any] = {
            "endpoint": endpoint,
            "keys": {"p256dh": subscription.keys.p256dh, "auth": subscription.keys.auth},
        }
        encrypted = WebPusher(info).encode(body, "aes128gcm")["body"]
        headers = {
            **self._headers(endpoint, time.time()),
            "Host": parts.netloc,
            "TTL": str(ttl),
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
        }
        client = self.client()
        request = client.build_request(
            "POST",
            pinned,
            content=encrypted,
            headers=headers,
            extensions={"sni_hostname": parts.hostname or ""},
        )
        try:
            async with asyncio.timeout(self.timeout):
                response = await client.send(request, stream=True)
                try:
                    read = 0
                    async for chunk in response.aiter_raw():
                        read += len(chunk)
                        if read >= MAX_ANSWER:
                            break
                finally:
                    await response.aclose()
        except (httpx.HTTPError, TimeoutError) as exc:
            # this job's failure (tried again, a bounded number of times), not the worker's
            # dependency down: one push service unreachable holds up no other's messages
            raise PushUnreachable(f"{type(exc).__name__}: {exc}") from None
        return response.status_code

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
