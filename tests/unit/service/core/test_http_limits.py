"""The HTTP head and body bounds (`HttpLimits`, kept by infra/http_protocol.py) from `TEN_*`."""

from __future__ import annotations

import pytest

from service.core.settings import HttpLimits


def test_defaults_and_values() -> None:
    assert HttpLimits.from_env({}) == HttpLimits(
        header_timeout=10.0, body_timeout=15.0, max_header_bytes=32768, max_headers=100
    )
    env = {
        "TEN_HEADER_TIMEOUT": "2.5",
        "TEN_BODY_TIMEOUT": "4",
        "TEN_MAX_HEADER_BYTES": "8192",
        "TEN_MAX_HEADERS": " 40 ",
    }
    assert HttpLimits.from_env(env) == HttpLimits(
        header_timeout=2.5, body_timeout=4.0, max_header_bytes=8192, max_headers=40
    )
    assert HttpLimits.from_env({"TEN_HEADER_TIMEOUT": " "}) == HttpLimits()  # blank: unset


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TEN_HEADER_TIMEOUT", "0"),
        ("TEN_BODY_TIMEOUT", "-2"),
        ("TEN_MAX_HEADER_BYTES", "-1"),
        ("TEN_MAX_HEADERS", "many"),
    ],
)
def test_a_bad_value_is_refused(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name.removeprefix("TEN_") + "|invalid|could not convert"):
        HttpLimits.from_env({name: value})
