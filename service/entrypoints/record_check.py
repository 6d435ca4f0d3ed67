"""`python -m service.cli records check FILE...`: replay game records with the engine and
check them (`service.history.records.check_record`, docs/records.md).

A file (or `-`, standard input) holds one record (JSON, pretty-printed or not) or many, one
a line (NDJSON, as the bulk export streams them: read a line at a time, so a file of any
size is checked in bounded memory). The bulk export's last line is its trailer, no record
(`{"type": "end", "count": N, "complete": true}`, `service.history.reads.export_trailer`):
an export cut short (`"complete": false`, its `error`), a count that is not the records
before it, or a line after it is an error like a bad record; NDJSON without a trailer is
checked as it is, with a note that it cannot be told whole. Each bad record is named on
standard error with the first thing wrong with it; the exit status is 0 when every record
replays (and every trailer says its export is complete), 1 otherwise, 2 when a file cannot
be read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, Any

import msgspec

from service.history.reads import END
from service.history.records import BadRecord, GameRecordV1, check_record

_record = msgspec.json.Decoder(GameRecordV1)


class Tally(msgspec.Struct):
    checked: int = 0
    bad: int = 0  # records that do not replay
    cut: int = 0  # exports whose end line is missing records, or wrong


def documents(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number, JSON) of each record: NDJSON when the first line is a whole JSON value,
    else the whole stream as one record."""
    first = stream.readline()
    while first and not first.strip():
        first = stream.readline()
    try:
        msgspec.json.decode(first)
    except msgspec.DecodeError:
        yield 1, first + stream.read()
        return
    yield 1, first
    for number, line in enumerate(stream, start=2):
        if line.strip():
            yield number, line


class _Named(msgspec.Struct):
    id: str | None = None


def game_id(data: bytes) -> str | None:
    """The record's id, when it has one to name it by."""
    try:
        return msgspec.json.decode(data, type=_Named).id
    except msgspec.DecodeError:
        return None


def check_one(data: bytes) -> str | None:
    """What is wrong with one record's JSON (None: it replays)."""
    try:
        record = _record.decode(data)
    except msgspec.DecodeError as exc:
        return f"not a ten-game-record v1: {exc}"
    try:
        check_record(record)
    except BadRecord as exc:
        return str(exc)
    return None


class Trailer(msgspec.Struct, frozen=True):
    """The bulk export's last line (`service.history.reads.export_trailer`)."""

    type: str
    count: int
    complete: bool
    error: dict[str, Any] | None = None


def trailer(data: bytes) -> Trailer | None:
    """The export's trailer, when `data` is one (a `type` of `end`: no record has a
    `type`)."""
    try:
        found = msgspec.json.decode(data, type=_Typed)
    except msgspec.DecodeError:
        return None
    if found.type != END:
        return None
    try:
        return msgspec.json.decode(data, type=Trailer)
    except msgspec.DecodeError as exc:
        return Trailer(type=END, count=-1, complete=False, error={"detail": str(exc)})


class _Typed(msgspec.Struct):
    type: str | None = None


def incomplete(end: Trailer, records: int) -> str | None:
    """What the trailer says is missing from the `records` before it (None: nothing)."""
    if end.count < 0:
        return f"a malformed export end line: {(end.error or {}).get('detail')}"
    if not end.complete:
        error = end.error or {}
        why = ": ".join(str(error[k]) for k in ("code", "detail") if error.get(k))
        return f"the export is incomplete, cut after {end.count} record(s)" + (
            f" ({why})" if why else ""
        )
    if end.count != records:
        return f"the export's end counts {end.count} record(s), {records} came before it"
    return None


def check_stream(name: str, stream: IO[bytes], tally: Tally) -> None:
    records = 0
    end: tuple[int, Trailer] | None = None
    ndjson = False
    for line, data in documents(stream):
        ndjson = ndjson or line > 1
        if end is not None:
            tally.cut += 1
            print(f"{name}:{line}: a line after the export's end (line {end[0]})", file=sys.stderr)
            continue
        found = trailer(data)
        if found is not None:
            end = (line, found)
            missing = incomplete(found, records)
            if missing is not None:
                tally.cut += 1
                print(f"{name}:{line}: {missing}", file=sys.stderr)
            continue
        records += 1
        tally.checked += 1
        wrong = check_one(data)
        if wrong is not None:
            tally.bad += 1
            game = game_id(data)
            label = f"{name}:{line}" + (f" (game {game})" if game else "")
            print(f"{label}: {wrong}", file=sys.stderr)
    if ndjson and end is None:
        print(
            f"note: {name} has no export end line: a bulk export cut short cannot be told "
            "from a whole one",
            file=sys.stderr,
        )


def check_files(paths: list[str]) -> int:
    tally = Tally()
    for path in paths:
        try:
            if path == "-":
                check_stream("<stdin>", sys.stdin.buffer, tally)
            else:
                with open(path, "rb") as stream:
                    check_stream(path, stream, tally)
        except OSError as exc:
            print(f"{path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if tally.cut:
        print(f"bad: {tally.cut} problem(s) with an export's end line", file=sys.stderr)
    if tally.bad:
        print(f"bad: {tally.bad} of {tally.checked} record(s) do not replay", file=sys.stderr)
    if tally.bad or tally.cut:
        return 1
    print(f"ok: {tally.checked} record(s) replayed")
    return 0
