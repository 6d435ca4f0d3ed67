"""Observability inside one process on the real Redis: store conflicts counted under
concurrent actions, OpenTelemetry spans for requests and store calls, and a service that
starts without the OpenTelemetry packages when tracing is off."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from infra.redis_store import RedisGameStore
from service.core.settings import ArchiveSettings, ObservabilitySettings, RedisSettings, Settings
from service.entrypoints.api.app import create_app
from tests.servers import ROOT

NUMBER_DECK = ["R1", "B2", "O3", "G4", "R5", "B6", "O7", "G8", "R9", "B1", "O2", "G3"]


def settings(tmp_path, redis_url: str, tracing: bool = False) -> Settings:
    return Settings(
        redis=RedisSettings(url=redis_url),
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3"),
        observability=ObservabilitySettings(log_format="json", tracing=tracing),
    )


async def scrape(http: httpx.AsyncClient) -> dict[tuple[str, frozenset], float]:
    text = (await http.get("/metrics")).text
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def new_game(http: httpx.AsyncClient) -> tuple[str, dict[str, str]]:
    created = await http.post(
        "/v1/games", json={"players": [{"name": "Ann"}], "deck": NUMBER_DECK, "starting_seat": 0}
    )
    assert created.status_code == 201, created.text
    body = created.json()
    return body["id"], {"Authorization": f"Bearer {body['seats'][0]['token']}"}


def test_concurrent_actions_count_store_conflicts(tmp_path, redis_url: str) -> None:
    """Six draws at once on one game: they all start from the same version (the process's
    copy of the game it created), one save wins, the others are refused by the store's
    compare-and-set, which hands back the stored game to retry on. Each refusal is one
    ten_store_conflicts_total and one extra save, and no request reads the game."""
    concurrent = 6

    async def body() -> None:
        store = RedisGameStore(redis_url)
        app = create_app(settings(tmp_path, redis_url), store=store)
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                game_id, auth = await new_game(http)
                before = await scrape(http)
                url = f"/v1/games/{game_id}/actions"
                answers = await asyncio.gather(
                    *(
                        http.post(url, json={"type": "draw"}, headers=auth)
                        for _ in range(concurrent)
                    )
                )
                after = await scrape(http)
        finally:
            await store.close()
        statuses = sorted(r.status_code for r in answers)
        assert set(statuses) <= {200, 409}, [r.text for r in answers]
        assert 200 in statuses

        def delta(name: str, **labels: str) -> float:
            key = (name, frozenset(labels.items()))
            return after.get(key, 0.0) - before.get(key, 0.0)

        conflicts = delta("ten_store_conflicts_total")
        assert conflicts >= 1
        assert delta("ten_store_seconds_count", op="load") == 0
        assert delta("ten_store_seconds_count", op="save") == statuses.count(200) + conflicts
        assert delta("ten_actions_total", type="draw") == statuses.count(200)

    asyncio.run(body())


def test_tracing_spans_for_requests_and_store_calls(tmp_path, redis_url: str) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def body() -> tuple[str, list]:
        store = RedisGameStore(redis_url)
        app = create_app(
            settings(tmp_path, redis_url, tracing=True), store=store, tracer_provider=provider
        )
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                game_id, auth = await new_game(http)
                acted = await http.post(
                    f"/v1/games/{game_id}/actions", json={"type": "draw"}, headers=auth
                )
                assert acted.status_code == 200
                assert (await http.get("/health")).status_code == 200
        finally:
            await store.close()
        return game_id, exporter.get_finished_spans()

    game_id, spans = asyncio.run(body())
    servers = {s.name: s for s in spans if s.kind == SpanKind.SERVER}
    assert "POST /v1/games" in servers, sorted(servers)
    act = servers["POST /v1/games/{game_id}/actions"]
    assert act.attributes["http.route"] == "/v1/games/{game_id}/actions"
    assert not any("/health" in name for name in servers)  # probes are not traced
    in_act = [s for s in spans if s.context.trace_id == act.context.trace_id]
    store_spans = {s.name: s for s in in_act if s.name.startswith("store.")}
    assert set(store_spans) == {"store.save"}  # the action starts from the process's copy
    save = store_spans["store.save"]
    assert save.attributes["db.system"] == "redis"
    assert save.attributes["ten.game_id"] == game_id
    assert save.parent is not None
    created = servers["POST /v1/games"]
    assert any(
        s.name == "store.create" and s.context.trace_id == created.context.trace_id for s in spans
    )


BLOCK_OTEL = textwrap.dedent(
    """
    import sys

    class NoOpenTelemetry:  # as if the `otel` extra were not installed
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, NoOpenTelemetry())
    from litestar.testing import TestClient
    from service.entrypoints.api.app import create_app
    from service.core.settings import ArchiveSettings, ObservabilitySettings, Settings

    tracing = sys.argv[1] == "on"
    try:
        app = create_app(
            Settings(
                archive=ArchiveSettings(database_url=sys.argv[2]),
                observability=ObservabilitySettings(tracing=tracing, log_format="text"),
            )
        )
    except RuntimeError as exc:
        print("REFUSED:", exc)
        raise SystemExit(3)
    with TestClient(app) as client:
        print("HEALTH", client.get("/health").status_code, client.get("/metrics").status_code)
    """
)


@pytest.mark.parametrize("tracing", ["off", "on"])
def test_without_the_otel_packages(tmp_path, tracing: str) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_OTEL, tracing, url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if tracing == "off":
        assert done.returncode == 0, done.stderr[-2000:]
        assert "HEALTH 200 200" in done.stdout
    else:  # asked for and impossible: a clear refusal, not a service without traces
        assert done.returncode == 3, done.stderr[-2000:]
        assert "pip install 'ten-service[otel]'" in done.stdout
