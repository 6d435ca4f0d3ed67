"""Post-game reviews (`domain.bots.review`): computed once per finished game, in the background,
off the serving process's interpreter, and kept in the archive.

`Reviews.review` answers a review kept already; else, for a finished game (live in the game
store, or archived), it queues the game in the `reviews` queue and answers None (the API's
202 with Retry-After); a game still being played, aborted or abandoned is refused
(`game_not_reviewable`: a review of a live game would coach its players mid-game). The
reviews waiting are bounded: per caller (TEN_MAX_PENDING_REVIEWS, through the one quota
mechanism, `service.core.quotas`: 429 `too_many_pending_reviews`) and in all (TEN_REVIEW_QUEUE,
the queue's own atomic bound: 429 `too_many_reviews`); a refused request queues nothing,
and asking again for a review already waiting is no new request. A
review whose job the queue set aside (quarantined: a log that cannot be reviewed, or
`max_failures` failures in a row) is refused too (`review_failed`, the API's 500: the
service's failure, which asking again cannot mend) until an operator puts it back
(`python -m service.cli jobs requeue reviews <game id>`); it is then computed as any other.

The queue's worker (`service.jobs.worker.Worker`, in every replica) reads the game's public log
(the live store's while the game is there, else the archive's), reviews it in the bots'
pool (`service.games.bot_work.BotWork`: worker processes, so a review of about 2 s of CPU never
holds the serving process's interpreter) and keeps the JSON with `GameArchive.save_review`,
written once (the first of two replicas reviewing one game wins; both computed the same
review). A log that cannot be reviewed is a `PermanentFailure`: set aside in quarantine
(`python -m service.cli jobs`), never retried forever. A pool with no room (`bots_busy`)
is no failure of the review: the worker waits (`service.jobs.worker`, as every queue's), so a
busy spell never sets a review aside.

Each seat of a review carries its luck-adjusted result (`domain.bots.review.luck_adjusted`:
`adjusted_margin`, `adjusted_score`, `adjusted_rank`). A review kept before they existed has
its seats' `margin` and `luck`, from which they follow with the game's results: `completed`
adds them when such a review is read (the row stays as it was kept), so no kept review is
recomputed or deleted for them.

Ratings by luck-adjusted places (TEN_RATINGS_BY=luck_adjusted, `service.history.archiving`): the
relay's durable reaction to an ended game (`ReviewReaction`, through the one outbox) queues
the review of a finished game two players or more could be rated in (in no caller's quota
and under no bound: the service's own request is never refused); whichever comes last of
the review kept and the game archived rates the game by its seats' `adjusted_rank`
(`rate_if_reviewed`: the job once it kept the review, the archiver once it archived the
game; `service.history.archiving.rate_reviewed` rates it once). A rated game's review set aside leaves the game unrated until
it is put back. `adjusted_ranks` gives the rebuild every rated game's ranks, computing the
reviews missing the way the job does (`keep_review`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

from domain.bots.review import GameReview, LuckAdjusted, SeatResult, luck_adjusted, review
from domain.game.model import AnyEvent
from service.core.errors import ServiceError
from service.core.ports import GameStore
from service.core.quotas import Quota, QuotaStore
from service.core.settings import RatingsBy
from service.games.bot_work import BotWork
from service.games.use_cases import GAME_ID
from service.history.archive import ArchivedGame, GameArchive
from service.history.archiving import rate_reviewed
from service.history.ratings import MIN_SEATS, SeatFacts, rated_table
from service.jobs.worker import Job, LeasedQueue, PermanentFailure, QueueFull, Worker
from service.reactions.relay import Change

QUEUE = "reviews"
REVIEW_SECONDS = 2.0  # about one review's time on one core (the master bot judges each decision)
RETRY_AFTER = 2  # seconds a client is told to wait before asking again
FULL_RETRY_AFTER = 10  # seconds: the reviews waiting at their bound in all
KEEP = 24 * 3600  # seconds a caller's quota of pending reviews lives after its last request
PAGE = 1000  # events read per round trip

_events_decoder = msgspec.json.Decoder(AnyEvent)


def _full() -> ServiceError:
    error = ServiceError("too_many_reviews")
    error.retry_after = FULL_RETRY_AFTER
    return error


class ReviewOut(GameReview, frozen=True, kw_only=True):
    """A finished game's review (`domain.bots.review.GameReview`) with the game's id."""

    game_id: str


def reviewed(game_id: str, log: list[bytes]) -> bytes:
    """The review's JSON from the game's public log (each event's JSON): what the pool
    computes (a module function, so a worker process can run it). ValueError when the log
    is not one of a finished game."""
    try:
        events = [_events_decoder.decode(data) for data in log]
    except msgspec.DecodeError as exc:
        raise ValueError(f"not an event log: {exc}") from exc
    found = review(events)
    return msgspec.json.encode(ReviewOut(game_id=game_id, **msgspec.structs.asdict(found)))


class _KeptSeat(msgspec.Struct):
    margin: float
    luck: float
    adjusted_rank: int | None = None  # absent: kept before the luck-adjusted results


class _Kept(msgspec.Struct):
    seats: list[_KeptSeat]


def incomplete(kept: bytes) -> bool:
    """The kept review lacks its seats' luck-adjusted results (kept before they existed)."""
    return any(s.adjusted_rank is None for s in msgspec.json.decode(kept, type=_Kept).seats)


def completed(kept: bytes, results: Sequence[SeatResult]) -> bytes:
    """A kept review's JSON with each seat's luck-adjusted result derived from its seats'
    `margin` and `luck` and the game's `results` (`luck_adjusted`, as the review computes it);
    every other field as kept."""
    found = msgspec.json.decode(kept)
    seats = found["seats"]
    adjusted = luck_adjusted([s["margin"] for s in seats], [s["luck"] for s in seats], results)
    for seat, a in zip(seats, adjusted, strict=True):
        seat.update(adjusted_margin=a.margin, adjusted_score=a.score, adjusted_rank=a.rank)
    return msgspec.json.encode(found)


class _AdjustedSeat(msgspec.Struct):
    adjusted_margin: float
    adjusted_score: float
    adjusted_rank: int


class _Adjusted(msgspec.Struct):
    seats: list[_AdjustedSeat]


def adjusted_of(review_json: bytes) -> tuple[LuckAdjusted, ...]:
    """A complete review's (`Reviews.review`'s answer) luck-adjusted results, seat order."""
    seats = msgspec.json.decode(review_json, type=_Adjusted).seats
    return tuple(
        LuckAdjusted(margin=s.adjusted_margin, score=s.adjusted_score, rank=s.adjusted_rank)
        for s in seats
    )


async def keep_review(
    archive: GameArchive, bots: BotWork, game_id: str, log: list[bytes], at: datetime
) -> None:
    """Compute the finished game's review from its public log in the bots' pool and keep it
    (written once: a review kept meanwhile stays). PermanentFailure for a log no review can
    be made of."""
    try:  # a pool with no room (bots_busy) is a wait of the worker (service.jobs.worker)
        found = await bots.run(True, reviewed, game_id, log)
    except ValueError as exc:  # a log no review can be made of: it never will be
        raise PermanentFailure(str(exc)) from exc
    await archive.save_review(game_id, found, at)


def archived_ranks(kept: bytes, game: ArchivedGame) -> list[int]:
    """The luck-adjusted ranks (seat order) of an archived game's kept review (completed from
    the game's results when kept before they existed)."""
    whole = completed(kept, game.results) if incomplete(kept) else kept
    return [a.rank for a in adjusted_of(whole)]


async def adjusted_ranks(
    archive: GameArchive,
    bots: BotWork,
    *,
    clock: Callable[[], float] = time.time,
    page: int = 200,
) -> tuple[dict[str, list[int]], list[str]]:
    """Every rated archived game's luck-adjusted ranks (game id -> seat order) from its kept
    review, a review missing computed and kept now (`keep_review`, as the job keeps it); and
    the games no review can be made of (not in the first)."""
    ranks: dict[str, list[int]] = {}
    failed: list[str] = []
    cursor = None
    while True:
        found, cursor = await archive.list_games(
            status="finished", ranked=True, cursor=cursor, limit=page
        )
        for summary in found:
            facts = [
                SeatFacts(player_id=s.player_id, bot=s.bot, counts=s.ranked, rank=s.rank)
                for s in summary.seats
            ]
            if not rated_table(facts):
                continue
            game_id = summary.id
            if await archive.get_review(game_id) is None:
                log = [e.data for e in await archive.events(game_id)]
                at = datetime.fromtimestamp(clock(), UTC)
                try:
                    await keep_review(archive, bots, game_id, log, at)
                except PermanentFailure:
                    failed.append(game_id)
                    continue
            kept, game = await archive.get_review(game_id), await archive.get_game(game_id)
            if kept is not None and game is not None:
                ranks[game_id] = archived_ranks(kept, game)
        if cursor is None:
            return ranks, failed


async def rate_if_reviewed(archive: GameArchive, game_id: str) -> None:
    """Rate the archived finished game by its kept review's luck-adjusted ranks (once:
    `rate_reviewed`); nothing while either is missing: the other one's arrival rates it."""
    kept, game = await archive.get_review(game_id), await archive.get_game(game_id)
    if kept is not None and game is not None and game.status == "finished":
        await rate_reviewed(archive, game_id, archived_ranks(kept, game))


class ReviewReaction:
    """By luck-adjusted places, the relay's durable reaction to an ended game: a finished
    game with two player ids or more (those a rating could count) has its review queued,
    in no caller's quota and under no bound (the module docstring); its job rates it."""

    name = "reviews"
    durable: Literal[True] = True

    def __init__(
        self,
        queue: LeasedQueue,
        *,
        wake: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.queue = queue
        self.wake = wake
        self.clock = clock

    async def react(self, change: Change) -> None:
        record = change.new
        players = sum(1 for p in record.player_ids if p is not None)
        if record.status != "finished" or players < MIN_SEATS:
            return
        await self.queue.put(record.id, b"", self.clock(), keep=True)  # queued once
        if self.wake is not None:
            self.wake()


class Reviews:
    def __init__(
        self,
        store: GameStore,
        archive: GameArchive,
        queue: LeasedQueue,
        bots: BotWork,
        *,
        bound: int = 0,
        quotas: QuotaStore | None = None,
        per_caller: int = 0,
        clock: Callable[[], float] = time.time,
        ratings_by: RatingsBy = "results",
        **worker: Any,
    ) -> None:
        """`bound`: the reviews waiting in all (0: no bound); `per_caller`: those one owner
        waits for (0, or no `quotas`: no quota); `ratings_by`: "luck_adjusted", the job rates
        the game it reviewed (see the module docstring)."""
        self.ratings_by = ratings_by
        self.store = store
        self.archive = archive
        self.queue = queue
        self.bots = bots
        self.bound = bound
        self.clock = clock
        self.quota = None
        if quotas is not None:
            self.quota = Quota(
                quotas, "reviews", per_caller, "too_many_pending_reviews", self._pending,
                keep=KEEP, retry_after=lambda oldest, now: RETRY_AFTER, clock=clock,
            )  # fmt: skip
        self.worker = Worker(queue, self.handle, clock=clock, **worker)

    async def review(self, game_id: str, owner: str | None = None) -> bytes | None:
        """The game's review (JSON), or None while it is computed (it is queued). `owner`:
        whose quota a new request counts in (`service.core.quotas.owner_of`; None: none)."""
        if not GAME_ID.fullmatch(game_id):
            raise ServiceError("game_not_found")
        kept = await self.archive.get_review(game_id)
        if kept is not None:
            return await self._complete(game_id, kept)
        record = await self.store.load(game_id)
        if record is not None:
            status: str = record.status
        else:
            archived = await self.archive.get_game(game_id)
            if archived is None:
                raise ServiceError("game_not_found")
            status = archived.status
        if status != "finished":
            raise ServiceError("game_not_reviewable")
        if await self.queue.queued(game_id):
            return None  # asked already: no new request
        if await self.queue.quarantined_job(game_id) is not None:
            raise ServiceError("review_failed")  # set aside: failed for good until requeued
        if self.bound and await self.queue.backlog() >= self.bound:
            raise _full()  # before the quota: a refused request holds no place in it
        due = self.clock()
        if self.quota is not None and owner is not None:
            await self.quota.take(owner, game_id)
            # fair between callers: an owner's k-th waiting review is due k-1 reviews' time
            # later, so another caller's first one is computed before it
            due += (await self.quota.count(owner) - 1) * REVIEW_SECONDS
        try:
            queued = await self.queue.put(game_id, b"", due, keep=True, bound=self.bound)
        except QueueFull:
            raise _full() from None
        # not queued: it is already (asked meanwhile), or it was set aside meanwhile
        if not queued and await self.queue.quarantined_job(game_id) is not None:
            raise ServiceError("review_failed")
        self.worker.wake()
        return None

    async def luck_adjusted(self, game_id: str) -> tuple[LuckAdjusted, ...] | None:
        """The finished game's seats' luck-adjusted results (seat order) from its review, or
        None while the review is computed (queued by this call if it was not, in no caller's
        quota). Raises as `review` does (`too_many_reviews` while the queue is full,
        `review_failed` for a review set aside): the service's own readers wait and ask
        again."""
        kept = await self.review(game_id)
        return None if kept is None else adjusted_of(kept)

    async def _pending(self, game_ids: Sequence[str]) -> dict[str, bool]:
        """Which of these reviews still count in a caller's quota: those waiting do; those
        computed or set aside do not; one neither (its request is on its way) is unknown."""
        found: dict[str, bool] = {}
        for game_id in game_ids:
            if await self.queue.queued(game_id):
                found[game_id] = True
            elif await self.archive.get_review(game_id) is not None:
                found[game_id] = False  # computed
            elif await self.queue.quarantined_job(game_id) is not None:
                found[game_id] = False  # set aside
        return found

    async def handle(self, job: Job) -> None:
        game_id = job.id
        if await self.archive.get_review(game_id) is None:  # else another replica kept it
            log = await self._log(game_id)
            at = datetime.fromtimestamp(self.clock(), UTC)
            await keep_review(self.archive, self.bots, game_id, log, at)
        if self.ratings_by == "luck_adjusted":
            await rate_if_reviewed(self.archive, game_id)

    async def _complete(self, game_id: str, kept: bytes) -> bytes:
        """The kept review with its luck-adjusted results (`completed`): as kept unless it
        was kept before they existed; then from the game's results, the live store's while the
        game is there, else the archive's."""
        if not incomplete(kept):
            return kept
        record = await self.store.load(game_id)
        if record is not None and record.state is not None and record.state.results is not None:
            return completed(kept, record.state.results)
        archived = await self.archive.get_game(game_id)
        if archived is None or not archived.results:
            raise ServiceError("game_not_found")  # a review kept of a game no longer kept
        return completed(kept, archived.results)

    async def _log(self, game_id: str) -> list[bytes]:
        """The finished game's public log: the live store's, else the archive's."""
        record = await self.store.load(game_id)
        if record is not None:
            if record.status != "finished":
                raise PermanentFailure(f"the game is {record.status}, not finished")
            log: list[bytes] = []
            after = 0
            while page := await self.store.events(game_id, after, PAGE):
                log.extend(e.data for e in page)
                after = page[-1].seq
            return log
        archived = await self.archive.get_game(game_id)
        if archived is None or archived.status != "finished":
            raise PermanentFailure("no finished game with this id")
        return [e.data for e in await self.archive.events(game_id)]
