"""Fixtures of the contract tests."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from litestar.testing import TestClient

from service.core.settings import Settings
from service.entrypoints.api.app import create_app


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    """The app with the default settings, in-process."""
    # httpx logs every request at INFO through the app's queued handler, which outlives
    # pytest's captured stderr ("--- Logging error ---"): keep it quiet
    httpx_log = logging.getLogger("httpx")
    level = httpx_log.level
    httpx_log.setLevel(logging.WARNING)
    try:
        with TestClient(create_app(Settings())) as test_client:
            yield test_client
    finally:
        httpx_log.setLevel(level)
