"""Each capability's use cases wired on the adapters (matchmaking, correspondence, bulk
pairings, the platform's webhooks, post-game reviews, the bots' work): one function each,
called by `service.bootstrap.game_service`."""

from __future__ import annotations

from typing import Any, NamedTuple

from service.bootstrap.adapters import Adapters
from service.bootstrap.instruments import Instruments
from service.bulk.records import QUEUE as BULK
from service.bulk.use_cases import BulkPairings
from service.core.settings import Settings
from service.core.unit_of_work import Retry
from service.correspondence.notices import QUEUE as PUSH
from service.correspondence.notices import PushDelivery, TurnNotices
from service.correspondence.records import Presence
from service.correspondence.use_cases import Correspondence
from service.games.bot_work import BotWork
from service.games.use_cases import GameService
from service.history.reviews import QUEUE as REVIEWS
from service.history.reviews import Reviews
from service.lobby.use_cases import Lobby
from service.matchmaking.records import QUEUE as MATCHMAKING
from service.matchmaking.use_cases import Matchmaking
from service.reactions.webhook_delivery import WebhookOutbox
from service.reactions.webhooks import Webhooks


def matchmaking(
    settings: Settings, adapters: Adapters, service: GameService, webhooks: Webhooks
) -> Matchmaking:
    """The matchmaking tickets and their matchmaker: tables made by the lobby's create (by
    the platform), ratings read from the archive, webhooks queued as the games' are."""
    assert adapters.tickets is not None
    return Matchmaking(
        adapters.tickets,
        adapters.queue(MATCHMAKING),
        Lobby(service).create,
        ratings=adapters.archive.ratings,
        announce=webhooks.announce if webhooks.enabled else None,
        clock=service.now,
        identities_open=not settings.identity.api_keys and not settings.identity.jwt_configured,
        retry=service.retry,
        quotas=service.store,
    )


class CorrespondenceParts(NamedTuple):
    """Correspondence play, wired (service.correspondence): the use cases, the presence the
    event streams say, the turn notices (a durable reaction) and the push queue's worker."""

    use_cases: Correspondence
    presence: Presence
    notices: TurnNotices
    push_worker: Any  # service.jobs.worker.Worker
    sender: Any  # infra.push_sender.WebPushSender


def correspondence_parts(
    settings: Settings, adapters: Adapters, webhooks: Webhooks, obs: Instruments
) -> CorrespondenceParts:
    from infra.push_sender import WebPushSender  # noqa: PLC0415 - pywebpush only when built

    assert adapters.players is not None
    assert adapters.presence is not None
    corr = settings.correspondence
    use_cases = Correspondence(
        adapters.players,
        Retry(settings.games.act_retries),
        allow_http_loopback=corr.push_allow_http_loopback,
        max_subscriptions=corr.max_push_subscriptions,
        vacation_days=corr.vacation_days,
    )
    sender = WebPushSender(
        vapid_private_key(settings),
        corr.vapid_subject,
        allow_loopback=corr.push_allow_http_loopback,
    )
    queue = adapters.queue(PUSH)
    delivery = PushDelivery(
        queue, adapters.players, sender, use_cases.forget, ttl=corr.push_ttl, tries=corr.push_tries
    )
    worker = delivery.worker(count=obs.count_job())
    notices = TurnNotices(
        adapters.presence,
        adapters.players,
        queue,
        announce=webhooks.announce if webhooks.enabled else None,
        wake=worker.wake,
    )
    return CorrespondenceParts(use_cases, adapters.presence, notices, worker, sender)


def vapid_private_key(settings: Settings) -> str | None:
    """The VAPID key pushes are signed with: the operator's; else, on Redis, the one key
    every replica shares (made once, kept in Redis: `infra.push_keys`); else None (the
    embedded store's one process makes its own)."""
    configured = settings.correspondence.vapid_private_key
    if configured is not None or settings.redis.url is None:
        return configured
    from infra.push_keys import shared_private_key  # noqa: PLC0415 - redis-py only when on

    return shared_private_key(
        settings.redis.url,
        cluster=settings.redis.cluster,
        sentinels=settings.redis.sentinels,
        master=settings.redis.sentinel_master,
    )


def platform_webhooks(settings: Settings, adapters: Adapters, obs: Instruments) -> Webhooks:
    """The platform's webhooks (TEN_WEBHOOK_URLS): their outbox and sender when on."""
    outbox = sender = None
    if settings.webhooks.urls:
        from infra.webhook_sender import HttpSender  # noqa: PLC0415 - httpx only when on

        outbox = WebhookOutbox(adapters.queue("webhooks"))
        sender = HttpSender(settings.webhooks.secret or "", timeout=settings.webhooks.timeout)
    return Webhooks(
        outbox,
        settings.webhooks.urls,
        sender,
        metrics=obs.metrics,
        timeout=settings.webhooks.timeout,
        max_backoff=settings.webhooks.max_backoff,
        retention=settings.webhooks.retention,
    )


def post_game_reviews(
    settings: Settings, adapters: Adapters, service: GameService, obs: Instruments
) -> Reviews:
    """The reviews of finished games: computed in the bots' pool, kept in the archive."""
    return Reviews(
        service.store,
        adapters.archive,
        adapters.queue(REVIEWS),
        bot_work(settings, "background"),  # never in a live step's way
        bound=settings.quotas.review_queue,
        quotas=service.store,
        per_caller=settings.quotas.max_pending_reviews,
        poll=settings.archive.interval,
        max_backoff=30.0,
        count=obs.count_job(),
        ratings_by=settings.archive.ratings_by,
    )


def bot_work(settings: Settings, lane: str = "live") -> BotWork:
    """The bots' steps on this process's pool of worker processes (TEN_BOT_WORKERS); the
    "background" lane (reviews) on a worker of its own (`infra.bot_pool.bot_pool`)."""
    if not settings.runtime.bot_workers:
        return BotWork(None)
    from infra.bot_pool import bot_pool  # noqa: PLC0415 - the pool only when there is one

    workers = settings.runtime.bot_workers if lane == "live" else 1
    return BotWork(bot_pool(workers, lane), limit=settings.runtime.bot_queue)


def bulk_pairings(settings: Settings, adapters: Adapters, service: GameService) -> BulkPairings:
    """The platform's bulk pairings: scheduled tables of the lobby, started by the leased
    queue's jobs at their time."""
    assert adapters.bulk is not None
    return BulkPairings(
        adapters.bulk,
        Lobby(service),  # the platform's scheduled tables, started by the lobby's start
        adapters.queue(BULK),
        quotas=service.store,
        max_scheduled=settings.quotas.max_scheduled_bulk_pairings,
        retry=service.retry,
    )


def player_data(settings: Settings, adapters: Adapters, service: GameService):
    """A player's export and erasure (`service.privacy`) on the live stores and the SQL
    archive; None on another archive (the tests' in-memory one)."""
    from infra.archive import SqlArchive  # noqa: PLC0415 - SQLAlchemy only when built
    from infra.archive.privacy import SqlPlayerData  # noqa: PLC0415
    from service.privacy.use_cases import QUEUE, PlayerData  # noqa: PLC0415

    if not isinstance(adapters.archive, SqlArchive):
        return None
    if adapters.redis is None:
        from infra.memory_privacy import MemoryLiveData  # noqa: PLC0415

        live: Any = MemoryLiveData(
            adapters.store, adapters.tickets, adapters.tournaments, adapters.players,
            adapters.queue,
        )  # fmt: skip
    else:
        from infra.redis_privacy import RedisLiveData  # noqa: PLC0415

        live = RedisLiveData(
            adapters.redis, adapters.queue, player_key=getattr(adapters.players, "key", None),
            cluster=settings.redis.cluster,
        )  # fmt: skip
    key = settings.archive.privacy_key
    return PlayerData(
        service.store, live, adapters.archive, SqlPlayerData(adapters.archive),
        adapters.tournaments, adapters.players, adapters.tickets,
        key=None if key is None else key.encode(), retry=service.retry,
        queue=adapters.queue(QUEUE),
    )  # fmt: skip
