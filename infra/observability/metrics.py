"""Prometheus metrics (prometheus_client): HTTP requests and latency per route, games,
actions, problems, the game store and the archive outbox, exposed at `GET /metrics`.

One `Metrics` per app, with a registry of its own (no process-wide instance): made by the
composition root (`service.app`) and handed to whatever counts (the HTTP middleware, the
problem handlers, the store wrapper, the relay's `GameMetrics` reaction, the job workers,
the deadline poller, the webhooks). With several worker processes (`uvicorn --workers N`)
set `PROMETHEUS_MULTIPROC_DIR` to an empty directory writable by the service: every process
then writes its values there and a scrape of any worker reads them all (prometheus_client's
multiprocess mode; its files are per process, so one app per process then: the served
one); the directory must be emptied before the service starts (a Kubernetes emptyDir is).

No label carries a secret or a per-game value: labels are action types, problem codes, HTTP
statuses, store operations and route templates (`/v1/games/{game_id:str}`), all bounded sets.
"""

from __future__ import annotations

import asyncio
import functools
import os
from bisect import bisect_left
from typing import Literal

from litestar import Request, Response, get
from litestar.plugins import InitPlugin
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

from domain.game.errors import RuleError
from domain.game.rejudge import ACTION_OF_EVENT
from service.core.ports import Listings, StoreUnavailable
from service.reactions.relay import GAME_CREATED, GAME_ENDED, Change

# no `*_created` timestamp series beside every counter: half the scrape for no use here
disable_created_metrics()

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
METRICS_PATH = "/metrics"
HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]
STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25]
STORE_BUCKETS += [1.0, 5.0, 15.0, 60.0]  # wait_events waits for news up to the SSE keep-alive
FLUSH_SECONDS = 1.0


def multiprocess_mode() -> bool:
    return bool(os.environ.get(MULTIPROC_ENV) or os.environ.get(MULTIPROC_ENV.lower()))


class BatchedCounter:
    """A labelled Counter whose increments are kept in a plain dict and added to the
    prometheus_client counter in bulk by `flush()`: no lock and no label validation per
    request (prometheus_client locks for threads, and in multiprocess mode writes a
    memory-mapped file, on every call)."""

    def __init__(self, counter: Counter) -> None:
        self._counter = counter
        self._pending: dict[tuple[str, ...], float] = {}

    def inc(self, labels: tuple[str, ...], amount: float = 1.0) -> None:
        pending = self._pending
        pending[labels] = pending.get(labels, 0.0) + amount

    def flush(self) -> None:
        pending, self._pending = self._pending, {}
        for labels, amount in pending.items():
            (self._counter.labels(*labels) if labels else self._counter).inc(amount)


class BatchedHistogram:
    """A labelled Histogram observed into plain lists, added to prometheus_client in bulk.

    `flush()` adds the bucket counts and the sum through the child's value objects (the
    same ones `observe()` updates, in either prometheus_client mode; pinned version)."""

    def __init__(self, histogram: Histogram) -> None:
        self._histogram = histogram
        self._bounds: list[float] = list(histogram._upper_bounds)  # ends with +Inf
        self._pending: dict[tuple[str, ...], list[float]] = {}

    def observe(self, labels: tuple[str, ...], seconds: float) -> None:
        counts = self._pending.get(labels)
        if counts is None:
            counts = self._pending[labels] = [0.0] * (len(self._bounds) + 1)
        counts[0] += seconds
        counts[bisect_left(self._bounds, seconds) + 1] += 1

    def flush(self) -> None:
        pending, self._pending = self._pending, {}
        for labels, counts in pending.items():
            child = self._histogram.labels(*labels)
            child._sum.inc(counts[0])
            for bucket, count in zip(child._buckets, counts[1:], strict=True):
                if count:
                    bucket.inc(count)


class Metrics:
    """The service's metrics, in a registry of their own (`registry`: with the process's
    own collectors, CPU, memory, GC, as prometheus_client's default registry has them).

    Per-request observations are batched (`BatchedCounter`, `BatchedHistogram`) and reach
    prometheus_client on `flush()`: before every scrape, and every second from a background
    task (`flush_forever`) so that, with several workers, a scrape of one sees the others'
    values at most a second late."""

    def __init__(self) -> None:
        """Every metric of the service, one declaration each: long because it is that list."""
        directory = os.environ.get(MULTIPROC_ENV)
        if directory:  # prometheus_client writes its files there as the metrics are made
            os.makedirs(directory, exist_ok=True)
        self.registry = registry = CollectorRegistry(auto_describe=True)
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            registry.register(collector)
        # every metric in this registry, not prometheus_client's process-wide default
        counter, histogram, gauge = (
            functools.partial(kind, registry=registry) for kind in (Counter, Histogram, Gauge)
        )
        self.http_requests = BatchedCounter(
            counter(
                "ten_http_requests", "HTTP requests, by method, route and status.",
                ["method", "route", "status"],
            )
        )  # fmt: skip
        self.http_seconds = BatchedHistogram(
            histogram(
                "ten_http_request_duration_seconds",
                "HTTP request latency (until the last byte is sent), by method and route.",
                ["method", "route"],
                buckets=HTTP_BUCKETS,
            )
        )
        self.actions = BatchedCounter(
            counter(
                "ten_actions", "Actions accepted from seats through the API, by type.", ["type"]
            )
        )
        self.rule_rejections = counter(
            "ten_rule_rejections", "Actions and setups the rules refused, by code.", ["code"]
        )
        self.problems = counter(
            "ten_problems",
            "Error responses (problem+json), by code and HTTP status.",
            ["code", "status"],
        )
        self.games_created = BatchedCounter(
            counter("ten_games_created", "Games created by this process.", [])
        )
        self.games_finished = BatchedCounter(
            counter("ten_games_finished", "Games that finished in a request served here.", [])
        )
        self.store_seconds = BatchedHistogram(
            histogram(
                "ten_store_seconds",
                "Game store calls, by operation, in seconds (failures included).",
                ["op"],
                buckets=STORE_BUCKETS,
            )
        )
        self.store_conflicts = counter(
            "ten_store_conflicts",
            "Saves refused by the store's version check (another request won the race).",
        )
        self.store_unavailable = counter(
            "ten_store_unavailable", "Game store calls that failed: the store was unreachable."
        )
        self.archive_queued = counter("ten_archive_queued", "Ended games put in the archive queue.")
        self.archive_archived = counter(
            "ten_archive_archived", "Archive jobs the archiver stored and removed."
        )
        self.jobs = counter(
            "ten_jobs",
            "Background jobs (service.jobs.worker), by queue (archive, relay) and outcome: done, "
            "later (due again at a time its step waits for), retried (failed, tried again after a backoff), quarantined (set aside with its "
            "reason after failing too often or for good: `python -m service.cli jobs list`).",
            ["queue", "outcome"],
        )
        self.deadlines = counter(
            "ten_deadlines",
            "Due games dealt with by this replica's poller, by outcome: timeout (a seat's move "
            "made for it), abandoned (idle expiry), moved_on (the game had moved on: "
            "rescheduled), gone (expired or ended: entry removed), conflict (lost a race).",
            ["outcome"],
        )
        self.deadline_lateness = histogram(
            "ten_deadline_lateness_seconds",
            "How long after its deadline a timeout was applied.",
            buckets=[0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0, 300.0],
        )
        self.webhook_deliveries = counter(
            "ten_webhook_deliveries",
            "Webhook delivery attempts, by outcome: delivered (2xx), failed; of the failed, "
            "expired (older than TEN_WEBHOOK_RETENTION) and rejected (a 4xx that will not "
            "pass): quarantined, not tried again until put back.",
            ["outcome"],
        )
        self.webhook_retries = counter(
            "ten_webhook_retries", "Webhook deliveries scheduled again after a failed attempt."
        )
        # the outbox is shared: every replica's worker reads the same figure at each look
        self.webhook_backlog = gauge(
            "ten_webhook_backlog",
            "Webhook deliveries waiting in the outbox (due, retrying or in flight), as this "
            "replica's delivery worker last saw it.",
            multiprocess_mode="livemostrecent",
        )
        self._batched = [
            self.http_requests,
            self.http_seconds,
            self.actions,
            self.games_created,
            self.games_finished,
            self.store_seconds,
        ]

    def request(self, method: str, route: str | None, status: int, seconds: float) -> None:
        """One HTTP request. Routes are templates (`/v1/games/{game_id:str}`): one series per
        route, not per game; a request no route matched (404) is `none`; `/metrics` itself
        is not recorded."""
        if route == METRICS_PATH:
            return
        self.http_seconds.observe((method, route or "none"), seconds)
        self.http_requests.inc((method, route or "none", _STATUS.get(status) or str(status)))

    def job(self, queue: str, outcome: str) -> None:
        """One job of a `service.jobs.worker.Worker` settled."""
        self.jobs.labels(queue, outcome).inc()
        if queue == "archive" and outcome == "done":
            self.archive_archived.inc()

    def rule_rejection(self, code: str) -> None:
        self.rule_rejections.labels(code).inc()

    def problem(self, code: str, status: int) -> None:
        self.problems.labels(code, str(status)).inc()

    def flush(self) -> None:
        for batched in self._batched:
            batched.flush()

    async def flush_forever(self, interval: float = FLUSH_SECONDS) -> None:
        while True:
            await asyncio.sleep(interval)
            self.flush()


_STATUS = {code: str(code) for code in range(100, 600)}


class _LiveGamesCollector:
    """`ten_live_games`, read from the store (the same for every replica) before a scrape."""

    def __init__(self) -> None:
        self.value: int | None = None

    def collect(self):
        if self.value is not None:  # the store did not answer: no figure rather than a wrong one
            yield GaugeMetricFamily(
                "ten_live_games",
                "Games in play (started, not finished, not expired) in the game store.",
                value=self.value,
            )


def _tag(kind: type) -> str:
    return str(kind.__struct_config__.tag)  # type: ignore[attr-defined]


# The action whose save starts with this event (`domain.game.rejudge.ACTION_OF_EVENT`: an
# action's events start with its own, the bots' moves after it follow); a save that starts
# otherwise (a game's start, a timeout's `timed_out`, a lobby change) is no action of a seat.
_ACTION_OF_FIRST_EVENT: dict[str, tuple[str]] = {
    _tag(event): (_tag(action),) for event, action in ACTION_OF_EVENT.items()
}


class GameMetrics:
    """The metrics' reaction to every save (`service.reactions.relay.LocalReaction`): the actions
    accepted from seats by type (`ten_actions_total{type}`: one per action saved, not the
    bots' moves after it, nor a timeout's, nor an Idempotency-Key's replay, which saves
    nothing), the games created (`ten_games_created_total`) and finished
    (`ten_games_finished_total`) by this process's saves. Counters of this process, which die
    with it: nothing to mark, nothing to read."""

    name = "metrics"
    durable: Literal[False] = False

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def saved(self, change: Change) -> None:
        metrics, old, new = self._metrics, change.old, change.new
        if GAME_CREATED in change.kinds:
            metrics.games_created.inc(())
        elif change.types and old is not None and old.state is not None:
            action = _ACTION_OF_FIRST_EVENT.get(change.types[0])
            if action is not None:
                metrics.actions.inc(action)
        if GAME_ENDED in change.kinds and new.status == "finished":
            metrics.games_finished.inc(())


class ProblemMetricsPlugin(InitPlugin):
    """Counts every problem+json response by code and status (and rule refusals by code)
    by wrapping the exception handlers the ProblemDetailsPlugin registered: list it after
    that plugin. Costs nothing on successful requests."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def on_app_init(self, app_config):
        app_config.exception_handlers = {
            key: self._counted(handler) for key, handler in app_config.exception_handlers.items()
        }
        return app_config

    def _counted(self, handler):
        counters = self._metrics

        def counted(request: Request, exc: Exception) -> Response:
            response = handler(request, exc)
            content = response.content
            code = content.get("code") if isinstance(content, dict) else None
            counters.problem(str(code or "http_error"), response.status_code)
            if isinstance(exc, RuleError):
                counters.rule_rejection(exc.code)
            return response

        return counted


def metrics_route(store: Listings, metrics: Metrics):
    """`GET /metrics` in the Prometheus text format; not in the OpenAPI document."""
    local = CollectorRegistry(auto_describe=True)
    live = _LiveGamesCollector()
    local.register(live)

    @get(
        METRICS_PATH,
        include_in_schema=False,
        name="metrics",
    )
    async def scrape() -> Response[bytes]:
        try:
            live.value = await store.live_games()
        except StoreUnavailable:
            live.value = None
        metrics.flush()
        if multiprocess_mode():
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
        else:
            registry = metrics.registry
        body = generate_latest(registry) + generate_latest(local)
        # Litestar adds the charset itself
        return Response(body, media_type=CONTENT_TYPE_LATEST.replace("; charset=utf-8", ""))

    return scrape


def mark_process_dead() -> None:
    """In multiprocess mode, drop this process's live gauges (requests in progress)."""
    if multiprocess_mode():
        multiprocess.mark_process_dead(os.getpid())


__all__ = [
    "BatchedCounter",
    "BatchedHistogram",
    "GameMetrics",
    "Metrics",
    "ProblemMetricsPlugin",
    "mark_process_dead",
    "metrics_route",
]
