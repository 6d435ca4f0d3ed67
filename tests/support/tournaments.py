"""Tournament standings recomputed from outside the service (the HTTP and scale-out tests):
`domain.tournaments.rules.standings` over the rounds the API shows and each table's game as the
test read it (from the API or straight from the archive)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from domain.tournaments.rules import Entrant, Round, Settings, Table, TableResult, standings

# a table's game as read: (its deal: the game's seed, (rank, score) per seat in seat order)
Played = tuple[str, Sequence[tuple[int, int]]]


def recomputed(tournament: dict, rounds: list[dict], game: Callable[[str], Played]) -> list[dict]:
    """The standings as the API shows them, from the domain's rules alone."""
    settings = Settings(
        format=tournament["format"], deal_mode=tournament["deal_mode"],
        table_size=tournament["table_size"], rounds=tournament["rounds"],
    )  # fmt: skip
    entrants = [Entrant(id=e["entrant"], bot=e["bot"]) for e in tournament["entrants"]]
    played, scored = [], []
    for r in rounds:
        tables = []
        for t in r["tables"]:
            deal, by_seat = game(t["game_id"])
            table = Table(number=t["table"], seats=tuple(t["seats"]), deal=deal)
            tables.append(table)
            result = TableResult(
                round=r["round"], table=table.number, deal=deal, seats=table.seats,
                ranks=tuple(rank for rank, _ in by_seat),
                scores=tuple(score for _, score in by_seat),
            )  # fmt: skip
            scored.append(result)
        played.append(Round(number=r["round"], tables=tuple(tables), byes=tuple(r["byes"])))
    return [
        {
            "position": s.position, "entrant": s.entrant, "points": s.points,
            "matchpoints": s.matchpoints, "buchholz": s.buchholz, "score": s.score,
        }
        for s in standings(settings, entrants, played, scored)
    ]  # fmt: skip
