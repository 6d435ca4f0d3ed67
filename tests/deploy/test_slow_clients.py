"""Slow clients, on both ways the service is started: the image's command (with the image's
environment, tests/deploy/test_dockerfile.py) and `bash scripts/run` (the README's run
command, tests/support/launchers.py).

- a body that has not arrived within TEN_BODY_TIMEOUT of its headers is answered 408 (a
  problem document) and its connection closed; if the app had answered already, the
  connection is closed all the same;
- connections that have not delivered a whole request (trickling heads or bodies) take none
  of the concurrency UVICORN_LIMIT_CONCURRENCY grants: a normal client is served while
  hundreds trickle;
- `scripts/run` keeps the image's bounds on heads (431 past TEN_MAX_HEADER_BYTES, closed past
  TEN_HEADER_TIMEOUT) and its concurrency limit.
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import time
from pathlib import Path

import httpx
import pytest

from tests.servers import ROOT, wait_until
from tests.support.api import README_DECK
from tests.support.image import image_command, image_env
from tests.support.launchers import (
    Trickle,
    connect,
    head_and_body,
    scripts_run,
    send_until_answered,
    status_of,
)

LAUNCHERS = {"image": image_command, "scripts-run": scripts_run}
POST = b"POST /v1/games HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
GAME = {"players": [{"name": "Ann"}], "deck": README_DECK, "starting_seat": 0}
WAIT = 30.0  # the longest any fact below is waited for


@pytest.fixture(params=sorted(LAUNCHERS))
def launch(request: pytest.FixtureRequest):
    return LAUNCHERS[request.param]


def drip_until_closed(sock: socket.socket, drip: bytes, every: float = 0.2) -> bytes:
    """Send `drip` every `every` seconds, whatever the server answers, until it closes the
    connection; everything it sent. Fails if it is still open after WAIT seconds."""
    answer = b""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], every)
        if readable:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return answer
            if not chunk:
                return answer
            answer += chunk
            continue
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(drip)  # closed, if it raises: the next read says so
    raise AssertionError(f"still open after {WAIT:g} s; answered so far: {answer[:300]!r}")


def check_408(answer: bytes) -> None:
    assert answer, "closed without an answer"
    head, body = head_and_body(answer)
    assert status_of(answer) == 408, answer[:300]
    assert b"\r\ncontent-type: application/problem+json" in head, head
    assert b"\r\nconnection: close" in head, head
    problem = json.loads(body)
    assert (problem["status"], problem["code"]) == (408, "request_timeout"), problem


def test_a_body_trickled_past_the_body_timeout_gets_408_and_is_closed(
    launch, tmp_path: Path
) -> None:
    """A byte of body every 0.2 s, with a Content-Length or chunked: 408 problem+json at
    TEN_BODY_TIMEOUT and closed. Answered before its body arrived (413, a Content-Length past
    TEN_MAX_BODY_BYTES), a body still trickling is cut too: closed, after the 413 alone."""
    with launch(tmp_path, {"TEN_BODY_TIMEOUT": "1"}) as (_, base):
        with connect(base) as sock:
            sock.sendall(POST + b"Content-Length: 1000\r\n\r\n{")
            check_408(drip_until_closed(sock, b" "))
        with connect(base) as sock:
            sock.sendall(POST + b"Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n")
            check_408(drip_until_closed(sock, b"1\r\n \r\n"))
        with connect(base) as sock:
            sock.sendall(POST + b"Content-Length: 10000000\r\n\r\n{")
            answer = drip_until_closed(sock, b" " * 100)
            assert status_of(answer) == 413, answer[:300]
            assert answer.count(b"HTTP/1.1 ") == 1, answer[:600]
        assert httpx.get(f"{base}/health").status_code == 200


def test_a_normal_client_is_served_while_hundreds_of_connections_trickle(
    launch, tmp_path: Path
) -> None:
    """UVICORN_LIMIT_CONCURRENCY=64, and 128 connections whose requests the app holds waiting
    for a body that trickles (each asked for it: `100 Continue`) plus 64 trickling their
    headers: a normal client creates and reads games, never a 503; the tricklers are all
    still there, admitted, when it is done."""
    env = {
        "UVICORN_LIMIT_CONCURRENCY": "64",
        "TEN_BODY_TIMEOUT": "600",
        "TEN_HEADER_TIMEOUT": "600",
    }
    with launch(tmp_path, env) as (_, base):
        body_head = POST + b"Content-Length: 60000\r\nExpect: 100-continue\r\n\r\n"
        bodies = Trickle(base, 128, body_head, b" ")
        heads = Trickle(base, 64, b"GET /v1/games HTTP/1.1\r\nHost: t\r\n", b"X-Slow: 1\r\n")
        try:
            firsts = [answer.split(b"\r\n", 1)[0] for answer in bodies.first_answers(WAIT)]
            bodies.start()
            heads.start()
            statuses = []
            with httpx.Client(base_url=base, timeout=WAIT) as http:
                for _ in range(10):
                    created = http.post("/v1/games", json=GAME)
                    statuses.append(created.status_code)
                    if created.status_code == 201:
                        game = created.json()
                        token = game["seats"][0]["token"]
                        read = http.get(
                            f"/v1/games/{game['id']}", headers={"Authorization": f"Bearer {token}"}
                        )
                        statuses.append(read.status_code)
            still_open = (len(bodies.socks), len(heads.socks))
        finally:
            bodies.close()
            heads.close()
        assert statuses == [201, 200] * 10, statuses
        assert firsts.count(b"HTTP/1.1 100 Continue") == 128, sorted(set(firsts))
        assert still_open == (128, 64)


def test_scripts_run_refuses_a_large_head_and_closes_trickling_heads(tmp_path: Path) -> None:
    """The README's run command bounds heads as the image does: a 1 MB header value is
    answered 431 (and the connection closed, the rest unread), and 20 connections trickling a
    header line every 0.2 s are all closed once TEN_HEADER_TIMEOUT is past (408 or nothing)."""
    with scripts_run(tmp_path, {"TEN_HEADER_TIMEOUT": "1"}) as (_, base):
        with connect(base) as sock:
            big = b"GET /health HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 1_000_000 + b"\r\n\r\n"
            answer = send_until_answered(sock, big)
        assert answer, "closed without an answer"
        assert status_of(answer) == 431, answer[:300]

        trickle = Trickle(base, 20, b"GET /health HTTP/1.1\r\nHost: t\r\n", b"X-Slow: 1\r\n", 0.2)
        try:
            trickle.start()
            wait_until(lambda: trickle.closed == 20, WAIT, "20 trickling heads closed")
        finally:
            trickle.close()
        assert {status_of(a) if a else None for a in trickle.answers} <= {408, None}
        assert httpx.get(f"{base}/health").status_code == 200


def test_scripts_run_defaults_to_the_images_protocol_and_concurrency_limit() -> None:
    """The two launchers cannot drift: scripts/run's defaults are the image's ENV."""
    script = (ROOT / "scripts/run").read_text()
    env = image_env()
    for name in ("UVICORN_HTTP", "UVICORN_LIMIT_CONCURRENCY"):
        found = re.search(rf'^: "\$\{{{name}:=([^}}]+)\}}"$', script, re.M)
        assert found, f"scripts/run sets no default {name}"
        assert found.group(1) == env[name], (name, found.group(1), env[name])
        assert re.search(rf"\bexport\b.*\b{name}\b", script), f"{name} is not exported"
