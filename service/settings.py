"""Settings, read once from `TEN_*` environment variables at the composition root."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import msgspec

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|day)\s*$")


def _otlp_endpoint_set(env: Mapping[str, str]) -> bool:
    """OpenTelemetry's own variables name an exporter endpoint: tracing is wanted."""
    names = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return any((env.get(name) or "").strip() for name in names)


class _Env:
    """`TEN_<name>` variables read and checked (blank counts as unset)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def get(self, name: str) -> str | None:
        value = self.env.get(f"TEN_{name}")
        return value.strip() if value and value.strip() else None

    def flag(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None:
            return default
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"TEN_{name} must be true or false, not {value!r}")

    def number(self, name: str, default, kind=int):
        value = self.get(name)
        if value is None:
            return default
        parsed = kind(value)
        if parsed <= 0:
            raise ValueError(f"TEN_{name} must be positive")
        return parsed

    def count(self, name: str, default: int) -> int:
        value = self.get(name)
        if value is None:
            return default
        if not value.isdigit():
            raise ValueError(f"TEN_{name} must be a whole number, 0 or more, not {value!r}")
        return int(value)

    def choice(self, name: str, allowed: tuple[str, ...], default: str, upper: bool = False) -> str:
        value = self.get(name)
        if value is None:
            return default
        value = value.upper() if upper else value.lower()
        if value not in allowed:
            raise ValueError(f"TEN_{name} must be one of {', '.join(allowed)}, not {value!r}")
        return value


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    redis_url: str | None = None  # TEN_REDIS_URL; unset: the embedded in-process store
    redis_cluster: bool = False  # TEN_REDIS_CLUSTER: the URL names a Redis Cluster node
    allow_custom_deck: bool = True  # TEN_ALLOW_CUSTOM_DECK: accept `deck` when creating a game
    finished_ttl: int = 24 * 3600  # TEN_FINISHED_TTL: seconds a finished game stays readable
    idle_ttl: int = 7 * 24 * 3600  # TEN_IDLE_TTL: seconds an untouched live game is kept
    rate_limit: tuple[int, str] | None = None  # TEN_RATE_LIMIT, e.g. "600/minute"; unset: none
    max_body_bytes: int = 64 * 1024  # TEN_MAX_BODY_BYTES: larger bodies get 413
    sse_keepalive: float = 15.0  # TEN_SSE_KEEPALIVE: seconds between keep-alive comments
    act_retries: int = 20  # TEN_ACT_RETRIES: optimistic-concurrency retries per action
    database_url: str | None = None  # TEN_DATABASE_URL; unset: a SQLite file (embedded default)
    migrate_on_start: bool | None = None  # TEN_MIGRATE_ON_START; unset: only on the default SQLite
    archive_interval: float = 1.0  # TEN_ARCHIVE_INTERVAL: seconds between outbox sweeps
    metrics: bool = True  # TEN_METRICS: Prometheus metrics at GET /metrics
    log_format: str = "auto"  # TEN_LOG_FORMAT: json | text | auto (text on a terminal, else JSON)
    log_level: str = "INFO"  # TEN_LOG_LEVEL
    access_log: bool = False  # TEN_ACCESS_LOG: one log line per request
    tracing: bool = False  # TEN_OTEL_ENABLED (or OTEL_EXPORTER_OTLP_ENDPOINT set): OpenTelemetry
    gc_threshold: int = 10_000  # TEN_GC_THRESHOLD: the serving process's gen-0 GC threshold; 0: off

    @property
    def run_migrations(self) -> bool:
        if self.migrate_on_start is not None:
            return self.migrate_on_start
        return self.database_url is None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = _Env(os.environ if environ is None else environ)
        get, flag, number, count, choice = env.get, env.flag, env.number, env.count, env.choice
        defaults = cls()
        rate = get("RATE_LIMIT")
        rate_limit = None
        if rate is not None:
            match = _RATE.match(rate)
            if not match:
                raise ValueError(f"TEN_RATE_LIMIT must look like '600/minute', not {rate!r}")
            rate_limit = (int(match.group(1)), match.group(2))
        return cls(
            redis_url=get("REDIS_URL"),
            redis_cluster=flag("REDIS_CLUSTER", False),
            allow_custom_deck=flag("ALLOW_CUSTOM_DECK", True),
            finished_ttl=number("FINISHED_TTL", defaults.finished_ttl),
            idle_ttl=number("IDLE_TTL", defaults.idle_ttl),
            rate_limit=rate_limit,
            max_body_bytes=number("MAX_BODY_BYTES", defaults.max_body_bytes),
            sse_keepalive=number("SSE_KEEPALIVE", defaults.sse_keepalive, float),
            act_retries=number("ACT_RETRIES", defaults.act_retries),
            database_url=get("DATABASE_URL"),
            migrate_on_start=None
            if get("MIGRATE_ON_START") is None
            else flag("MIGRATE_ON_START", False),
            archive_interval=number("ARCHIVE_INTERVAL", defaults.archive_interval, float),
            metrics=flag("METRICS", True),
            log_format=choice("LOG_FORMAT", ("auto", "json", "text"), "auto"),
            log_level=choice(
                "LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), "INFO", upper=True
            ),
            access_log=flag("ACCESS_LOG", False),
            tracing=flag("OTEL_ENABLED", _otlp_endpoint_set(env.env)),
            gc_threshold=count("GC_THRESHOLD", defaults.gc_threshold),
        )
