"""Observability of a real service process: /metrics after a played game, JSON log lines
with request ids, and metrics aggregated over two uvicorn workers (multiprocess mode)."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.servers import ServiceProcess, free_port
from tests.support.api import README_DECK, README_GAME

# the module's tests on one worker: its module fixture `redis_server` (a process with its archive)
# is made once (--dist loadgroup would spread them over the workers, and each would make it)
pytestmark = pytest.mark.xdist_group("e2e-observability-server")

GENERATED_ID = re.compile(r"^[0-9a-f]{12}-[0-9a-f]{8}$")
ACTIONS_ROUTE = "/v1/games/{game_id}/actions"


class Server:
    def __init__(self, base: str, log: Path) -> None:
        self.base = base
        self.log = log

    def log_lines(self) -> list[dict]:
        """Every line the process wrote to stdout, each parsed as JSON (fails otherwise)."""
        lines = self.log.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@contextmanager
def serve(
    tmp: Path, env: dict[str, str], workers: int = 1, uvicorn_access_log: bool = False
) -> Iterator[Server]:
    """A service process (uvicorn, its own logs at INFO) with stdout captured to a file."""
    port = free_port()
    log = tmp / f"stdout-{port}.log"
    server = ServiceProcess(
        env, workers, port, log_level="info", stdout=log, uvicorn_access_log=uvicorn_access_log
    )
    try:
        yield Server(server.base, log)
    finally:
        server.stop()


def scrape(base: str) -> dict[tuple[str, frozenset], float]:
    """The samples of GET /metrics: (name, labels) -> value."""
    response = httpx.get(f"{base}/metrics", timeout=5)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[sample.name, frozenset(sample.labels.items())] = sample.value
    return samples


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def play_short_game(http: httpx.Client) -> tuple[str, str]:
    created = http.post(
        "/v1/games",
        json={"players": [{"name": "Ann"}], "deck": README_DECK, "starting_seat": 0},
    )
    assert created.status_code == 201, created.text
    game_id, token = created.json()["id"], created.json()["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    for action in README_GAME:
        response = http.post(f"/v1/games/{game_id}/actions", json=action, headers=auth)
        assert response.status_code == 200, (action, response.text)
    assert response.json()["status"] == "finished"
    return game_id, token


@pytest.fixture(scope="module")
def redis_server(redis_url: str, tmp_path_factory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("obs")
    env = {
        "TEN_REDIS_URL": redis_url,
        "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/archive.sqlite3",
        "TEN_MIGRATE_ON_START": "true",
        "TEN_LOG_FORMAT": "json",
        "TEN_ACCESS_LOG": "true",
    }
    with serve(tmp, env) as server:
        yield server


def test_metrics_count_a_played_game(redis_server: Server) -> None:
    before = scrape(redis_server.base)
    with httpx.Client(base_url=redis_server.base, timeout=10) as http:
        game_id, token = play_short_game(http)
        # one more action on the finished game: a rule refusal
        refused = http.post(
            f"/v1/games/{game_id}/actions",
            json={"type": "draw"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert refused.status_code == 409
        code = refused.json()["code"]
        missing = http.get("/v1/games/00000000000000000000")
        assert missing.status_code == 404
    after = scrape(redis_server.base)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("ten_actions_total", type="draw") == 5
    assert delta("ten_actions_total", type="bid") == 1
    assert delta("ten_actions_total", type="stop") == 1
    assert delta("ten_actions_total", type="decline") == 2
    assert delta("ten_rule_rejections_total", code=code) == 1
    assert delta("ten_problems_total", code=code, status="409") == 1
    assert delta("ten_problems_total", code="game_not_found", status="404") == 1
    assert delta("ten_games_created_total") == 1
    assert delta("ten_games_finished_total") == 1
    assert delta("ten_archive_queued_total") == 1
    post = {"method": "POST", "route": ACTIONS_ROUTE}
    assert delta("ten_http_requests_total", status="200", **post) == len(README_GAME)
    assert delta("ten_http_requests_total", status="409", **post) == 1
    assert delta("ten_http_request_duration_seconds_count", **post) == len(README_GAME) + 1
    assert delta("ten_http_request_duration_seconds_sum", **post) > 0
    inf = {**post, "le": "+Inf"}
    assert delta("ten_http_request_duration_seconds_bucket", **inf) == len(README_GAME) + 1
    assert delta("ten_http_requests_total", method="POST", route="/v1/games", status="201") == 1
    # every accepted action saved once (no conflict: one client, one request at a time)
    assert delta("ten_store_seconds_count", op="save") == len(README_GAME)
    assert delta("ten_store_conflicts_total") == 0
    # live games come from the store, shared by every test of this Redis database: exact
    # counts are the store contract's (test_live_games_counts_games_in_play_not_finished_...)
    with httpx.Client(base_url=redis_server.base, timeout=10) as http:
        created = http.post("/v1/games", json={"players": [{"name": "Ann"}, {"name": "Bo"}]})
        assert created.status_code == 201, created.text
    assert value(scrape(redis_server.base), "ten_live_games") >= 1
    # the scrape itself is not counted
    assert not any(dict(labels).get("route") == "/metrics" for _, labels in after)


def test_metrics_reveal_no_secret_and_no_game(redis_server: Server) -> None:
    with httpx.Client(base_url=redis_server.base, timeout=10) as http:
        game_id, token = play_short_game(http)
        text = http.get("/metrics").text
        spec = http.get("/schema/openapi.json").json()
    secret = token.rsplit(".", 1)[1]
    for needle in (game_id, secret, token):
        assert needle not in text
    # route templates, never raw paths: one series per route
    assert ACTIONS_ROUTE in text
    # /metrics is not part of the API contract (the committed OpenAPI stays as it is)
    assert "/metrics" not in spec["paths"]


def test_json_logs_carry_the_request_id(redis_server: Server) -> None:
    with httpx.Client(base_url=redis_server.base, timeout=10) as http:
        created = http.post(
            "/v1/games",
            json={"players": [{"name": "Ann"}], "deck": README_DECK, "starting_seat": 0},
            headers={"X-Request-ID": "trace-abc.123"},
        )
        game_id = created.json()["id"]
        read = http.get(f"/v1/games/{game_id}", headers={"X-Request-ID": "read-" + game_id})
        bad_ids = ["has spaces", "x" * 129, 'quote"d', ""]
        bad = [http.get("/v1/rules", headers={"X-Request-ID": b}) for b in bad_ids]
        unknown = http.get("/no/such/route", headers={"X-Request-ID": "lost-route-1"})
    assert created.headers["x-request-id"] == "trace-abc.123"
    assert read.headers["x-request-id"] == "read-" + game_id
    assert unknown.status_code == 404
    assert unknown.headers["x-request-id"] == "lost-route-1"
    generated = [r.headers["x-request-id"] for r in bad]
    assert all(GENERATED_ID.match(rid) for rid in generated), generated
    assert len(set(generated)) == len(generated)

    # every stdout line is one JSON object; the access lines name the request id sent. A
    # line is written once its response is sent: the last one may lag the client a moment
    deadline = time.monotonic() + 10
    while True:
        try:
            lines = redis_server.log_lines()
        except ValueError:  # a line caught half-written: read again
            if time.monotonic() > deadline:
                raise
            continue
        access = {e.get("request_id"): e for e in lines if e["logger"] == "ten.access"}
        if "lost-route-1" in access or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert {"timestamp", "level", "logger", "message"} <= set(lines[0])
    line = access["trace-abc.123"]
    assert line["method"] == "POST"
    assert line["path"] == "/v1/games"
    assert line["status"] == 201
    assert line["duration_ms"] > 0
    assert line["level"] == "INFO"
    line = access["read-" + game_id]
    assert (line["status"], line["game_id"]) == (200, game_id)
    assert line["route"] == "/v1/games/{game_id}"
    assert access["lost-route-1"]["status"] == 404
    for rid in generated:
        assert access[rid]["path"] == "/v1/rules"
    for b in bad_ids[:3]:
        assert b not in access
    # uvicorn's own lines are JSON too (they parsed above) and come through the same handler
    assert any(line["logger"].startswith("uvicorn") for line in lines)


@pytest.mark.parametrize(
    ("uvicorn_access_log", "ten_access_log", "expected"),
    [
        (False, "false", set()),  # scripts/run: `uvicorn --no-access-log`
        (True, "false", {"uvicorn.access"}),  # uvicorn's own lines, in the service's format
        (True, "true", {"ten.access"}),  # the service's lines replace uvicorn's
    ],
)
def test_access_lines_as_configured(
    tmp_path: Path, uvicorn_access_log: bool, ten_access_log: str, expected: set[str]
) -> None:
    """`uvicorn --no-access-log` is obeyed (the service's logging once re-routed uvicorn's
    access logger and undid it), and with the service's access log on, uvicorn's is off."""
    env = {
        "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3",
        "TEN_LOG_FORMAT": "json",
        "TEN_ACCESS_LOG": ten_access_log,
    }
    with serve(tmp_path, env, uvicorn_access_log=uvicorn_access_log) as server:
        with httpx.Client(base_url=server.base, timeout=10) as http:
            for _ in range(3):
                assert http.get("/v1/rules").status_code == 200
        wait_until = time.monotonic() + 10  # the service's line follows its response
        while True:
            loggers = {line["logger"] for line in server.log_lines()}
            found = {name for name in ("uvicorn.access", "ten.access") if name in loggers}
            if found == expected or time.monotonic() > wait_until:
                break
            time.sleep(0.05)
    assert found == expected
    assert "uvicorn.error" in loggers  # the process did log, in JSON, at INFO


def per_worker(prom: Path, tmp: Path, **labels: str) -> dict[str, float]:
    """ten_http_requests_total as each worker's own file has it (pid -> value)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    found = {}
    for path in prom.glob("counter_*.db"):
        alone = tmp / f"alone-{path.stem}"
        alone.mkdir(exist_ok=True)
        shutil.copy(path, alone / path.name)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(alone))
        found[path.stem] = registry.get_sample_value("ten_http_requests_total", labels) or 0.0
        shutil.rmtree(alone)
    return found


def test_two_workers_share_their_metrics(tmp_path: Path, redis_url: str) -> None:
    """PROMETHEUS_MULTIPROC_DIR: a scrape of either worker sees both workers' requests
    (on Redis: several workers on the embedded store are refused)."""
    prom = tmp_path / "prometheus"
    prom.mkdir()
    env = {
        "TEN_REDIS_URL": redis_url,
        "PROMETHEUS_MULTIPROC_DIR": str(prom),
        "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3",
        "TEN_LOG_FORMAT": "json",
    }
    labels = {"method": "GET", "route": "/v1/rules", "status": "200"}
    with serve(tmp_path, env, workers=2) as server:
        sent = 0
        deadline = time.monotonic() + 30
        while True:
            for _ in range(20):  # a new connection each: the kernel spreads them
                assert httpx.get(f"{server.base}/v1/rules", timeout=5).status_code == 200
            sent += 20
            time.sleep(1.5)  # each worker adds its values to its file once a second
            counts = per_worker(prom, tmp_path, **labels)
            served = sorted(v for v in counts.values() if v > 0)
            if (len(served) == 2 and sum(served) == sent) or time.monotonic() > deadline:
                break
        assert len(served) == 2, counts  # both workers served some
        assert sum(served) == sent
        # any worker's scrape adds both up
        seen = {value(scrape(server.base), "ten_http_requests_total", **labels) for _ in range(6)}
        assert seen == {sent}
