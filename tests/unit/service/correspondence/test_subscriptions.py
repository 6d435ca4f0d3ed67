"""Push subscriptions (service.correspondence.use_cases) on the in-memory store: one per
browser endpoint, a bound per player, the endpoints the service refuses to post to, and an
`Idempotency-Key` honoured as by every create; a refusal changes nothing."""

from __future__ import annotations

import asyncio

import pytest

from infra.memory_push import MemoryPlayerStore
from service.core.callers import ANONYMOUS, Caller
from service.core.errors import ServiceError
from service.core.unit_of_work import Retry
from service.correspondence.records import PushKeys
from service.correspondence.use_cases import Correspondence

KEYS = PushKeys(p256dh="B" + "A" * 86, auth="A" * 22)
OTHER = PushKeys(p256dh="BAQ" + "A" * 84, auth="Q" * 21 + "A")


def _corr(**options) -> Correspondence:
    return Correspondence(MemoryPlayerStore(), Retry(3), clock=lambda: 1.0, **options)


async def _refused(code: str, call) -> None:
    with pytest.raises(ServiceError) as caught:
        await call
    assert caught.value.code == code


def test_subscribing_a_browser_again_is_the_same_subscription_its_keys_replaced():
    async def body() -> None:
        corr = _corr()
        _, first, _ = await corr.subscribe(ANONYMOUS, "ann", "https://push.example/a", KEYS)
        _, again, _ = await corr.subscribe(ANONYMOUS, "ann", "https://push.example/a", OTHER)
        assert again.id == first.id
        assert again.keys == OTHER
        _, held = await corr.subscriptions(ANONYMOUS, "ann")
        assert [s.id for s in held] == [first.id]

    asyncio.run(body())


def test_a_player_holds_a_bounded_number_of_subscriptions():
    async def body() -> None:
        corr = _corr(max_subscriptions=2)
        for n in range(2):
            await corr.subscribe(ANONYMOUS, "ann", f"https://push.example/{n}", KEYS)
        before = await corr.players.load_player("ann")
        await _refused(
            "too_many_push_subscriptions",
            corr.subscribe(ANONYMOUS, "ann", "https://push.example/2", KEYS),
        )
        assert await corr.players.load_player("ann") == before

    asyncio.run(body())


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://push.example/a",  # not https
        "http://127.0.0.1:9/a",  # loopback, not allowed here
        "https://192.168.1.2/a",  # this network's
        "https://[::1]/a",
        "https://u:p@push.example/a",  # credentials in it
        "https://push.example:99999/a",  # no port
        # an address in any spelling a resolver accepts
        "https://2130706433/a",
        "https://127.1/a",
        "https://0x7f000001/a",
        "https://0/a",
        "https://0177.0.0.1/a",
        "https://127.0.0.1./a",
        "https://8.8.8.8/a",
        "https://[::ffff:127.0.0.1]/a",
        "https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/a",  # full-width digits
        "https://%31%32%37.0.0.1/a",
        # names of this network: a single label, a private zone
        "https://push/a",
        "https://metadata.google.internal/a",
        "https://redis.localhost/a",
        "https://printer.local/a",
        "https://localhost/a",
    ],
)
def test_an_endpoint_the_service_will_not_post_to_is_refused_and_nothing_stored(endpoint):
    async def body() -> None:
        corr = _corr()
        await _refused("push_endpoint_refused", corr.subscribe(ANONYMOUS, "ann", endpoint, KEYS))
        assert await corr.players.load_player("ann") is None

    asyncio.run(body())


def test_a_loopback_endpoint_over_http_when_the_operator_allows_it():
    async def body() -> None:
        corr = _corr(allow_http_loopback=True)
        _, made, _ = await corr.subscribe(ANONYMOUS, "ann", "http://127.0.0.1:9/a", KEYS)
        assert made.endpoint == "http://127.0.0.1:9/a"

    asyncio.run(body())


def test_an_idempotency_key_hands_the_first_answer_back_and_refuses_another_body():
    async def body() -> None:
        corr = _corr()
        ann = Caller(kind="player", player_id="ann")
        _, first, replayed = await corr.subscribe(ann, None, "https://push.example/a", KEYS, "k1")
        assert not replayed
        _, again, replayed = await corr.subscribe(ann, None, "https://push.example/a", KEYS, "k1")
        assert (again, replayed) == (first, True)
        before = await corr.players.load_player("ann")
        await _refused(
            "idempotency_key_reused",
            corr.subscribe(ann, None, "https://push.example/b", KEYS, "k1"),
        )
        assert await corr.players.load_player("ann") == before

    asyncio.run(body())


def test_a_key_the_platform_used_for_one_player_is_refused_for_another():
    async def body() -> None:
        corr = _corr()
        platform = Caller(kind="platform")
        await corr.subscribe(platform, "ann", "https://push.example/a", KEYS, "k1")
        await _refused(
            "idempotency_key_reused",
            corr.subscribe(platform, "bob", "https://push.example/a", KEYS, "k1"),
        )
        assert await corr.players.load_player("bob") is None
        _, again, replayed = await corr.subscribe(
            platform, "ann", "https://push.example/a", KEYS, "k1"
        )
        assert replayed
        _, held = await corr.subscriptions(platform, "ann")
        assert held == (again,)

    asyncio.run(body())


def test_a_request_refused_leaves_its_key_free_for_another():
    async def body() -> None:
        corr = _corr(max_subscriptions=1)
        platform = Caller(kind="platform")
        await corr.subscribe(platform, "ann", "https://push.example/a", KEYS)
        await _refused(
            "too_many_push_subscriptions",
            corr.subscribe(platform, "ann", "https://push.example/b", KEYS, "k1"),
        )
        _, made, replayed = await corr.subscribe(
            platform, "bob", "https://push.example/b", KEYS, "k1"
        )
        assert (made.endpoint, replayed) == ("https://push.example/b", False)

    asyncio.run(body())


def test_whose_subscriptions_a_caller_may_name():
    async def body() -> None:
        corr = _corr(identities_open=False)
        await _refused("authentication_required", corr.subscriptions(ANONYMOUS, None))
        await _refused("authentication_required", corr.subscriptions(ANONYMOUS, "ann"))
        await _refused("player_id_required", _corr().subscriptions(ANONYMOUS, None))
        ann = Caller(kind="player", player_id="ann")
        await _refused("player_id_not_yours", corr.subscriptions(ann, "bob"))
        assert (await corr.subscriptions(ann, None))[0] == "ann"
        assert (await corr.subscriptions(Caller(kind="platform"), "bob"))[0] == "bob"
        await _refused("push_subscription_not_found", corr.unsubscribe(ann, None, "nope"))

    asyncio.run(body())
