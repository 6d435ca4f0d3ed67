"""`python -m service.cli records check FILE...`: replay game records with the engine and
check them (`service.history.records.check_record`, docs/records.md).

A file (or `-`, standard input) holds one record (JSON, pretty-printed or not) or many, one
a line (NDJSON, as the bulk export streams them: read a line at a time, so a file of any
size is checked in bounded memory). Each bad record is named on standard error with the
first thing wrong with it; the exit status is 0 when every record replays, 1 otherwise, 2
when a file cannot be read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO

import msgspec

from service.history.records import BadRecord, GameRecordV1, check_record

_record = msgspec.json.Decoder(GameRecordV1)


class Tally(msgspec.Struct):
    checked: int = 0
    bad: int = 0


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


def check_stream(name: str, stream: IO[bytes], tally: Tally) -> None:
    for line, data in documents(stream):
        tally.checked += 1
        wrong = check_one(data)
        if wrong is not None:
            tally.bad += 1
            game = game_id(data)
            label = f"{name}:{line}" + (f" (game {game})" if game else "")
            print(f"{label}: {wrong}", file=sys.stderr)


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
    if tally.bad:
        print(f"bad: {tally.bad} of {tally.checked} record(s) do not replay", file=sys.stderr)
        return 1
    print(f"ok: {tally.checked} record(s) replayed")
    return 0
