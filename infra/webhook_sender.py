"""Webhook attempts over HTTP (service.reactions.webhook_delivery.Sender): signed as the Standard Webhooks
spec says (`webhook-id`, `webhook-timestamp`, `webhook-signature`, signed for each
attempt's time, so a receiver refuses a replay more than 5 minutes old), POSTed with httpx,
redirects not followed."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
from standardwebhooks import Webhook

# answers that say the request itself will never be accepted: the delivery is set aside at
# once (every other failure is tried again with a backoff until TEN_WEBHOOK_RETENTION)
TRANSIENT_4XX = frozenset((408, 409, 425, 429))


def signed_headers(signer: Webhook, message_id: str, body: bytes, now: float) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt, signed for its time `now`."""
    stamp = int(now)
    signature = signer.sign(message_id, datetime.fromtimestamp(stamp, UTC), body.decode())
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": signature,
        "content-type": "application/json",
        "user-agent": "ten-webhooks",
    }


class HttpSender:
    """`secret`: `whsec_` + base64 (TEN_WEBHOOK_SECRET); `client`: an httpx client (owned:
    closed with the sender)."""

    def __init__(
        self, secret: str, *, timeout: float = 10.0, client: httpx.AsyncClient | None = None
    ) -> None:
        if not secret:
            raise ValueError("webhook endpoints need a signing secret")
        self.signer = Webhook(secret)
        self.timeout = timeout
        self.client = client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)

    async def send(
        self, url: str, message_id: str, body: bytes, now: float
    ) -> tuple[str | None, bool]:
        headers = signed_headers(self.signer, message_id, body, now)
        try:
            async with asyncio.timeout(self.timeout):
                response = await self.client.post(url, content=body, headers=headers)
        except (httpx.HTTPError, TimeoutError, OSError) as exc:
            return type(exc).__name__, False
        status = response.status_code
        if 200 <= status < 300:
            return None, False
        return f"HTTP {status}", 400 <= status < 500 and status not in TRANSIENT_4XX

    async def close(self) -> None:
        await self.client.aclose()
