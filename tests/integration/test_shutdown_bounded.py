"""The app's shutdown ends even when closing an adapter never returns: the step is logged
with where it waits and left behind (service.core.cancellation.finish_within). One shutdown in a
full run waited for good on a step nobody could name."""

from __future__ import annotations

import asyncio
import logging
import threading

from litestar.testing import TestClient

from infra.memory_store import MemoryGameStore
from service import bootstrap
from service.core.settings import ArchiveSettings, Settings
from service.entrypoints.api.app import create_app


class _StoreThatNeverCloses(MemoryGameStore):
    async def close(self) -> None:
        await asyncio.Event().wait()


def test_a_close_that_never_returns_does_not_hold_the_shutdown(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(bootstrap, "CLOSE_SECONDS", 0.3)
    settings = Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3")
    )
    app = create_app(settings, store=_StoreThatNeverCloses())
    with caplog.at_level(logging.ERROR, logger="ten"):
        client = TestClient(app)
        client.__enter__()
        assert client.get("/health").status_code == 200
        # the shutdown, in a thread: without the bound it would wait for good (fail, not hang)
        # (the join's bound only tells a shutdown that never ends from one that ends)
        shutdown = threading.Thread(target=client.__exit__, args=(None, None, None), daemon=True)
        shutdown.start()
        shutdown.join(timeout=120)
    assert not shutdown.is_alive(), "the shutdown did not end"
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    stuck = [e for e in errors if "closing the adapters did not finish within 0.3 s" in e]
    assert len(stuck) == 1, errors
    assert " in close\n" in stuck[0]  # the store's close, where it waits
