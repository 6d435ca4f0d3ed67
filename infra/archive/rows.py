"""From a finished game (its record and event log) to the archive's rows: pure, no I/O.

Everything derived is checked first, so a game is archived whole or not at all:
the log must be complete (seq 1..n, `game_started` first, `game_finished` last), the
game finished, one player id (or None) per seat, a player id in one seat at most.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from domain.model import AnyEvent, Busted, CardDrawn, GameFinished, GameStarted
from service.ports import GameRecord, StoredEvent

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
    if state.phase != "finished" or state.results is None:
        raise ValueError(f"game {record.id} is not finished")
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
    game_finished (with the game's results)."""
    state = record.state
    seqs = [e.seq for e in events]
    if seqs != list(range(1, len(events) + 1)) or len(events) != state.last_seq:
        raise ValueError(
            f"the event log of game {record.id} is not complete (seq 1..{state.last_seq})"
        )
    decoded = [_event_decoder.decode(e.data) for e in events]
    if any(d.seq != e.seq for d, e in zip(decoded, events, strict=True)):
        raise ValueError("an event's seq does not match its stored seq")
    start, end = decoded[0], decoded[-1]
    if not isinstance(start, GameStarted) or not isinstance(end, GameFinished):
        raise ValueError("an archived log runs from game_started to game_finished")
    if end.results != state.results:
        raise ValueError("the log's game_finished results differ from the game's")
    return decoded


def archive_rows(
    record: GameRecord, events: Sequence[StoredEvent], player_ids: Sequence[str | None]
) -> ArchiveRows:
    """The rows of one archived game. Raises ValueError when the input is not a whole,
    finished game."""
    _check_game(record, player_ids)
    state = record.state
    n = len(state.players)
    decoded = _checked_log(record, events)
    start = decoded[0]

    deck = [e.card for e in decoded if isinstance(e, CardDrawn)]
    deck.extend(state.draw_pile)  # empty once a game ends (every card is drawn first)
    if len(deck) != start.draw_pile_size:
        raise ValueError(f"{len(deck)} cards drawn from a pile of {start.draw_pile_size}")
    busts = [0] * n
    for e in decoded:
        if isinstance(e, Busted):
            busts[e.seat] += 1

    finished_at = timestamp(record.updated_at)
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
    }
    seats = [
        {
            "game_id": record.id,
            "seat": p.seat,
            "name": p.name,
            "bot": p.bot,
            "player_id": player_ids[p.seat],
            "finished_at": finished_at,
        }
        for p in state.players
    ]
    results = _result_rows(record, player_ids, busts)
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


def _result_rows(
    record: GameRecord, player_ids: Sequence[str | None], busts: list[int]
) -> list[dict[str, Any]]:
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
            "perfect_colors": sum(1 for cs in r.colors.values() if len(cs.run) == PERFECT_RUN),
            "busts": busts[r.seat],
        }
        for r in record.state.results or ()
    ]
