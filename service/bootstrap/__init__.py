"""The composition root: settings -> adapters -> use cases, and what runs beside them.

`build_adapters` picks the adapters (the embedded default, or Redis and PostgreSQL as the
settings say); `game_service` wires the use cases and their reactions on them, with the
background tasks (`Background`: the job workers, the deadline poller, the event streams'
reader). The HTTP app (`service.entrypoints.api.app.create_app`) and the job workers' own
process (`work_jobs`, `python -m service.cli work`) are both built from here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from infra.watchers import Watchers
from service.bootstrap.adapters import Adapters, build_adapters
from service.bootstrap.capabilities import (
    CorrespondenceParts,
    bot_work,
    bulk_pairings,
    correspondence_parts,
    matchmaking,
    platform_webhooks,
    player_data,
    post_game_reviews,
)
from service.bootstrap.instruments import Instruments
from service.bulk.use_cases import BulkPairings
from service.core.cancellation import finish_within, stop_tasks
from service.core.settings import Settings
from service.correspondence.turns import TURN_WAITS, turn_waits
from service.games.use_cases import GameService
from service.history.archiver import Archiver, ArchiveReaction
from service.history.reviews import ReviewReaction, Reviews
from service.lobby.use_cases import Lobby
from service.matchmaking.use_cases import Matchmaking
from service.reactions.deadlines import DeadlinePoller
from service.reactions.relay import (
    DUE_MOVED,
    GAME_CREATED,
    GAME_ENDED,
    Facts,
    LocalReaction,
    Reaction,
    ReactionTable,
    Relay,
)
from service.reactions.webhooks import Webhooks
from service.tournaments.director import TournamentReaction
from service.tournaments.records import QUEUE as TOURNAMENTS
from service.tournaments.secrecy import Secrecy
from service.tournaments.use_cases import Tournaments

log = logging.getLogger("ten")
# the capabilities' own kinds of change, told the relay (beside the record's facts)
CAPABILITY_FACTS: Facts = {TURN_WAITS: turn_waits}
STOP_SECONDS = 10.0  # the background tasks' time to stop at shutdown (then left behind)
CLOSE_SECONDS = 10.0  # the adapters' time to close at shutdown (then left behind)


class Background:
    """The tasks every process runs beside the requests: the job workers (the archiver, the
    relay of changes whose process did not relay them, the webhooks' deliveries, the
    post-game reviews), the deadline poller, the event streams' reader, the metrics
    flusher."""

    def __init__(
        self,
        settings: Settings,
        archiver: Archiver,
        relay: Relay,
        service: GameService,
        obs: Instruments,
        secrecy: Secrecy,
        webhooks: Webhooks,
        deadlines: DeadlinePoller,
        reviews: Reviews,
        tournaments: Tournaments,
        bulk: BulkPairings,
        matchmaking: Matchmaking | None = None,
        correspondence: CorrespondenceParts | None = None,
        privacy: Any = None,  # service.privacy.use_cases.PlayerData; None: no SQL archive
    ) -> None:
        self.settings, self.archiver, self.service, self.obs = settings, archiver, service, obs
        self.reviews = reviews
        self.secrecy = secrecy
        self.tournaments = tournaments
        self.director = tournaments.director.worker(count=obs.count_job())
        self.bulk = bulk
        self.bulk_starts = bulk.worker(count=obs.count_job())
        self.relay = relay
        self.open_adapters: Callable[[], Awaitable[None]] | None = None
        self.relayer = relay.worker(count=obs.count_job())
        self.webhooks = webhooks
        self.deadlines = deadlines
        self.correspondence = correspondence
        self.privacy = privacy
        self.tasks: list[asyncio.Task] = []
        self.matchmaking = matchmaking
        self.matchmaker = (
            None if matchmaking is None else matchmaking.matchmaker.worker(count=obs.count_job())
        )
        # every event stream of the process, served by one reader of the store
        self.watchers = Watchers(
            service.store,
            max_streams=settings.streams.max_streams,
            max_per_client=settings.streams.max_per_client,
            buffer=settings.streams.buffer,
            keepalive=settings.streams.keepalive,
            presence=None if correspondence is None else correspondence.presence,
            presence_ttl=settings.correspondence.presence_ttl,
        )

    async def start(self) -> None:
        await self.service.store.open()
        if self.settings.archive.run_migrations:
            from infra.archive.migrate import upgrade_async  # noqa: PLC0415

            await upgrade_async(self.settings.archive.database_url)
        if self.open_adapters is not None:
            await self.open_adapters()
        if self.privacy is not None:
            await self.privacy.schedule()
        if self.settings.runtime.job_workers:
            self.start_jobs()
        self._run(self.deadlines.run_forever(), "ten-deadlines")
        self._run(self.watchers.run_forever(), "ten-watchers")
        if self.obs.metrics is not None:
            self._run(self.obs.metrics.flush_forever(), "ten-metrics")

    def start_jobs(self) -> None:
        """The workers of every queue (`service.jobs.worker.QUEUES`): in every serving
        process (TEN_JOB_WORKERS), else in the processes of `python -m service.cli work`."""
        self._run(self.archiver.run_forever(), "ten-archiver")
        self._run(self.relayer.run_forever(), "ten-relay")
        self._run(self.reviews.worker.run_forever(), "ten-reviews")
        self._run(self.director.run_forever(), "ten-tournaments")
        self._run(self.bulk_starts.run_forever(), "ten-bulk")
        if self.webhooks.enabled:
            self._run(self.webhooks.run_forever(), "ten-webhooks")
        if self.matchmaker is not None:
            self._run(self.matchmaker.run_forever(), "ten-matchmaking")
        if self.correspondence is not None:
            self._run(self.correspondence.push_worker.run_forever(), "ten-push")
        if self.privacy is not None:
            self._run(self.privacy.worker(self.obs.count_job()).run_forever(), "ten-privacy")

    def _run(self, coroutine: Any, name: str) -> None:
        self.tasks.append(asyncio.create_task(coroutine, name=name))

    async def stop(self) -> None:
        await stop_tasks(self.tasks, STOP_SECONDS)
        await self.webhooks.close()
        if self.correspondence is not None:
            await self.correspondence.sender.close()


def game_service(
    settings: Settings, adapters: Adapters, obs: Instruments
) -> tuple[GameService, Background]:
    """The use cases on the adapters, and what runs beside them: the relay and its reaction
    table, the workers of their queues and the deadline poller."""
    store = obs.store(adapters.store)
    assert adapters.tournaments is not None
    # the relay first: every use case saves through it; its table once the reactions exist
    relay = Relay(store, adapters.queue("relay"), facts=CAPABILITY_FACTS)
    webhooks = platform_webhooks(settings, adapters, obs)
    corr = correspondence_parts(settings, adapters, webhooks, obs)
    service = GameService(
        store, settings, relay=relay, bots=bot_work(settings), away=corr.use_cases.away
    )
    reviews = post_game_reviews(settings, adapters, service, obs)
    tournaments = Tournaments(
        adapters.tournaments,
        adapters.queue(TOURNAMENTS),
        Lobby(service).create,  # the platform deals the tables' games
        announce=webhooks.announce, retry=service.retry, quotas=store,
        max_open=settings.quotas.max_open_tournaments,
        adjusted=reviews.luck_adjusted,  # luck-adjusted standings read the games' reviews
    )  # fmt: skip
    # who may read a game of a deal still played at another table: the reads and the archive
    secrecy = Secrecy(store.load, adapters.tournaments.load_tournament, service.seat_or_none)
    ratings_by = settings.archive.ratings_by  # luck_adjusted: rated once reviewed
    archiver = Archiver(
        adapters.queue("archive"), adapters.archive, secrecy=secrecy, ratings_by=ratings_by,
        poll=settings.archive.interval, max_backoff=30.0, count=obs.count_job(),
    )  # fmt: skip
    # games whose clock ran out or that were left idle, on whichever replica sees them first
    deadlines = DeadlinePoller(
        store,
        service.fire_due,
        poll=settings.games.deadline_poll,
        lease=settings.games.deadline_lease,
        metrics=obs.metrics,
    )
    relay.register(
        reaction_table(
            archive=ArchiveReaction(
                store, archiver.queue, wake=archiver.wake, count=obs.count_queued()
            ),
            reviews=ReviewReaction(reviews.queue, wake=reviews.worker.wake, clock=reviews.clock)
            if ratings_by == "luck_adjusted"
            else None,
            webhooks=webhooks if webhooks.enabled else None,
            tournaments=TournamentReaction(tournaments.director.record_result),
            deadlines=deadlines,
            metrics=obs.reaction(),
            notices=corr.notices,
        )
    )
    kept = (webhooks, deadlines, reviews, tournaments, bulk_pairings(settings, adapters, service))
    return service, Background(
        settings, archiver, relay, service, obs, secrecy, *kept,
        matchmaking=matchmaking(settings, adapters, service, webhooks), correspondence=corr,
        privacy=player_data(settings, adapters, service),
    )  # fmt: skip


def reaction_table(
    *,
    archive: Reaction | None = None,
    reviews: Reaction | None = None,
    webhooks: Reaction | None = None,
    tournaments: Reaction | None = None,
    deadlines: LocalReaction | None = None,
    metrics: LocalReaction | None = None,
    notices: Reaction | None = None,
) -> ReactionTable:
    """What happens when a game changes: each kind of change (every event type of the
    domain, and the record's own facts) -> the reactions it calls for, run in the order the
    table first names them. Durable (marked before the save, at least once): the archive,
    the reviews (when ratings are by luck-adjusted places), the platform's webhooks (when
    configured), the tournaments; local (this process's): the
    deadline poller's wake, the metrics (when on). A kind no reaction wants has its row. A
    reaction left out (None: tests list the ones they look at) is in no row."""
    hooks, count = _listed(webhooks), _listed(metrics)
    return {
        GAME_CREATED: count,
        GAME_ENDED: (*_listed(archive), *_listed(reviews), *hooks, *_listed(tournaments), *count),
        DUE_MOVED: _listed(deadlines),
        "game_started": hooks,
        "seat_taken_over": (*hooks, *count),  # a webhook; a resign, counted as an action
        # the first event of an action a seat took: counted by type
        "card_drawn": count,
        "stopped": count,
        "bid_placed": count,
        "bid_passed": count,
        "card_bought": count,
        "buy_declined": count,
        "seat_reclaimed": count,
        # what an action or the clock makes follow: no reaction of its own
        "turn_started": (),
        "auction_started": (),
        "auction_won": (),
        "wild_discarded": (),
        "busted": (),
        "final_buy_started": (),
        "timed_out": (),
        "game_finished": (),  # its end is GAME_ENDED
        # a correspondence game's decision handed to a human seat: tell its player
        TURN_WAITS: _listed(notices),
    }


def _listed(reaction: Reaction | LocalReaction | None) -> tuple[Any, ...]:
    return () if reaction is None else (reaction,)


def refuse_jobs_nobody_works(settings: Settings, *, serving: bool = False) -> None:
    """Settings an app cannot start with; `serving` (the process's own app, what uvicorn
    serves: a deployment's settings) also without its own ledger key where identities are
    verified (`refuse_privacy_without_key`)."""
    if serving:
        refuse_privacy_without_key(settings)
    if not settings.runtime.job_workers and settings.redis.url is None:
        raise ValueError(
            "TEN_JOB_WORKERS=false needs TEN_REDIS_URL: the embedded store's queues live in "
            "this process, so no other process can work them"
        )


def refuse_privacy_without_key(settings: Settings) -> None:
    """A process that verifies identities (API keys or player JWTs: a platform's setup) needs
    its own TEN_PRIVACY_KEY: the fixed development key would let anyone holding the ledger
    test player ids against it. The open embedded default keeps the development key."""
    identity = settings.identity
    if settings.archive.privacy_key is None and (identity.api_keys or identity.jwt_configured):
        raise ValueError(
            "TEN_PRIVACY_KEY is not set while API keys or player JWTs are configured: set it "
            "to a secret of your own (the key of the erasure ledger's digests; docs/privacy.md)"
        )


async def work_jobs(settings: Settings, stop: asyncio.Event) -> None:
    """The queues' workers without the HTTP API, until `stop` is set (`python -m service.cli
    work`, beside serving processes started with TEN_JOB_WORKERS=false)."""
    if settings.redis.url is None:
        raise ValueError("the job workers' own process needs TEN_REDIS_URL (the queues)")
    refuse_privacy_without_key(settings)
    adapters = build_adapters(settings)
    obs = Instruments(settings, adapters.store_system, None)
    service, background = game_service(settings, adapters, obs)
    try:
        await service.store.open()
        await adapters.open()
        background.start_jobs()
        await stop.wait()
    finally:
        await close_all(background, adapters, obs)


async def close_all(background: Background, adapters: Adapters, obs: Instruments) -> None:
    """Stop the background tasks, then close the adapters (bounded: one shutdown in a full
    run never ended, waiting on an unknown step), then the instruments."""
    await background.stop()
    await finish_within(adapters.close(), "closing the adapters", CLOSE_SECONDS)
    obs.shutdown()


__all__ = [
    "CAPABILITY_FACTS",
    "Adapters",
    "Background",
    "CorrespondenceParts",
    "Instruments",
    "bot_work",
    "build_adapters",
    "bulk_pairings",
    "close_all",
    "correspondence_parts",
    "game_service",
    "matchmaking",
    "platform_webhooks",
    "post_game_reviews",
    "reaction_table",
    "refuse_jobs_nobody_works",
    "refuse_privacy_without_key",
    "work_jobs",
]
