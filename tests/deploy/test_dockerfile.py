"""The Dockerfile, without a Docker engine (none runs here, so the image is never built).

What can be checked without building it is: the Dockerfile as BuildKit parses it (the
`dockerfile` package wraps BuildKit's own Go parser, heredocs included) against the
invariants of the image, consistently with the Helm chart; and the image's exact start
command, run here against the working tree with the image's environment: the same launcher
script (extracted from the Dockerfile), the same ENV, a working directory standing for /data.
What this does NOT show: that the image builds, that the slim base has what the launcher
needs (sh, sleep: both are in Debian's base), and tini as PID 1 (used here only when a `tini`
binary is installed on the machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import yaml

from tests.support.api import README_DECK, README_GAME
from tests.support.image import (
    exit_code,
    final_stage,
    image_command,
    image_env,
    instructions,
    launcher,
    only,
    output,
    stages,
)

ROOT = Path(__file__).resolve().parents[2]
BUILD_TOOLS = re.compile(
    r"\b(build-essential|gcc|g\+\+|clang|make|cmake|python3?-dev|libpq-dev|cargo|rustc|pip3? install|git)\b"
)

HANG = 60.0  # seconds a test waits for a fact before it calls the server hung


# ---------------------------------------------------------------- static invariants
def test_multi_stage_with_a_slim_final_stage() -> None:
    all_stages = stages()
    assert len(all_stages) >= 2
    args = {
        c.value[0].split("=", 1)[0]: c.value[0].split("=", 1)[1]
        for c in instructions()
        if c.cmd == "ARG" and "=" in c.value[0]
    }
    base = final_stage()[0].value[0]
    base = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], base)
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", base), base
    build_name = all_stages[0][0].value[-1]
    copied_from = {f.split("=", 1)[1] for c in final_stage() if c.cmd == "COPY" for f in c.flags}
    assert build_name in copied_from  # the venv comes from the build stage


def test_the_final_stage_installs_no_build_tools() -> None:
    for cmd in final_stage():
        if cmd.cmd == "RUN":
            assert not BUILD_TOOLS.search(cmd.value[0]), cmd.original
            assert "pip" not in cmd.value[0], cmd.original
    # ...whereas the build stage is where they are
    assert any(c.cmd == "RUN" and "build-essential" in c.value[0] for c in stages()[0])


def test_runs_as_a_numeric_non_root_user_matching_the_chart() -> None:
    user = only(final_stage(), "USER").value[0]
    match = re.fullmatch(r"(\d+):(\d+)", user)
    assert match, f"USER {user}: numeric uid:gid, so runAsNonRoot can verify it"
    assert int(match.group(1)) != 0
    chart_helpers = (ROOT / "helm/ten/templates/_helpers.tpl").read_text()
    assert f"runAsUser: {match.group(1)}" in chart_helpers
    assert f"runAsGroup: {match.group(2)}" in chart_helpers
    # nothing runs as root after USER
    after = final_stage()[final_stage().index(only(final_stage(), "USER")) :]
    assert all(c.cmd != "RUN" for c in after)


def test_exec_form_entrypoint_cmd_and_healthcheck() -> None:
    entrypoint = only(final_stage(), "ENTRYPOINT")
    cmd = only(final_stage(), "CMD")
    health = only(final_stage(), "HEALTHCHECK")
    for instruction in (entrypoint, cmd, health):
        assert instruction.json, f"{instruction.original}: exec (JSON) form"
    assert entrypoint.value[0].endswith("/tini")  # PID 1 forwards signals and reaps
    assert list(cmd.value) == [Path(launcher()[0]).name]
    assert health.value[0] == "CMD"
    assert "/health" in " ".join(health.value)
    assert only(final_stage(), "STOPSIGNAL").value[0] == "SIGTERM"
    path, mode, script = launcher()
    assert path.startswith("/usr/local/bin/")
    assert int(mode, 8) & 0o111
    assert re.search(r"^exec uvicorn service\.app:app ", script, re.M), "exec: no shell in between"


def test_read_only_root_filesystem_layout_matches_the_chart() -> None:
    env = image_env()
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert int(env["WEB_CONCURRENCY"]) >= 2  # several workers (on Redis)
    assert int(env["UVICORN_TIMEOUT_GRACEFUL_SHUTDOWN"]) > 0
    workdir = [c.value[0] for c in final_stage() if c.cmd == "WORKDIR"][-1]
    volumes = set(only(final_stage(), "VOLUME").value)
    assert {workdir, "/tmp"} <= volumes
    deployment = (ROOT / "helm/ten/templates/deployment.yaml").read_text()
    for path in (workdir, "/tmp"):
        assert f"mountPath: {path}}}" in deployment  # writable emptyDirs in the pod
    (port,) = only(final_stage(), "EXPOSE").value
    assert f"containerPort: {port}," in deployment
    # bytecode is compiled at build time, since the container cannot write it
    assert any(c.cmd == "RUN" and "compileall" in c.value[0] for c in stages()[0])


def test_oci_labels() -> None:
    label = only(final_stage(), "LABEL").value
    labels = dict(zip(label[::2], label[1::2], strict=True))
    for key in ("title", "description", "version", "revision", "licenses"):
        assert labels.get(f"org.opencontainers.image.{key}"), key


def test_the_image_installs_the_pinned_runtime_dependencies_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = project["dependencies"] + project["optional-dependencies"]["otel"]
    assert runtime
    for requirement in runtime:
        assert re.match(r"^[\w.\-\[\]]+==[\w.]+", requirement), requirement
    build = " ".join(c.value[0] for c in stages()[0] if c.cmd == "RUN")
    assert (
        "['project']; print('\\n'.join(p['dependencies'] + p['optional-dependencies']['otel']))"
        in build
    )
    assert "'dev'" not in build
    assert ".[dev]" not in build


def test_dockerignore_lets_in_what_the_build_copies_and_nothing_else() -> None:
    lines = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*"  # everything is out (.venv, .git, tests, local databases) ...
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    copied = set()
    for cmd in instructions():
        if cmd.cmd == "COPY" and not cmd.flags and not cmd.heredocs:
            copied.update(src.rstrip("/") for src in cmd.value[:-1])
    assert copied == allowed  # ... but what the build copies
    for path in copied:
        assert (ROOT / path).exists(), path


# ---------------------------------------------------------------- the documentation site


def docs_stage() -> list:
    """The stage that builds the documentation site (`mkdocs build`)."""
    (stage,) = [
        stage
        for stage in stages()
        if any(c.cmd == "RUN" and "mkdocs build" in c.value[0] for c in stage)
    ]
    return stage


def mkdocs_site_dir() -> str:
    """mkdocs.yml's site_dir: where the service serves the site from (service/static/site)."""
    # the config's !!python tags (a slugify function) are not for this reader
    text = (ROOT / "mkdocs.yml").read_text()
    return yaml.safe_load(re.search(r"^site_dir: .*$", text, re.M).group(0))["site_dir"]


def test_the_image_holds_the_documentation_site_built_in_a_stage_of_its_own() -> None:
    """The service serves the site at /static/site/index.html: the image builds it (MkDocs
    with docs/requirements.txt, --strict: a warning fails the image's build) in a stage whose
    only output the final stage takes is the site, put where the service serves it (mkdocs.yml's
    site_dir, under the code's /app). MkDocs itself stays in that stage."""
    stage = docs_stage()
    name = stage[0].value[-1]
    runs = " ".join(c.value[0] for c in stage if c.cmd == "RUN")
    assert "-r docs/requirements.txt" in runs
    built = re.search(r"mkdocs build --strict --site-dir (\S+)", runs)
    assert built, runs
    taken = [c for c in final_stage() if c.cmd == "COPY" and f"--from={name}" in c.flags]
    assert [list(c.value) for c in taken] == [[built.group(1), f"/app/{mkdocs_site_dir()}"]]
    assert image_env()["PYTHONPATH"] == "/app"  # the code, whose service/static is served
    # the runtime's virtualenv is the build stage's, not one with MkDocs in it
    assert not any("/opt/venv" in " ".join(c.value) for c in taken)
    assert not any("mkdocs" in c.original for c in final_stage() if c.cmd == "RUN")
    # a site a local set-up built (scripts/setup, gitignored) stays out of the build context:
    # `COPY service` would otherwise put it in the image, whatever state it is in
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignore.index(mkdocs_site_dir()) > ignore.index("!service/")


def test_the_docs_stage_builds_the_site_from_what_it_copies(tmp_path: Path) -> None:
    """The docs stage's COPY lines, played into a directory standing for its WORKDIR, and then
    its `mkdocs build --strict` (with the MkDocs of docs/requirements.txt in .venv, as the
    stage installs it): every file the pages link outside docs/ is in the stage (a missing
    one is a warning, so a failed build), and the site has its pages and the API reference.
    (The stage's own `pip install` and base image are not run here: no Docker engine.)"""
    mkdocs = Path(sys.executable).parent / "mkdocs"
    assert mkdocs.is_file(), (
        f"{mkdocs} is missing: bash scripts/setup installs docs/requirements.txt"
    )
    workdir = tmp_path / "src"
    for cmd in docs_stage():
        if cmd.cmd != "COPY":
            continue
        *sources, dest = cmd.value
        target = workdir / dest
        for source in sources:
            path = ROOT / source
            if path.is_dir():  # the directory's contents into dest
                shutil.copytree(
                    path, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
                )
            else:
                into = target / path.name if dest.endswith("/") else target
                into.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, into)
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    built = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(site)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (site / "index.html").is_file()
    assert "operationId" in (site / "reference.html").read_text()  # rendered from openapi/


# ---------------------------------------------------------------- the start command, run


def stop(proc: subprocess.Popen, timeout: float = 30) -> str:
    """SIGTERM, as the kubelet sends it; everything the server wrote (stdout and stderr)."""
    proc.send_signal(signal.SIGTERM)
    code = exit_code(proc, timeout)
    stderr = output(proc)
    check_clean_exit(code, stderr)
    return stderr


def check_clean_exit(code: int, stderr: str) -> None:
    """A graceful stop: lifespan shutdown done, then exit 0, or by the SIGTERM itself, which
    uvicorn (one worker) re-raises once shut down (-15; 143 through tini)."""
    assert code in (0, -signal.SIGTERM, 128 + signal.SIGTERM), (code, stderr)
    assert "Application shutdown complete" in stderr, stderr


def new_game(http: httpx.Client) -> tuple[str, dict[str, str]]:
    response = http.post(
        "/v1/games", json={"players": [{"name": "Ann"}], "deck": README_DECK, "starting_seat": 0}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    return body["id"], {"Authorization": f"Bearer {body['seats'][0]['token']}"}


def test_the_image_command_on_the_embedded_store(tmp_path: Path) -> None:
    """No configuration: the launcher falls back to one worker (the image says 2), so every
    request sees the same in-process games; the SQLite archive goes to the working directory
    (the image's /data volume), not next to the code. Prometheus files of an earlier run in
    the multiprocess directory (a restarted container keeps its /tmp) are wiped at start."""
    stale = tmp_path / "tmp" / "prometheus" / "counter_99999.db"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"stale")
    with image_command(tmp_path, {}) as (proc, base), httpx.Client(base_url=base) as http:
        assert not stale.exists()
        assert "ten_http_requests_total" in http.get("/metrics").text
        game, auth = new_game(http)
        for _ in range(20):  # with two workers about half of these would be 404
            assert http.get(f"/v1/games/{game}", headers=auth).status_code == 200
        assert (tmp_path / "data" / "ten-archive.sqlite3").exists()
        stderr = stop(proc)
    assert "so 1 worker (not 2)" in stderr


def test_sigterm_lets_an_open_event_stream_finish(
    tmp_path: Path, redis_url: str, redis_server_url: str
) -> None:
    """The image's command on Redis (two workers). A client follows a game's event stream on
    it; the server gets SIGTERM; the game is then played to its end through another replica
    (the suite's shared service process on the same Redis).
    The stream, in flight when SIGTERM came, goes on to deliver every event up to
    game_finished, and only then does the server exit, cleanly. (Uvicorn closes idle
    connections at once and lets the busy ones finish, for UVICORN_TIMEOUT_GRACEFUL_SHUTDOWN
    seconds at most.)"""
    with (
        image_command(tmp_path, {"TEN_REDIS_URL": redis_url}) as (proc, base),
        httpx.Client(base_url=redis_server_url, timeout=10) as replica,
        httpx.Client(base_url=base, timeout=10) as http,
    ):
        game, auth = new_game(replica)
        with http.stream("GET", f"/v1/games/{game}/events/stream") as stream:
            assert stream.status_code == 200
            lines = stream.iter_lines()
            assert next(lines).startswith(":")  # the opening comment: the stream is served
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            assert proc.poll() is None  # still serving the open stream
            for action in README_GAME:
                response = replica.post(f"/v1/games/{game}/actions", json=action, headers=auth)
                assert response.status_code == 200, response.text
            events = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
        code = exit_code(proc, 30)
        stderr = output(proc)
        log = replica.get(f"/v1/games/{game}/events", params={"after": 0}).json()
    check_clean_exit(code, stderr)
    assert stderr.count("Application shutdown complete") == 2  # both workers
    assert events, "no event reached the stream after SIGTERM"
    assert events[-1]["type"] == "game_finished"
    assert [e["seq"] for e in events] == [e["seq"] for e in log["events"]]


# ---------------------------------------------------------------- bounded connections


def descendants_rss(pid: int) -> int:
    """Resident bytes of `pid` and every process under it (tini, the server, its workers)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        total += next(
            (
                int(line.split()[1]) * 1024
                for line in status.splitlines()
                if line.startswith("VmRSS:")
            ),
            0,
        )
    return total


def raw_request(base: str, data: bytes, timeout: float = 10) -> bytes:
    """`data` sent on a fresh connection; what the server answered until it closed."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def test_the_image_refuses_oversized_headers_and_holds_no_memory_for_them(tmp_path: Path) -> None:
    """Past 32 KiB of request line and headers (or 100 header lines): 431 and closed, before
    the app; a head under the limits, and a body beyond 32 KiB sent with its headers, are
    served. Eight connections each sending 4 MB of an unfinished header (then holding on) do
    not grow the server: it stopped reading each at the limit (httptools alone buffered all)."""
    head = b"GET /health HTTP/1.1\r\nHost: t\r\n"
    with image_command(tmp_path, {}) as (proc, base):
        assert status_of(raw_request(base, head + b"X-Big: " + b"a" * 40_000 + b"\r\n\r\n")) == 431
        many = b"".join(b"X-%d: v\r\n" % i for i in range(101))
        assert status_of(raw_request(base, head + many + b"\r\n")) == 431
        ninety = b"".join(b"X-%d: v\r\n" % i for i in range(90))
        fine = head + b"X-Ok: " + b"a" * 8000 + b"\r\n" + ninety + b"Connection: close\r\n\r\n"
        assert status_of(raw_request(base, fine)) == 200
        body = json.dumps({"players": 4, "padding": "x" * 50_000}).encode()
        post = b"POST /v1/games HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        post += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        assert status_of(raw_request(base, post + body)) != 431  # the app's answer to it

        before = descendants_rss(proc.pid)
        held = []
        for _ in range(8):
            sock = connect(base)
            held.append(sock)
            with contextlib.suppress(OSError):  # refused: the server closed it mid-send
                sock.sendall(head + b"X-Big: " + b"a" * 4_000_000)
        try:
            time.sleep(0.5)
            grown = descendants_rss(proc.pid) - before
            assert grown < 12_000_000, f"the server grew by {grown / 1e6:.1f} MB"
            # a 1 MB header: never served (431, or reset while the client was still sending)
            try:
                answer = raw_request(base, head + b"X-Big: " + b"a" * 1_000_000 + b"\r\n\r\n")
            except ConnectionResetError:
                answer = b"HTTP/1.1 431 reset"
            assert status_of(answer) == 431
        finally:
            for sock in held:
                sock.close()
        assert httpx.get(f"{base}/health").status_code == 200
        stop(proc)


def test_the_image_closes_a_connection_that_trickles_its_headers(tmp_path: Path) -> None:
    """TEN_HEADER_TIMEOUT from connecting to the end of the headers: a header line every
    0.2 s gets a 408 and is closed at the timeout, as is a connection that sends nothing; a
    kept-alive connection has the timeout again for its next request, from its first byte."""
    timeout = 1.0
    with image_command(tmp_path, {"TEN_HEADER_TIMEOUT": str(timeout)}) as (proc, base):
        with connect(base) as idle, connect(base) as trickling:
            started = time.monotonic()
            trickling.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n")
            trickling.settimeout(0.2)
            answer, closed = b"", False
            while not closed and time.monotonic() - started < HANG:
                try:
                    chunk = trickling.recv(4096)
                except TimeoutError:
                    with contextlib.suppress(OSError):
                        trickling.sendall(b"X-Slow: 1\r\n")
                    continue
                except ConnectionResetError:
                    closed = True
                    break
                closed = not chunk
                answer += chunk
            assert closed
            # never before the timeout (its clock starts after this connect); how long after
            # it depends on the machine's load, so that is not asserted
            assert time.monotonic() - started > timeout - 0.1
            assert not answer or status_of(answer) == 408
            idle.settimeout(HANG)
            assert idle.recv(100) == b""  # closed, without an answer

        # kept alive: a request, a pause under the keep-alive timeout, then a slow head
        with connect(base) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            first = b""
            while not first.endswith(b'"ok"}'):  # the whole answer: head, then body
                first += sock.recv(4096)
            assert first.startswith(b"HTTP/1.1 200")
            time.sleep(timeout + 0.5)  # idle between requests: the keep-alive timeout's (5 s)
            sock.sendall(b"GET /health HTTP/1.1\r\n")
            sock.settimeout(HANG)
            again = time.monotonic()
            assert status_of(sock.recv(4096)) == 408
            assert time.monotonic() - again > timeout - 0.1  # its timeout again, not before
        assert httpx.get(f"{base}/health").status_code == 200
        stop(proc)


def test_the_concurrency_limit_counts_the_apps_work_not_connections(tmp_path: Path) -> None:
    """UVICORN_LIMIT_CONCURRENCY counts the requests the app is working on (whole, not yet
    answered; tests/e2e/test_http_protocol.py holds them in the app): with four times that
    many connections open and idle, trickling a head, or trickling a body the app waits for,
    requests are served. The limit reaches the protocol: at 0 every request is answered 503
    at once (readiness included: the pod leaves the endpoints while saturated), except
    /health, so that a busy pod is not restarted."""
    for run in ("4", "0"):
        (tmp_path / run).mkdir()
    with image_command(tmp_path / "4", {"UVICORN_LIMIT_CONCURRENCY": "4"}) as (proc, base):
        idle = [connect(base) for _ in range(5)]
        heads = [connect(base) for _ in range(5)]
        bodies = [connect(base) for _ in range(5)]
        try:
            for sock in heads:
                sock.sendall(b"GET /ready HTTP/1.1\r\nHost: t\r\n")
            for sock in bodies:
                sock.sendall(
                    b"POST /v1/games HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100\r\nExpect: 100-continue\r\n\r\n"
                )
            for sock in bodies:  # the app has each request, and waits for its body
                assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue")
            with httpx.Client(base_url=base, timeout=5) as http:
                assert http.get("/ready").status_code == 200
                assert http.get("/v1/games/nope").status_code == 404
                assert http.get("/health").status_code == 200
        finally:
            for sock in idle + heads + bodies:
                sock.close()
        stop(proc)
    with image_command(tmp_path / "0", {"UVICORN_LIMIT_CONCURRENCY": "0"}) as (proc, base):
        with httpx.Client(base_url=base, timeout=5) as http:
            for path in ("/ready", "/v1/games/nope"):
                busy = http.get(path)
                assert busy.status_code == 503, busy.text
                assert busy.headers["content-type"] == "application/problem+json"
                assert busy.headers["retry-after"] == "1"
                assert busy.json()["code"] == "server_busy"
            assert http.get("/health").status_code == 200
            assert http.get("/health?probe=1").status_code == 200
        stop(proc)
