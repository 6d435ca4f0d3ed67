"""Optional OpenTelemetry tracing: a span per request (Litestar's OpenTelemetryPlugin) and a
span per game store call, exported over OTLP/HTTP in batches.

Off unless `TEN_OTEL_ENABLED=true` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set; the packages are
the optional extra `otel` (`pip install 'ten-service[otel]'`) and are imported only when
tracing is on. The exporter reads OpenTelemetry's own variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
`OTEL_EXPORTER_OTLP_HEADERS`, ...); `OTEL_SERVICE_NAME` names the service (default
`ten-service`).
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT_SERVICE_NAME = "ten-service"
# probes and scrapes every few seconds are not worth a trace
UNTRACED = ["^/health$", "^/ready$", "^/metrics$", "^/static/"]


class Tracing:
    def __init__(self, tracer_provider: Any = None) -> None:
        try:
            from litestar.plugins.opentelemetry import (  # noqa: PLC0415 - optional packages
                OpenTelemetryConfig,
                OpenTelemetryPlugin,
            )
            from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
            from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
        except ImportError as exc:
            raise RuntimeError(
                "tracing is on (TEN_OTEL_ENABLED or OTEL_EXPORTER_OTLP_ENDPOINT) but OpenTelemetry "
                "is not installed: pip install 'ten-service[otel]'"
            ) from exc
        self._owned = tracer_provider is None
        if tracer_provider is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )
            from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

            name = os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME
            tracer_provider = TracerProvider(resource=Resource.create({"service.name": name}))
            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        self.provider = tracer_provider
        self.tracer = tracer_provider.get_tracer("ten.service")
        self.plugin = OpenTelemetryPlugin(
            OpenTelemetryConfig(
                tracer_provider=tracer_provider,
                exclude=UNTRACED,
                exclude_spans=["receive", "send"],  # a span per ASGI message is noise
            )
        )
        from opentelemetry import trace  # noqa: PLC0415

        def name_by_route(message, scope) -> None:
            """Litestar's tracing middleware wraps the router, so it names the request's span
            before routing, by its raw path (a game id in every name); once routed, the span
            is renamed by the route template, as the metrics label it."""
            if message["type"] == "http.response.start":
                route = scope.get("path_template")
                span = trace.get_current_span()
                if route and span.is_recording():
                    span.update_name(f"{scope['method']} {route}")
                    span.set_attribute("http.route", route)

        self.before_send = [name_by_route]

    def shutdown(self) -> None:
        """Flush the spans still batched (only for a provider made here)."""
        if self._owned:
            self.provider.shutdown()
