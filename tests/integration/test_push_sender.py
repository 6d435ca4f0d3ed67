"""The Web Push sender (infra.push_sender) against servers on loopback: it posts a message
encrypted and signed to the address it checked, refuses a name resolving to an address of
this network before any connection, follows no redirect and reads a bounded answer."""

from __future__ import annotations

import asyncio

import pytest

from infra.push_sender import WebPushSender
from service.correspondence.notices import EndpointRefused
from service.correspondence.records import PushKeys, PushSubscription
from tests.support.push import PushEndpoint

FAILSAFE = 60.0  # seconds: a bound on a test that never waits for a time


class Resolver:
    """A resolver that answers the addresses it is given, and remembers what it was asked."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = list(addresses)
        self.asked: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        return self.addresses


def _subscription(endpoint: str, keys: dict[str, str] | None = None) -> PushSubscription:
    keys = keys or PushEndpoint().keys  # a browser's keys (its server not started)
    return PushSubscription(id="s1", endpoint=endpoint, keys=PushKeys(**keys), created_at=1.0)


def _sender(resolver: Resolver, *, allow_loopback: bool) -> WebPushSender:
    return WebPushSender(
        None, "mailto:ops@example.org", allow_loopback=allow_loopback, resolve=resolver,
        timeout=FAILSAFE,
    )  # fmt: skip


def test_a_message_is_posted_encrypted_and_signed_to_the_address_its_name_resolved_to():
    async def body() -> None:
        resolver = Resolver("127.0.0.1")
        sender = _sender(resolver, allow_loopback=True)
        endpoint = PushEndpoint(sender.public_key).start()
        try:
            port = endpoint.server.server_address[1]
            keys = endpoint.keys
            subscription = _subscription(f"http://localhost:{port}/a", keys)
            status = await sender.send(subscription, b'{"type": "your_turn"}', 60)
        finally:
            endpoint.stop()
            await sender.close()
        assert status == 201
        assert resolver.asked == [("localhost", port)]
        [pushed] = endpoint.received
        assert (pushed.path, pushed.payload, pushed.signed) == ("/a", {"type": "your_turn"}, True)

    asyncio.run(body())


@pytest.mark.parametrize(
    "addresses",
    [
        ("10.0.0.7",),
        ("93.184.216.34", "10.0.0.7"),  # one address of this network among public ones
        ("169.254.169.254",),  # a cloud's metadata service
        ("127.0.0.1",),  # loopback, not allowed here
        ("::ffff:127.0.0.1",),
        ("fd00::1",),
        (),
    ],
)
def test_a_name_resolving_to_an_address_of_this_network_is_refused(addresses):
    async def body() -> None:
        sender = _sender(Resolver(*addresses), allow_loopback=False)
        try:
            with pytest.raises(EndpointRefused):
                await sender.send(_subscription("https://push.example/a"), b"{}", 60)
        finally:
            await sender.close()

    asyncio.run(body())


def test_an_endpoint_refused_when_subscribing_is_refused_when_sending_without_resolving():
    async def body() -> None:
        resolver = Resolver("93.184.216.34")
        sender = _sender(resolver, allow_loopback=False)
        try:
            with pytest.raises(EndpointRefused):
                await sender.send(_subscription("https://2130706433/a"), b"{}", 60)
        finally:
            await sender.close()
        assert resolver.asked == []

    asyncio.run(body())


async def _answering(answer: bytes, endless: bool = False):
    """A server on loopback answering every request with `answer` (then endless chunks of
    an answer body when `endless`), counting its connections."""
    connections = [0]
    heads: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections[0] += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            heads.append(head)
            length = next(
                (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                 if line.lower().startswith(b"content-length:")),
                0,
            )  # fmt: skip
            await reader.readexactly(length)
            writer.write(answer)
            while endless:
                writer.write(b"4000\r\n" + b"x" * 0x4000 + b"\r\n")
                await writer.drain()
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass  # the sender hung up: what it should do on an endless answer
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], connections, heads


def test_a_redirect_is_answered_not_followed():
    async def body() -> None:
        elsewhere, other_port, reached, _ = await _answering(b"HTTP/1.1 201 Created\r\n\r\n")
        redirect = (
            f"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{other_port}/x\r\n"
            "Content-Length: 0\r\n\r\n"
        ).encode()
        server, port, _, _ = await _answering(redirect)
        sender = _sender(Resolver("127.0.0.1"), allow_loopback=True)
        try:
            subscription = _subscription(f"http://127.0.0.1:{port}/a")
            status = await sender.send(subscription, b"{}", 60)
        finally:
            await sender.close()
            server.close()
            elsewhere.close()
        assert status == 307
        assert reached == [0]

    asyncio.run(body())


def test_an_endless_answer_is_read_only_in_part():
    async def body() -> None:
        start = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        server, port, connections, _ = await _answering(start, endless=True)
        sender = _sender(Resolver("127.0.0.1"), allow_loopback=True)
        try:
            subscription = _subscription(f"http://127.0.0.1:{port}/a")
            status = await sender.send(subscription, b"{}", 60)
        finally:
            await sender.close()
            server.close()
        assert (status, connections) == (201, [1])

    asyncio.run(body())


def test_the_request_names_the_endpoints_host_while_it_goes_to_the_address_checked():
    async def body() -> None:
        server, port, _, heads = await _answering(b"HTTP/1.1 201 Created\r\n\r\n")
        resolver = Resolver("127.0.0.1")
        sender = _sender(resolver, allow_loopback=True)
        try:
            subscription = _subscription(f"http://localhost:{port}/a?b=1")
            status = await sender.send(subscription, b"{}", 60)
        finally:
            await sender.close()
            server.close()
        assert status == 201
        [head] = heads
        lines = head.decode().lower().split("\r\n")
        assert lines[0] == "post /a?b=1 http/1.1"
        assert f"host: localhost:{port}" in lines
        assert "content-encoding: aes128gcm" in lines
        assert "ttl: 60" in lines

    asyncio.run(body())
