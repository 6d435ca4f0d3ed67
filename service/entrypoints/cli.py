"""Operations on a running deployment, from the same settings as the service (TEN_* variables).

    python -m service.cli jobs list archive          # the quarantined jobs of a queue
    python -m service.cli jobs requeue archive ID..  # put them back once the cause is fixed
    python -m service.cli jobs requeue archive --all
    python -m service.cli ratings rebuild [--url URL] [--by results|luck_adjusted]
                                                     # every rating again, from the archive
    python -m service.cli work                       # the queues' workers, no HTTP (until SIGTERM)
    python -m service.cli records check FILE..       # replay game records (JSON, NDJSON, - stdin)

`work` runs the workers of every queue in a process of its own, for serving processes
started with TEN_JOB_WORKERS=false (their CPU then goes to requests only); any number of
them may run, each job is leased to one.

The queues are those of `service.jobs.worker.QUEUES` (`jobs --help` lists them). On the embedded
store the queues live in the service's process, so there is nothing for this command to
reach: it says so.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from datetime import UTC, datetime

from service.bootstrap import build_adapters, work_jobs
from service.core.settings import RATINGS_BY, RatingsBy, Settings
from service.entrypoints.record_check import check_files
from service.games.bot_work import BotWork
from service.history.archiving import rebuild_ratings
from service.history.reviews import adjusted_ranks
from service.jobs.worker import QUEUES, requeue_all


async def _jobs(settings: Settings, args: argparse.Namespace) -> int:
    if settings.redis.url is None:
        print(
            "the embedded store keeps its queues in the service's own process: nothing to "
            "reach from here (set TEN_REDIS_URL to the service's Redis)",
            file=sys.stderr,
        )
        return 2
    adapters = build_adapters(settings)
    try:
        queue = adapters.queue(args.queue)
        aside = await queue.quarantined(10_000)
        if args.action == "list":
            for job in aside:
                at = datetime.fromtimestamp(job.at, UTC).isoformat(timespec="seconds")
                print(f"{job.id}\t{at}\t{job.failures} failure(s)\t{job.reason}")
            print(f"{len(aside)} quarantined job(s) in {args.queue}", file=sys.stderr)
            return 0
        ids = [job.id for job in aside] if args.all else args.ids
        if not ids and not args.all:
            print("name the jobs to put back, or --all", file=sys.stderr)
            return 2
        back = await requeue_all(queue, ids, time.time())
        print(f"{back} of {len(ids)} job(s) put back in {args.queue}", file=sys.stderr)
        return 0 if back == len(ids) else 1
    finally:
        await adapters.close()


async def _rebuild_ratings(url: str | None, by: RatingsBy) -> int:
    """Recompute every rating from the archive at `url` (as for TEN_DATABASE_URL) by the
    places `by`; the number of games rated. By "luck_adjusted" the reviews missing are
    computed first (in this process, as the review job computes and keeps them)."""
    from infra.archive import SqlArchive  # noqa: PLC0415 - SQLAlchemy only for this command

    archive = SqlArchive.from_url(url)
    try:
        if by == "results":
            return await rebuild_ratings(archive)
        adjusted, failed = await adjusted_ranks(archive, BotWork(None))
        for game_id in failed:
            print(f"{game_id}: no review can be made of its log: not rated", file=sys.stderr)
        return await rebuild_ratings(archive, adjusted)
    finally:
        await archive.close()


async def _work(settings: Settings) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await work_jobs(settings, stop)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m service.cli", description=__doc__.split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    jobs = commands.add_parser(
        "jobs",
        help="the quarantined jobs of a queue",
        epilog="queues: " + "; ".join(f"{name}: {about}" for name, about in QUEUES.items()),
    )
    jobs.add_argument("action", choices=("list", "requeue"))
    jobs.add_argument("queue", choices=tuple(QUEUES))
    jobs.add_argument("ids", nargs="*", help="the jobs to put back (requeue)")
    jobs.add_argument("--all", action="store_true", help="requeue every quarantined job")
    ratings = commands.add_parser("ratings", help="the players' ratings")
    ratings.add_argument("action", choices=("rebuild",), help="recompute every rating")
    ratings.add_argument("--url", help="database URL (default: TEN_DATABASE_URL, else SQLite)")
    ratings.add_argument(
        "--by",
        choices=RATINGS_BY,
        help="the places games rate by: their results, or their reviews' luck-adjusted ranks "
        "(default: TEN_RATINGS_BY)",
    )
    commands.add_parser("work", help="the queues' workers, without the HTTP API")
    records = commands.add_parser("records", help="game records (docs/records.md)")
    records.add_argument("action", choices=("check",), help="replay records and check them")
    records.add_argument("files", nargs="+", help="a record (JSON) or NDJSON file; - for stdin")
    args = parser.parse_args(argv)
    if args.command == "records":
        return check_files(args.files)
    if args.command == "work":
        return asyncio.run(_work(Settings.from_env()))
    if args.command == "ratings":
        by = args.by or Settings.from_env().archive.ratings_by
        rated = asyncio.run(_rebuild_ratings(args.url, by))
        print(f"ok: {rated} rated games replayed (by {by})")
        return 0
    return asyncio.run(_jobs(Settings.from_env(), args))


if __name__ == "__main__":
    sys.exit(main())
