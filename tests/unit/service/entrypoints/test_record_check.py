"""`python -m service.cli records check`: records in a JSON file (pretty-printed or not), in
NDJSON, on standard input; a bad record named with its reason and a non-zero exit."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import msgspec
import pytest

from service.entrypoints.cli import main
from service.history.archiving import archival
from service.history.records import encode_line, record_of
from tests.support.ended_games import aborted_game, dataset


def lines() -> list[bytes]:
    played = [*dataset()[:3], aborted_game(2)]
    return [
        encode_line(record_of(archival(p.record, p.stored, p.player_ids).game, p.stored))
        for p in played
    ]


def bad(line: bytes) -> bytes:
    document = msgspec.json.decode(line)
    document["results"][0]["score"] += 3
    return msgspec.json.encode(document) + b"\n"


def test_an_ndjson_file_of_good_records(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"".join(lines()))
    assert main(["records", "check", str(path)]) == 0
    assert "ok: 4 record(s) replayed" in capsys.readouterr().out


def test_one_pretty_printed_record(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(json.loads(lines()[0]), indent=2))
    assert main(["records", "check", str(path)]) == 0
    assert "ok: 1 record(s)" in capsys.readouterr().out


def test_a_bad_record_is_named_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    good = lines()
    path = tmp_path / "export.ndjson"
    path.write_bytes(good[0] + bad(good[1]) + b"\n" + good[2])
    assert main(["records", "check", str(path)]) == 1
    err = capsys.readouterr().err
    game = msgspec.json.decode(good[1])["id"]
    assert f"{path}:2 (game {game}): the record's results differ" in err
    assert "bad: 1 of 3 record(s)" in err


def test_standard_input_and_what_is_no_record(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(lines()[3] + b'{"format": "other"}\n'))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["records", "check", "-"]) == 1
    assert "<stdin>:2: not a ten-game-record v1" in capsys.readouterr().err


def test_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["records", "check", str(tmp_path / "none.ndjson")]) == 2
    assert "none.ndjson" in capsys.readouterr().err


def test_an_illegal_move_is_named_with_its_event(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A bid the rules refuse (more than the bidder holds): the event's seq and version."""
    good = lines()
    document = msgspec.json.decode(good[1])
    bid = next(e for e in document["events"] if e["type"] == "bid_placed")
    bid["amount"] = 999
    path = tmp_path / "export.ndjson"
    path.write_bytes(good[0] + msgspec.json.encode(document) + b"\n")
    assert main(["records", "check", str(path)]) == 1
    err = capsys.readouterr().err
    where = f"event {bid['seq']} (version {bid['version']})"
    assert f"{path}:2 (game {document['id']}): {where}: bid_placed of seat" in err
    assert "bid_too_high" in err


def end(count: int, complete: bool = True, **more: object) -> bytes:
    return (
        msgspec.json.encode({"type": "end", "count": count, "complete": complete, **more}) + b"\n"
    )


def test_the_export_s_complete_end_line_is_no_record(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"".join(lines()) + end(4))
    assert main(["records", "check", str(path)]) == 0
    out = capsys.readouterr()
    assert "ok: 4 record(s) replayed" in out.out
    assert "no export end line" not in out.err
    path.write_bytes(end(0))  # an export of no game
    assert main(["records", "check", str(path)]) == 0


def test_an_incomplete_export_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    error = {"status": 503, "code": "store_unavailable", "detail": "retry shortly"}
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"".join(lines()[:2]) + end(2, False, error=error))
    assert main(["records", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{path}:3: the export is incomplete, cut after 2 record(s) "
        "(store_unavailable: retry shortly)" in err
    )
    assert "do not replay" not in err  # the records sent replay


@pytest.mark.parametrize(
    ("tail", "why"),
    [
        (end(3), ":3: the export's end counts 3 record(s), 2 came before it"),
        (end(2) + lines()[2], ":4: a line after the export's end (line 3)"),
        (b'{"type": "end", "count": "two"}\n', ":3: a malformed export end line"),
    ],
)
def test_an_end_line_that_does_not_fit_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture, tail: bytes, why: str
) -> None:
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"".join(lines()[:2]) + tail)
    assert main(["records", "check", str(path)]) == 1
    assert f"{path}{why}" in capsys.readouterr().err


def test_ndjson_without_an_end_line_is_checked_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"".join(lines()))
    assert main(["records", "check", str(path)]) == 0
    assert f"note: {path} has no export end line" in capsys.readouterr().err
