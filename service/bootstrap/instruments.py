"""Metrics and tracing, as the settings ask."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.core.ports import GameStore
from service.core.settings import Settings
from service.reactions.relay import (
    LocalReaction,
)


class Instruments:
    """Metrics and tracing as the settings ask, each off costing nothing per request. The
    app's one `Metrics` (`metrics`, None: off) is made here and handed to whatever counts."""

    def __init__(self, settings: Settings, store_system: str, tracer_provider: Any) -> None:
        self.metrics = None
        self.tracing = None
        self.store_system = store_system
        if settings.observability.metrics:
            from infra.observability import metrics as m  # noqa: PLC0415 - only when on

            self._m = m
            self.metrics = m.Metrics()
        if settings.observability.tracing:
            from infra.observability.tracing import Tracing  # noqa: PLC0415 - optional

            self.tracing = Tracing(tracer_provider)

    def store(self, store: GameStore) -> GameStore:
        if self.metrics is None and self.tracing is None:
            return store
        from infra.observability.instrumented_store import InstrumentedStore  # noqa: PLC0415

        return InstrumentedStore(
            store,
            self.metrics,
            tracer=self.tracing.tracer if self.tracing else None,
            system=self.store_system,
        )

    def count_job(self) -> Callable[[str, str], None] | None:
        """What the job workers count (`ten_jobs_total{queue,outcome}`), None: metrics off."""
        return None if self.metrics is None else self.metrics.job

    def count_queued(self) -> Callable[[], None] | None:
        return None if self.metrics is None else self.metrics.archive_queued.inc

    def reaction(self) -> LocalReaction | None:
        """The metrics' reaction to saves (actions, games created and finished); None: off."""
        return None if self.metrics is None else self._m.GameMetrics(self.metrics)

    def route_handlers(self, store: GameStore) -> list:
        return [] if self.metrics is None else [self._m.metrics_route(store, self.metrics)]

    def plugins(self) -> list:
        plugins: list = []
        if self.metrics is not None:
            plugins.append(self._m.ProblemMetricsPlugin(self.metrics))  # after ProblemDetails
        if self.tracing is not None:
            plugins.append(self.tracing.plugin)
        return plugins

    def before_send(self) -> list:
        return [] if self.tracing is None else self.tracing.before_send

    def shutdown(self) -> None:
        if self.metrics is not None:
            self.metrics.flush()  # this worker's last second, before it exits
            self._m.mark_process_dead()
        if self.tracing is not None:
            self.tracing.shutdown()
