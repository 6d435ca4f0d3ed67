"""The `TEN_*` environment variables read and checked, one kind of value each (a flag, a
positive number, a count, a list, a choice): what every settings group reads them with."""

from __future__ import annotations

import os
from collections.abc import Mapping


class Environment:
    """`TEN_<name>` variables read and checked (blank counts as unset)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = os.environ if env is None else env

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

    def items(self, name: str) -> tuple[str, ...]:
        """A comma-separated list; blank items dropped, duplicates kept once, in order."""
        value = self.get(name)
        if value is None:
            return ()
        return tuple(dict.fromkeys(item.strip() for item in value.split(",") if item.strip()))

    def choice(self, name: str, allowed: tuple[str, ...], default: str, upper: bool = False) -> str:
        value = self.get(name)
        if value is None:
            return default
        value = value.upper() if upper else value.lower()
        if value not in allowed:
            raise ValueError(f"TEN_{name} must be one of {', '.join(allowed)}, not {value!r}")
        return value

    def otlp_endpoint_set(self) -> bool:
        """OpenTelemetry's own variables name an exporter endpoint: tracing is wanted."""
        names = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        return any((self.env.get(name) or "").strip() for name in names)
