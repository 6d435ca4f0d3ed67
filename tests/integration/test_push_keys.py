"""The VAPID key of replicas on one Redis with no key configured (infra.push_keys): made
once, by whichever replica asks first, and the same for every replica after, so a browser
subscribed through one replica gets pushes another signs; the embedded store makes its own."""

from __future__ import annotations

import asyncio
import secrets

import redis

from infra.push_keys import shared_private_key
from infra.push_sender import WebPushSender
from service.bootstrap.capabilities import vapid_private_key
from service.core.settings import CorrespondenceSettings, RedisSettings, Settings


def test_replicas_on_one_redis_share_one_key_made_once(redis_url):
    key = f"test:vapid:{secrets.token_hex(6)}"
    client = redis.Redis.from_url(redis_url)
    try:
        first = shared_private_key(redis_url, key=key)
        again = shared_private_key(redis_url, key=key)
        assert first == again
        assert client.get(key).decode() == first
        one, other = (WebPushSender(pem, "mailto:ops@example.org") for pem in (first, again))
        assert one.public_key == other.public_key
    finally:
        client.delete(key)
        client.close()


def test_the_shared_key_is_read_from_inside_a_running_event_loop(redis_url):
    key = f"test:vapid:{secrets.token_hex(6)}"

    async def composing() -> str:  # as the app is composed under a running server
        return shared_private_key(redis_url, key=key)

    client = redis.Redis.from_url(redis_url)
    try:
        made = asyncio.run(composing())
        assert shared_private_key(redis_url, key=key) == made
    finally:
        client.delete(key)
        client.close()


def test_a_configured_key_is_used_and_the_embedded_store_makes_its_own():
    configured = Settings(
        redis=RedisSettings(url="redis://127.0.0.1:9/0"),  # never asked: the key is set
        correspondence=CorrespondenceSettings(vapid_private_key="k"),
    )
    assert vapid_private_key(configured) == "k"
    assert vapid_private_key(Settings()) is None
