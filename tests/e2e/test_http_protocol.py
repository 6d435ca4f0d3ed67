"""What `BoundedHttpToolsProtocol` counts against uvicorn's `limit_concurrency`: the requests
the app is working on (whole, and not answered yet), and nothing else.

A real uvicorn server with the protocol runs in a thread of the test process, over loopback
sockets, in front of a small ASGI app whose requests are held or answered as each test needs:
`/slow` until the test releases it, `/big` with 20 MB (to a client that does not read it),
`/body` once its body has arrived, anything else at once. Every request the app gets is
put on `arrived`, so a test waits for that fact before it looks at the limit.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import httpx
import uvicorn

from infra.http_protocol import BoundedHttpToolsProtocol
from tests.servers import free_port, wait_until
from tests.support.launchers import connect, read_until_closed, status_of

WAIT = 30.0


@dataclass
class App:
    arrived: queue.Queue[str] = field(default_factory=queue.Queue)
    release: threading.Event = field(default_factory=threading.Event)

    async def __call__(self, scope, receive, send) -> None:
        assert scope["type"] == "http"
        path = scope["path"]
        self.arrived.put(path)
        body = b"ok"
        if path == "/slow":
            while not self.release.is_set():  # the app at work, until the test says
                await asyncio.sleep(0.01)
        elif path == "/big":
            body = b"x" * 20_000_000
        elif path == "/body":
            more = True
            while more:
                message = await receive()
                more = message.get("more_body", False)
        headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def wait_arrivals(self, count: int) -> None:
        for _ in range(count):
            self.arrived.get(timeout=WAIT)


@contextmanager
def serving(app: App, limit: int) -> Iterator[str]:
    config = uvicorn.Config(
        app, host="127.0.0.1", port=free_port(), http=BoundedHttpToolsProtocol,
        limit_concurrency=limit, lifespan="off", log_level="critical", access_log=False,
        timeout_graceful_shutdown=1,
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, WAIT, "the server started")
        yield f"http://127.0.0.1:{config.port}"
    finally:
        app.release.set()
        server.should_exit = True
        thread.join(WAIT)


def held(base: str, stack: ExitStack, request: bytes, count: int):
    """`count` connections that each sent `request` (and read nothing)."""
    socks = [stack.enter_context(connect(base)) for _ in range(count)]
    for sock in socks:
        sock.sendall(request)
    return socks


def check_busy(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["retry-after"].isdigit()
    problem = response.json()
    assert (problem["status"], problem["code"]) == (503, "server_busy"), problem


def test_requests_the_app_works_on_count_and_the_liveness_probe_is_exempt() -> None:
    """Limit 2, two requests in the app: any other request is 503 (a problem document with
    Retry-After), /health is served; once they are answered, everything is served again."""
    app = App()
    with serving(app, limit=2) as base, ExitStack() as stack, httpx.Client(base_url=base) as http:
        slow = held(base, stack, b"GET /slow HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 2)
        app.wait_arrivals(2)
        check_busy(http.get("/other"))
        check_busy(http.post("/body", content=b"{}"))
        assert http.get("/health").status_code == 200
        assert http.get("/health?probe=1").status_code == 200
        app.release.set()
        assert [status_of(read_until_closed(sock)) for sock in slow] == [200, 200]
        assert http.get("/other").status_code == 200


def test_connections_without_a_whole_request_and_slow_readers_take_no_concurrency() -> None:
    """Limit 2 and, open at once: 3 idle connections, 3 trickling a head, 3 whose request the
    app holds waiting for a body that has not come, and 3 that do not read the 20 MB answer
    the app is sending them. None of them is work the app does: another client is served."""
    app = App()
    with serving(app, limit=2) as base, ExitStack() as stack, httpx.Client(base_url=base) as http:
        held(base, stack, b"", 3)
        held(base, stack, b"GET /other HTTP/1.1\r\nHost: t\r\n", 3)
        held(base, stack, b"POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n{", 3)
        app.wait_arrivals(3)
        for _ in range(3):  # one at a time: sent together, two could be in the app at once
            (reader,) = held(base, stack, b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n", 1)
            app.wait_arrivals(1)
            reader.settimeout(WAIT)
            assert reader.recv(1) == b"H"  # its answer has begun; the rest is never read
        answers = [http.get("/other") for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 200], [a.text for a in answers]
        sent = http.post("/body", content=b"0123456789")
        assert sent.status_code == 200, sent.text


def test_a_request_whose_client_left_counts_until_the_app_is_done_with_it() -> None:
    """The work goes on when the client hangs up: limit 1, a request in the app whose client
    closed still makes the next one 503, until the app has finished it."""
    app = App()
    with serving(app, limit=1) as base, httpx.Client(base_url=base) as http:
        with connect(base) as sock:
            sock.sendall(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
            app.wait_arrivals(1)
        check_busy(http.get("/other"))
        app.release.set()
        wait_until(lambda: http.get("/other").status_code == 200, WAIT, "served again")


def test_a_malformed_request_is_a_problem_document() -> None:
    """What the parser refuses is answered as the app answers bad input: 400 problem+json."""
    app = App()
    with serving(app, limit=2) as base, connect(base) as sock:
        sock.sendall(b"GET /other HTTP/1.1\r\nHost t\r\n\r\n")
        answer = read_until_closed(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status_of(answer) == 400, answer
    assert b"\r\ncontent-type: application/problem+json" in head.lower(), head
    assert json.loads(body)["code"] == "invalid_request"
