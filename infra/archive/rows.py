"""From an ended game (its record and event log) to the archive's rows: pure, no I/O.

An ended game is finished, or stopped while live: aborted (`GameRecord.aborted`, by its
host or the platform) or abandoned (`GameRecord.abandoned`, nobody acted for the idle
time); a stopped game's state stops mid-game, it has no results, its status says which.
Each game is ranked or not, and each seat's result counts or not, as
`service.ranking.ranking` decides on the record.

Everything derived is checked first, so a game is archived whole or not at all:
the log must be complete (seq 1..n, `game_started` first; a finished game's ends with
`game_finished`, a stopped game's has none), one player id (or None) per seat, a player
id in one seat at most.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from domain.model import AnyEvent, Busted, CardDrawn, GameFinished, GameStarted
from service.model import GameRecord
from service.ports import StoredEvent
from service.ranking import Ranking, ranking

from .models import ID_LENGTH, PLAYER_ID_LENGTH

PERFECT_RUN = 9  # a run of all nine numbers
_event_decoder = msgspec.json.Decoder(AnyEvent)


class ArchiveRows(msgspec.Struct, frozen=True, kw_only=True):
    game: dict[str, Any]
    seats: list[dict[str, Any]]
    results: list[dict[str, Any]]
    events: list[dict[str, Any]]


def timestamp(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _check_game(record: GameRecord, player_ids: Sequence[str | None]) -> None:
    state = record.state
    if state is None:
        raise ValueError(f"game {record.id} never started: nothing to archive")
    if record.stopped:
        if state.phase == "finished":
            raise ValueError(f"game {record.id} finished: it cannot be {record.status} too")
    elif state.phase != "finished" or state.results is None:
        raise ValueError(f"game {record.id} is neither finished nor aborted nor abandoned")
    if not record.id or len(record.id) > ID_LENGTH:
        raise ValueError(f"a game id has 1 to {ID_LENGTH} characters")
    n = len(state.players)
    if len(player_ids) != n:
        raise ValueError(f"{len(player_ids)} player ids for {n} seats")
    known = [p for p in player_ids if p is not None]
    if len(set(known)) != len(known):
        raise ValueError("a player id can hold only one seat in a game")
    if any(not p or len(p) > PLAYER_ID_LENGTH for p in known):
        raise ValueError(f"a player id has 1 to {PLAYER_ID_LENGTH} characters")


def _checked_log(record: GameRecord, events: Sequence[StoredEvent]) -> list[AnyEvent]:
    """The game's whole event log, decoded: seq 1 to the last, game_started to
    game_finished (with the game's results); a stopped game's without game_finished."""
    state = record.state
    assert state is not None
    seqs = [e.seq for e in events]
    if seqs != list(range(1, len(events) + 1)) or len(events) != state.last_seq:
        raise ValueError(
            f"the event log of game {record.id} is not complete (seq 1..{state.last_seq})"
        )
    decoded = [_event_decoder.decode(e.data) for e in events]
    if any(d.seq != e.seq for d, e in zip(decoded, events, strict=True)):
        raise ValueError("an event's seq does not match its stored seq")
    if not decoded or not isinstance(decoded[0], GameStarted):
        raise ValueError("an archived log starts with game_started")
    if record.stopped:
        if any(isinstance(d, GameFinished) for d in decoded):
            raise ValueError(f"an {record.status} game's log has no game_finished")
        return decoded
    end = decoded[-1]
    if not isinstance(end, GameFinished):
        raise ValueError("an archived log runs from game_started to game_finished")
    if end.results != state.results:
        raise ValueError("the log's game_finished results differ from the game's")
    return decoded


def decide_ranking(record: GameRecord, player_ids: Sequence[str | None]) -> Ranking:
    """`ranking` of the game as archived: player ids given apart from the record's own
    were never verified (they are ranked as unverified)."""
    if tuple(player_ids) != tuple(record.player_ids):
        record = msgspec.structs.replace(record, player_ids=tuple(player_ids), verified=())
    return ranking(record)


def archive_rows(
    record: GameRecord, events: Sequence[StoredEvent], player_ids: Sequence[str | None]
) -> ArchiveRows:
    """The rows of one archived game. Raises ValueError when the input is not a whole
    game that ended (finished, aborted or abandoned)."""
    _check_game(record, player_ids)
    state = record.state
    assert state is not None
    n = len(state.players)
    decoded = _checked_log(record, events)
    deck, busts = _deck_and_busts(record, decoded)
    finished_at = timestamp(record.updated_at)
    decided = decide_ranking(record, player_ids)
    game = {
        "id": record.id,
        "player_count": n,
        "rules": msgspec.to_builtins(state.rules),
        "seed": state.seed,
        "deck": deck,
        "schema_version": state.schema_version,
        "created_at": timestamp(record.created_at),
        "finished_at": finished_at,
        "version": state.version,
        "event_count": len(events),
        "status": record.status,
        "ranked": decided.ranked,
        "unranked_reason": decided.reason,
        "unranked_reasons": list(decided.reasons),
    }
    seats = [
        {
            "game_id": record.id,
            "seat": p.seat,
            "name": p.name,
            "bot": p.bot,
            "player_id": player_ids[p.seat],
            "finished_at": finished_at,
            "ranked": decided.counts(p.seat),
            "unranked_reason": decided.seats[p.seat],
        }
        for p in state.players
    ]
    results = _result_rows(record, player_ids, busts, decided)
    event_rows = [
        {
            "game_id": record.id,
            "seq": e.seq,
            "type": d.__struct_config__.tag,
            "data": bytes(e.data).decode(),
        }
        for e, d in zip(events, decoded, strict=True)
    ]
    return ArchiveRows(game=game, seats=seats, results=results, events=event_rows)


def _deck_and_busts(record: GameRecord, decoded: list[AnyEvent]) -> tuple[list[str], list[int]]:
    """The whole deck in draw order (the cards drawn, then those left in the pile: none
    once a game finished, the rest of a stopped one's) and each seat's busts."""
    state = record.state
    assert state is not None
    start = decoded[0]
    assert isinstance(start, GameStarted)
    deck = [e.card for e in decoded if isinstance(e, CardDrawn)]
    deck.extend(state.draw_pile)
    if len(deck) != start.draw_pile_size:
        raise ValueError(f"{len(deck)} cards drawn from a pile of {start.draw_pile_size}")
    busts = [0] * len(state.players)
    for e in decoded:
        if isinstance(e, Busted):
            busts[e.seat] += 1
    return deck, busts


def _result_rows(
    record: GameRecord, player_ids: Sequence[str | None], busts: list[int], decided: Ranking
) -> list[dict[str, Any]]:
    """One row per seat of a finished game (`ranked`: the seat's result counts); none for
    a stopped one."""
    assert record.state is not None
    return [
        {
            "game_id": record.id,
            "seat": r.seat,
            "player_id": player_ids[r.seat],
            "score": r.score,
            "colors": {c: {"points": cs.points, "run": list(cs.run)} for c, cs in r.colors.items()},
            "rank": r.rank,
            "winner": r.winner,
            "currency": r.currency,
            "bust": r.bust,
            "cards": r.cards,
            "resigned": r.resigned,
            "perfect_colors": sum(1 for cs in r.colors.values() if len(cs.run) == PERFECT_RUN),
            "busts": busts[r.seat],
            "ranked": decided.counts(r.seat),
        }
        for r in record.state.results or ()
    ]
