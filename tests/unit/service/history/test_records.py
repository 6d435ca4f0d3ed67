"""The game record (`service.history.records`): built from what the archive keeps of a game,
its JSON round trip, the fairness facts of `game_started`, its committed JSON Schema, and
the check that replays it, refusing a record changed anywhere."""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema
import msgspec
import pytest

from service.core.ports import StoredEvent
from service.entrypoints import openapi_export
from service.history.archiving import archival
from service.history.records import (
    BadRecord,
    GameRecordV1,
    check_record,
    encode_line,
    record_of,
    schema,
)
from tests.support.ended_games import Played, aborted_game, clocked, dataset


@cache
def games() -> tuple[Played, ...]:
    return (*dataset()[:10], aborted_game(3), *clocked()[:4])


def record(p: Played, events: list[StoredEvent] | None = None) -> GameRecordV1:
    kept = archival(p.record, p.stored, p.player_ids)
    return record_of(kept.game, p.stored if events is None else events)


def as_json(r: GameRecordV1) -> dict[str, Any]:
    return msgspec.json.decode(encode_line(r))


def from_json(document: dict[str, Any]) -> GameRecordV1:
    return msgspec.json.decode(msgspec.json.encode(document), type=GameRecordV1)


@pytest.mark.parametrize("i", range(len(games())))
def test_every_record_round_trips_and_replays(i: int) -> None:
    p = games()[i]
    line = encode_line(record(p))
    document = msgspec.json.decode(line)
    assert document["format"] == "ten-game-record"
    assert document["record_version"] == 1
    assert [e["seq"] for e in document["events"]] == list(range(1, len(p.stored) + 1))
    # each event exactly as published, byte for byte, in the line
    events = b",".join(bytes(e.data) for e in p.stored)
    assert b'"events":[' + events + b"]" in line
    jsonschema.validate(document, schema())
    check_record(from_json(document))


def test_a_game_without_fairness_is_not_verifiable_and_shows_its_seed() -> None:
    p = games()[0]
    fairness = as_json(record(p, with_fairness(p, None)))["fairness"]
    assert fairness == {
        "verifiable": False,
        "scheme": None,
        "commitment": None,
        "entropy": [],
        "start_drawn": False,
        "seed": p.record.state.seed,
    }


def with_fairness(p: Played, fair: Any) -> list[StoredEvent]:
    started = msgspec.json.decode(p.stored[0].data)
    started["fairness"] = fair
    return [StoredEvent(1, msgspec.json.encode(started)), *p.stored[1:]]


def test_the_fairness_of_game_started_is_carried() -> None:
    p = games()[1]
    fair = {
        "scheme": "ten-fair-v1",
        "commitment": "ab" * 32,
        "entropy": ["x"] + [""] * (len(p.player_ids) - 1),
        "start_drawn": True,
    }
    r = record(p, with_fairness(p, fair))
    assert as_json(r)["fairness"] == {**fair, "verifiable": True, "seed": p.record.state.seed}
    check_record(r)
    assert as_json(record(p, with_fairness(p, None)))["fairness"]["verifiable"] is False


def tampered(change: Any) -> GameRecordV1:
    p = next(g for g in games() if len(g.record.state.players) >= 3)
    document = as_json(record(p))
    change(document)
    return from_json(document)


def swap_drawn_cards(d: dict[str, Any]) -> None:
    drawn = [e["card"] for e in d["events"] if e["type"] == "card_drawn"]
    deck = d["deck"]
    j = next(k for k in range(1, len(drawn)) if drawn[k] != drawn[0])
    deck[0], deck[j] = deck[j], deck[0]


def drop_event(d: dict[str, Any]) -> None:
    del d["events"][5]


def change_score(d: dict[str, Any]) -> None:
    d["results"][0]["score"] += 1


def change_logged_score(d: dict[str, Any]) -> None:
    d["events"][-1]["results"][0]["score"] += 1


def change_status(d: dict[str, Any]) -> None:
    d["status"] = "aborted"


def change_a_draw(d: dict[str, Any]) -> None:
    drawn = next(e for e in d["events"] if e["type"] == "card_drawn")
    drawn["card"] = next(c for c in d["deck"] if c != drawn["card"])


def rename_a_seat(d: dict[str, Any]) -> None:
    d["seats"][1]["name"] += "x"


def change_rules(d: dict[str, Any]) -> None:
    d["rules"]["perfect_bonus"] = d["rules"].get("perfect_bonus", 1) + 1


def change_version(d: dict[str, Any]) -> None:
    d["version"] += 1


def change_busts(d: dict[str, Any]) -> None:
    d["results"][0]["busts"] += 1


def shorten_the_deck(d: dict[str, Any]) -> None:
    d["deck"].pop()


@pytest.mark.parametrize(
    "change",
    [
        swap_drawn_cards,
        drop_event,
        change_score,
        change_logged_score,
        change_status,
        change_a_draw,
        rename_a_seat,
        change_rules,
        change_version,
        change_busts,
        shorten_the_deck,
    ],
)
def test_a_changed_record_is_refused(change: Any) -> None:
    with pytest.raises(BadRecord):
        check_record(tampered(change))


def test_an_event_that_is_no_engine_event_is_refused() -> None:
    def unknown(d: dict[str, Any]) -> None:
        d["events"][3] = {"type": "teleported", "seq": 4, "version": 1}

    with pytest.raises(BadRecord, match="not one of the engine's"):
        check_record(tampered(unknown))


def test_the_committed_schema_is_the_code_s() -> None:
    path = openapi_export.RECORD_SCHEMA
    assert path.read_text(encoding="utf-8") == openapi_export.render_json(schema()), (
        f"{path} is stale: run `{openapi_export.EXPORT_COMMAND}` and commit the result"
    )
    jsonschema.Draft202012Validator.check_schema(schema())
