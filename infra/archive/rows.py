"""What the archive keeps of a game (`service.history.archive.Archival`, decided and checked by
`service.history.archiving.archival`) as the rows of its tables: a mapping, no rule.

The copies the queries need (`models`): each seat's row has the game's end, each result's
row the seat's player id and whether the seat counts.
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.history.archive import Archival


class ArchiveRows(msgspec.Struct, frozen=True, kw_only=True):
    game: dict[str, Any]
    seats: list[dict[str, Any]]
    results: list[dict[str, Any]]
    events: list[dict[str, Any]]


def archive_rows(kept: Archival) -> ArchiveRows:
    """The rows of one archived game (`games`, `seats`, `results`, `events`)."""
    g = kept.game
    game = {
        "id": g.id,
        "player_count": g.player_count,
        "rules": g.rules,
        "seed": g.seed,
        "deck": list(g.deck),
        "schema_version": g.schema_version,
        "created_at": g.created_at,
        "finished_at": g.finished_at,
        "version": g.version,
        "event_count": g.event_count,
        "status": g.status,
        "ranked": g.ranked,
        "unranked_reason": g.unranked_reason,
        "unranked_reasons": list(g.unranked_reasons),
        "clock": g.clock,
        "tournament_id": g.tournament.id if g.tournament else None,
        "tournament_round": g.tournament.round if g.tournament else None,
        "tournament_table": g.tournament.table if g.tournament else None,
    }
    seats = [
        {
            "game_id": g.id,
            "seat": s.seat,
            "name": s.name,
            "bot": s.bot,
            "player_id": s.player_id,
            "finished_at": g.finished_at,
            "ranked": s.ranked,
            "unranked_reason": s.unranked_reason,
        }
        for s in g.seats
    ]
    by_seat = {s.seat: s for s in g.seats}
    results = [
        {
            "game_id": g.id,
            "seat": r.seat,
            "player_id": by_seat[r.seat].player_id,
            "score": r.score,
            "colors": {c: {"points": cs.points, "run": list(cs.run)} for c, cs in r.colors.items()},
            "rank": r.rank,
            "winner": r.winner,
            "currency": r.currency,
            "bust": r.bust,
            "cards": r.cards,
            "resigned": r.resigned,
            "perfect_colors": r.perfect_colors,
            "busts": r.busts,
            "ranked": by_seat[r.seat].ranked,
        }
        for r in g.results
    ]
    events = [{"game_id": g.id, "seq": e.seq, "type": e.type, "data": e.data} for e in kept.events]
    return ArchiveRows(game=game, seats=seats, results=results, events=events)
