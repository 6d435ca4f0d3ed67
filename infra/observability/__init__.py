"""Observability: Prometheus metrics (`metrics`), JSON logs with request ids (`logs`),
optional OpenTelemetry tracing (`tracing`). Wired in `service.app`; each part is switched by
a setting (README: Observability)."""
