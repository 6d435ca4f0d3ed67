"""The capabilities wired by the composition root (`service.bootstrap.capabilities`): what
each is handed follows the settings."""

from __future__ import annotations

import asyncio

from service.bootstrap import Instruments, build_adapters, game_service
from service.core.settings import (
    ArchiveSettings,
    ObservabilitySettings,
    Settings,
    WebhookSettings,
)
from service.reactions.relay import GAME_ENDED


def _matchmaker_announce(tmp_path, webhooks: WebhookSettings):
    settings = Settings(
        archive=ArchiveSettings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'w.sqlite3'}"),
        webhooks=webhooks,
        observability=ObservabilitySettings(metrics=False),
    )
    adapters = build_adapters(settings)
    try:
        _, background = game_service(settings, adapters, Instruments(settings, "memory", None))
        assert background.matchmaking is not None
        return background.matchmaking.matchmaker.announce
    finally:
        asyncio.run(adapters.close())


def test_matchmaking_queues_no_webhook_when_the_platform_configured_none(tmp_path):
    assert _matchmaker_announce(tmp_path, WebhookSettings()) is None


def test_matchmaking_queues_its_webhooks_when_the_platform_configured_some(tmp_path):
    hooks = WebhookSettings(urls=("http://127.0.0.1:9/hook",), secret="s" * 32)
    assert _matchmaker_announce(tmp_path, hooks) is not None


def _ended_reactions(tmp_path, ratings_by):
    """The durable reactions to a game's end, the archiver's places, the reviews' queue."""
    settings = Settings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'r.sqlite3'}", ratings_by=ratings_by
        ),
        observability=ObservabilitySettings(metrics=False),
    )
    adapters = build_adapters(settings)
    try:
        _, background = game_service(settings, adapters, Instruments(settings, "memory", None))
        ended = {r.name: r for r, kinds in background.relay._durable if GAME_ENDED in kinds}
        return ended, background.archiver.ratings_by, background.reviews.queue
    finally:
        asyncio.run(adapters.close())


def test_by_luck_adjusted_places_a_games_end_queues_its_review_through_the_outbox(tmp_path):
    ended, places, queue = _ended_reactions(tmp_path, "luck_adjusted")
    assert places == "luck_adjusted"
    assert "archive" in ended
    assert ended["reviews"].queue is queue


def test_by_results_a_games_end_queues_no_review(tmp_path):
    ended, places, _ = _ended_reactions(tmp_path, "results")
    assert places == "results"
    assert "archive" in ended
    assert "reviews" not in ended
