"""The bulk export's end (`History.bulk_export`, `service.core.exports.ended`) on a fake
archive port: a whole export ends with a complete trailer counting its records; a read that
fails after the first page ends it with an incomplete trailer carrying the failure, and
nothing is read after it."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import msgspec

from service.core.exports import End, ended
from service.core.ports import StoreUnavailable
from service.history.archive import ExportedGame, ExportFilter
from service.history.archiving import archival
from service.history.reads import History
from service.history.records import GameRecordV1, check_record
from tests.support.ended_games import dataset

GAMES = 5


def exported() -> list[ExportedGame]:
    played = sorted(dataset()[:GAMES], key=lambda p: (p.finished_at, p.id))
    return [(archival(p.record, p.stored, p.player_ids).game, p.stored) for p in played]


class PagedArchive:
    """The one read the export makes (`export_page`), over `games`, failing with `failure`
    from the read number `fails_at` on (None: never)."""

    def __init__(self, fails_at: int | None = None, failure: Exception | None = None) -> None:
        self.games = exported()
        self.fails_at, self.failure = fails_at, failure
        self.reads = 0

    async def export_page(
        self, which: ExportFilter, after: tuple[datetime, str] | None, limit: int
    ) -> list[ExportedGame]:
        self.reads += 1
        if self.fails_at is not None and self.reads >= self.fails_at:
            assert self.failure is not None
            raise self.failure
        keys = [(g.finished_at, g.id) for g, _ in self.games]
        start = 0 if after is None else sum(1 for key in keys if key <= after)
        return self.games[start : start + limit]


def export(archive: PagedArchive, page: int) -> list[bytes | End]:
    async def body() -> list[bytes | End]:
        return [item async for item in History(archive).bulk_export(page=page)]  # type: ignore[arg-type]

    return asyncio.run(body())


def records(items: list[bytes | End]) -> list[dict[str, Any]]:
    lines = [line for item in items if isinstance(item, bytes) for line in item.splitlines()]
    return [msgspec.json.decode(line) for line in lines]


def test_a_whole_export_ends_with_a_complete_trailer_counting_its_records() -> None:
    archive = PagedArchive()
    items = export(archive, page=2)
    end = items[-1]
    assert isinstance(end, End)
    assert end.complete
    assert all(isinstance(item, bytes) for item in items[:-1])
    got = records(items)
    assert [r["id"] for r in got] == [g.id for g, _ in archive.games]
    for item in items[:-1]:
        for line in item.splitlines():  # type: ignore[union-attr]
            check_record(msgspec.json.decode(line, type=GameRecordV1))
    assert msgspec.json.decode(end.line()) == {"type": "end", "count": GAMES, "complete": True}
    assert archive.reads == 4  # three pages of 2, 2 and 1 game, then an empty one


def test_a_read_failing_after_the_first_page_ends_with_an_incomplete_trailer() -> None:
    failure = StoreUnavailable("the archive database is unavailable: connection lost")
    archive = PagedArchive(fails_at=2, failure=failure)
    items = export(archive, page=2)
    assert len(records(items)) == 2  # the first page, sent before the failure
    end = items[-1]
    assert isinstance(end, End)
    assert end.failure is failure
    assert not end.complete
    error = {"code": "store_unavailable", "status": 503}
    assert msgspec.json.decode(end.line(error)) == {
        "type": "end",
        "count": 2,
        "complete": False,
        "error": error,
    }
    assert archive.reads == 2  # nothing read after the failure


def test_a_failure_before_any_record_counts_none() -> None:
    archive = PagedArchive(fails_at=1, failure=RuntimeError("boom"))
    items = export(archive, page=2)
    assert len(items) == 1
    end = items[0]
    assert isinstance(end, End)
    assert (dict(end.fields), type(end.failure)) == ({"type": "end", "count": 0}, RuntimeError)


def test_lines_are_counted_whatever_their_chunks() -> None:
    async def lines():
        yield b'{"a":1}\n{"a":2}\n'
        yield b'{"a":3}\n'
        raise ValueError("cut")

    async def body() -> list[bytes | End]:
        return [item async for item in ended(lines(), lambda n: {"n": n})]

    items = asyncio.run(body())
    end = items[-1]
    assert isinstance(end, End)
    assert dict(end.fields) == {"n": 3}
    assert isinstance(end.failure, ValueError)
