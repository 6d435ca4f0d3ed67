"""Tournament standings recomputed from outside the service (the HTTP and scale-out tests):
`domain.tournaments.rules.standings` over the rounds the API shows and each table's game as the
test read it (from the API or straight from the archive), and for luck-adjusted standings each
game's review as the reviews' API shows it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from domain.tournaments.rules import (
    Adjusted,
    Entrant,
    Round,
    Settings,
    Table,
    TableResult,
    standings,
)

# a table's game as read: (its deal: the game's seed, (rank, score) per seat in seat order)
Played = tuple[str, Sequence[tuple[int, int]]]
# a game's review as read: (adjusted rank, adjusted score) per seat in seat order
Reviewed = Sequence[tuple[int, float]]


def recomputed(
    tournament: dict,
    rounds: list[dict],
    game: Callable[[str], Played],
    review: Callable[[str], Reviewed] | None = None,
) -> list[dict]:
    """The standings as the API shows them, from the domain's rules alone (`review`: each
    game's review, for a luck-adjusted tournament)."""
    settings = Settings(
        format=tournament["format"], deal_mode=tournament["deal_mode"],
        table_size=tournament["table_size"], rounds=tournament["rounds"],
        standings_by=tournament["standings_by"], ranked_by=tournament["ranked_by"],
    )  # fmt: skip
    entrants = [Entrant(id=e["entrant"], bot=e["bot"]) for e in tournament["entrants"]]
    played, scored = [], []
    for r in rounds:
        tables = []
        for t in r["tables"]:
            deal, by_seat = game(t["game_id"])
            table = Table(number=t["table"], seats=tuple(t["seats"]), deal=deal)
            tables.append(table)
            adjusted = None
            if review is not None:
                seats = review(t["game_id"])
                adjusted = Adjusted(
                    ranks=tuple(rank for rank, _ in seats), scores=tuple(s for _, s in seats)
                )
            result = TableResult(
                round=r["round"], table=table.number, deal=deal, seats=table.seats,
                ranks=tuple(rank for rank, _ in by_seat),
                scores=tuple(score for _, score in by_seat), adjusted=adjusted,
            )  # fmt: skip
            scored.append(result)
        played.append(Round(number=r["round"], tables=tuple(tables), byes=tuple(r["byes"])))
    plain = {}
    if settings.standings_by != "results":
        by_results = msgspec.structs.replace(settings, standings_by="results")
        plain = {s.entrant: s for s in standings(by_results, entrants, played, scored)}
    return [
        {
            "position": s.position, "entrant": s.entrant, "points": s.points,
            "matchpoints": s.matchpoints, "margin": s.margin, "buchholz": s.buchholz,
            "score": s.score,
            "result_points": plain[s.entrant].points if plain else None,
            "result_matchpoints": plain[s.entrant].matchpoints if plain else None,
            "result_margin": plain[s.entrant].margin if plain else None,
            "strength": s.strength,
            "result_strength": plain[s.entrant].strength if plain else None,
        }
        for s in standings(settings, entrants, played, scored)
    ]  # fmt: skip
