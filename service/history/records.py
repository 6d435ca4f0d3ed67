"""The game record, format "ten-game-record" version 1: one archived game as a document a
third party can keep, replay and check offline (docs/records.md).

`record_of` builds it from the archive (`service.history.archive`): the game, its seats
and results, the revealed seed and the deck as dealt, every event's JSON exactly as it was
published, and the deal's fairness facts from `game_started.fairness` (absent or null: a
game dealt before the scheme or from an explicit deck, `verifiable` false). Its JSON Schema
is `schema()` (committed as openapi/game-record.schema.json and served by the API).

`check_record` replays a record with the engine and says what is wrong with it, if
anything: the log, every action of it judged again by the engine from the dealt deck
(`domain.game.rejudge`: its legality and the very events it produces, each card drawn the
deck's next), the final state against the rules' invariants and the results the scoring
gives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

import msgspec

from domain.game.invariants import violations
from domain.game.model import AnyEvent, Busted, GameFinished, GameStarted, GameState
from domain.game.rejudge import Misplayed, rejudge
from domain.game.results import final_results
from service.core.ports import StoredEvent
from service.history.archive import ArchivedGame, ArchivedResult, ArchivedStatus
from service.history.archiving import PERFECT_RUN

FORMAT = "ten-game-record"
RECORD_VERSION = 1
SCHEME = "ten-fair-v1"
_RECORD = {"frozen": True, "kw_only": True}


class RecordSeat(msgspec.Struct, **_RECORD):
    seat: int
    name: str
    player_id: str | None
    bot: str | None  # the bot level of a bot's seat; null for a human
    ranked: bool  # the seat's result counts for its player (the archive's `ranked`)
    unranked_reason: str | None


class RecordFairness(msgspec.Struct, **_RECORD):
    """The deal's commitment and its inputs: `verifiable` false (scheme and commitment
    null, no entropy) for a game dealt from an explicit deck or before the scheme."""

    verifiable: bool
    scheme: Literal["ten-fair-v1"] | None
    commitment: str | None
    entropy: tuple[str, ...]  # each seat's, in seat order ("" for none)
    start_drawn: bool  # the starting seat was drawn from the deal's stream, not named
    seed: str  # the server seed, revealed once the game ended


class RecordTournament(msgspec.Struct, **_RECORD):
    id: str
    round: int
    table: int


class GameRecordV1(msgspec.Struct, **_RECORD):
    """One ended game, as exported (docs/records.md)."""

    format: Literal["ten-game-record"] = FORMAT
    record_version: Literal[1] = RECORD_VERSION
    id: str
    status: ArchivedStatus
    created_at: datetime
    ended_at: datetime
    player_count: int
    rules: dict[str, Any]
    # the time control it was played under; null: none (or, for a game archived before the
    # archive kept it, not known unless exported with its tournament)
    clock: dict[str, Any] | None = None
    # the tournament table it was; null: none (or, as `clock`, not known)
    tournament: RecordTournament | None = None
    seats: tuple[RecordSeat, ...]
    fairness: RecordFairness
    deck: tuple[str, ...]  # the draw pile as dealt, top card first
    events: tuple[msgspec.Raw, ...]  # each event's JSON exactly as published, seq order
    results: tuple[ArchivedResult, ...]  # per seat; empty for an aborted or abandoned game
    ranked: bool
    unranked_reasons: tuple[str, ...]
    schema_version: int  # of the engine that played it
    version: int  # actions accepted


class RecordContext(msgspec.Struct, **_RECORD):
    """What the archive may not know of a game but the exporter may: a tournament's time
    control and table for its games archived before the archive kept them."""

    tournament: RecordTournament | None = None
    clock: dict[str, Any] | None = None


class _Fair(msgspec.Struct, frozen=True):
    scheme: str
    commitment: str
    entropy: tuple[str, ...] = ()
    start_drawn: bool = False


class _Started(msgspec.Struct, frozen=True):
    type: str
    fairness: _Fair | None = None


_started = msgspec.json.Decoder(_Started)
_encoder = msgspec.json.Encoder()
_NO_CONTEXT = RecordContext()


def fairness_of(first_event: bytes | None, seed: str) -> RecordFairness:
    """The deal's fairness facts from the log's `game_started` (its JSON)."""
    fair = None if first_event is None else _started.decode(first_event).fairness
    if fair is None or fair.scheme != SCHEME:
        return RecordFairness(
            verifiable=False,
            scheme=None,
            commitment=None,
            entropy=(),
            start_drawn=False,
            seed=seed,
        )
    return RecordFairness(
        verifiable=True,
        scheme=SCHEME,
        commitment=fair.commitment,
        entropy=fair.entropy,
        start_drawn=fair.start_drawn,
        seed=seed,
    )


def record_of(
    game: ArchivedGame, events: Sequence[StoredEvent], context: RecordContext = _NO_CONTEXT
) -> GameRecordV1:
    """The record of an archived game with its whole log."""
    return GameRecordV1(
        id=game.id,
        status=game.status,
        created_at=game.created_at,
        ended_at=game.finished_at,
        player_count=game.player_count,
        rules=game.rules,
        clock=game.clock if game.clock is not None else context.clock,
        tournament=(
            context.tournament
            if game.tournament is None
            else RecordTournament(
                id=game.tournament.id, round=game.tournament.round, table=game.tournament.table
            )
        ),
        seats=tuple(
            RecordSeat(
                seat=s.seat,
                name=s.name,
                player_id=s.player_id,
                bot=s.bot,
                ranked=s.ranked,
                unranked_reason=s.unranked_reason,
            )
            for s in game.seats
        ),
        fairness=fairness_of(bytes(events[0].data) if events else None, game.seed),
        deck=game.deck,
        events=tuple(msgspec.Raw(bytes(e.data)) for e in events),
        results=game.results,
        ranked=game.ranked,
        unranked_reasons=game.unranked_reasons,
        schema_version=game.schema_version,
        version=game.version,
    )


def encode_line(record: GameRecordV1) -> bytes:
    """The record as one NDJSON line (its JSON and a newline)."""
    return _encoder.encode(record) + b"\n"


def schema() -> dict[str, Any]:
    """The record's JSON Schema (2020-12), generated from `GameRecordV1`."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ten-game-record v1",
        **msgspec.json.schema(GameRecordV1),
    }


# ---------------------------------------------------------------- checking

_event = msgspec.json.Decoder(AnyEvent)


class BadRecord(ValueError):
    """A record that does not replay: the message says why."""


def check_record(record: GameRecordV1) -> None:
    """Replay `record` with the engine; raise BadRecord with the first thing wrong."""
    if record.format != FORMAT or record.record_version != RECORD_VERSION:
        raise BadRecord(f"not a {FORMAT} v{RECORD_VERSION} record")
    try:
        events = [_event.decode(bytes(raw)) for raw in record.events]
    except msgspec.DecodeError as exc:
        raise BadRecord(f"an event is not one of the engine's: {exc}") from None
    _check_log(record, events)
    state = _replayed(record, events)
    _check_end(record, events, state)


def _check_log(record: GameRecordV1, events: Sequence[Any]) -> None:
    if not events or type(events[0]) is not GameStarted:
        raise BadRecord("the log does not start with game_started")
    for i, event in enumerate(events, start=1):
        if event.seq != i:
            raise BadRecord(f"event {i} has seq {event.seq}")
    started = events[0]
    if started.draw_pile_size != len(record.deck):
        raise BadRecord(
            f"game_started deals {started.draw_pile_size} cards, the deck has {len(record.deck)}"
        )
    # names only: a seat's bot may change (taken over, reclaimed)
    seated = [(p.seat, p.name) for p in started.players]
    if seated != [(s.seat, s.name) for s in record.seats]:
        raise BadRecord("the seats differ from game_started's players")
    if len(seated) != record.player_count:
        raise BadRecord("player_count differs from the seats")
    if msgspec.to_builtins(started.rules) != record.rules:
        raise BadRecord("the rules differ from game_started's")


def _replayed(record: GameRecordV1, events: Sequence[Any]) -> GameState:
    """The engine's state after the whole log, dealt from the record's deck, every action
    of it judged again by the engine (`domain.game.rejudge`): its events must be the ones
    the engine produces for it, every draw the deck's next card."""
    try:
        return rejudge(events, record.deck, record.fairness.seed)
    except Misplayed as exc:
        raise BadRecord(str(exc)) from None


def _check_end(record: GameRecordV1, events: Sequence[Any], state: GameState) -> None:
    finished = type(events[-1]) is GameFinished
    if finished != (record.status == "finished"):
        raise BadRecord(
            f"status {record.status} but the log {'ends' if finished else 'does not end'} with game_finished"
        )
    if state.version != record.version:
        raise BadRecord(
            f"the log ends at version {state.version}, the record says {record.version}"
        )
    broken = violations(state, record.deck)  # the rules' invariants (rules.md 8)
    if broken:
        raise BadRecord(f"the final state is not consistent: {'; '.join(broken)}")
    if not finished:
        if record.results:
            raise BadRecord(f"a game {record.status} has no results")
        return
    scored = tuple(_result(r) for r in final_results(state.players, state.rules))
    logged = tuple(_result(r) for r in events[-1].results)
    kept = tuple(_result(r) for r in record.results)
    if scored != logged:
        raise BadRecord("game_finished's results differ from the scoring of the final state")
    if kept != scored:
        raise BadRecord("the record's results differ from the scoring of the final state")
    busts = Counter(e.seat for e in events if type(e) is Busted)
    for r in record.results:
        perfect = sum(1 for cs in r.colors.values() if len(cs.run) == PERFECT_RUN)
        if (r.busts, r.perfect_colors) != (busts[r.seat], perfect):
            raise BadRecord(f"seat {r.seat}'s busts or perfect colours differ from the log's")


def _result(r: Any) -> tuple[Any, ...]:
    colors = {c: (cs.points, tuple(cs.run)) for c, cs in r.colors.items()}
    return (r.seat, r.score, colors, r.rank, r.winner, r.currency, r.bust, r.cards, r.resigned)
