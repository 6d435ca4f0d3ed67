"""The VAPID key every replica signs pushes with when the operator set none
(`TEN_VAPID_PRIVATE_KEY` unset) and the service runs on Redis: made once, kept in Redis,
read by every replica (`shared_private_key`). A browser subscribes with the public key one
replica handed out and any replica sends its pushes; the push services refuse a signature
of another key. The embedded store (one process) keeps making its key in the process.

Whoever can read this Redis can read the key (and sign pushes to the service's
subscribers): a deployment that guards its Redis less than its secrets sets the key."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from py_vapid import Vapid02

VAPID_KEY = "ten:vapid-private-key"  # the PEM of the key every replica signs with
WAIT = 30.0  # seconds to get the key at start (Redis's own timeouts come first)


def _made() -> str:
    key = Vapid02()
    key.generate_keys()
    return key.private_pem().decode()


async def _kept(client, key: str, made: str) -> str:
    """The key kept under `key`: `made` if none was (set once: the first replica's)."""
    await client.set(key, made, nx=True)
    held = await client.get(key)
    if held is None:  # removed between the two commands: keep ours
        await client.set(key, made, nx=True)
        held = await client.get(key)
    return held.decode() if isinstance(held, bytes) else str(held)


def shared_private_key(
    url: str,
    *,
    cluster: bool = False,
    sentinels: Sequence[tuple[str, int]] = (),
    master: str = "mymaster",
    key: str = VAPID_KEY,
) -> str:
    """The PEM of the replicas' VAPID key, made and kept in Redis by the first to ask.
    Called while the service is composed (synchronously, perhaps inside a running event
    loop): the exchange runs on a loop of its own in a thread. Raises if Redis does not
    answer (the replicas would sign with keys of their own)."""
    from infra.redis_client import connect  # noqa: PLC0415 - redis-py only when configured

    async def exchange() -> str:
        client = connect(url, cluster=cluster, sentinels=sentinels, master=master)
        try:
            return await _kept(client, key, _made())
        finally:
            await client.aclose()

    with ThreadPoolExecutor(1, thread_name_prefix="ten-vapid") as pool:
        return pool.submit(asyncio.run, exchange()).result(timeout=WAIT)
