"""Secrets across games: who may read a tournament game while its deal is still being
played at another table.

Every table of a duplicate round is dealt the same pile (`service.tournaments.records.game_seed`),
so any read of one table's game (its view, events, stream, odds, replay, archived record,
review; its result in the rounds and standings) shows the players of another table of that
deal the cards still to come to them. A game is *secret* while another table of its deal
in its round is still being played by a human (a table of bots only learns nothing from
what it could be shown). While it is, it is read only by:

- the platform (its API key), by any read;
- a player seated at it, through the live game's own reads (its view, events, stream and
  odds): what their table shows them anyway.

Everyone else, and the game's own players through its archived record, replay and review
(which show the seed, hence the whole pile), is refused with `game_embargoed` (403). A
secret game stops being secret once every other table of its deal has finished, and is
never secret again: a round's tables are paired at once, and a table that finished stays
so. A table has finished once the tournament holds its result, its game has ended (the
relay records the result just after), or the tournament ended without it.

A secret game is not archived either (`service.history.archiver` holds it, `sealed`, and frees the
rest of its deal, `deal_of`, once the last table's game is archived): the archive is read
by everyone and feeds the stats, the leaderboard and the ratings.

`Secrecy.check` is the one decision; `check_id` applies it to a game known by its id only
(its tournament table is the live record's: a review asked for before the game is
archived), `rounds_shown` and `standings_shown` to the tournament's own reads. No framework here: the
games, the tournaments and a caller's seat are read through callables the composition
root hands in."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from domain.tournaments.rules import Table
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.model import GameRecord, TableRef, TournamentRecord
from service.tournaments.records import game_id

LoadGame = Callable[[str], Awaitable[GameRecord | None]]
LoadTournament = Callable[[str], Awaitable[TournamentRecord | None]]
SeatOf = Callable[[GameRecord, Caller], Awaitable[int | None]]
Place = tuple[int, int]  # (round, table)

REMEMBERED = 4096  # games whose tournament table (or none) is remembered


def embargoed() -> ServiceError:
    return ServiceError("game_embargoed")


class Secrecy:
    """The policy over the stores (see the module docstring)."""

    def __init__(
        self,
        load_game: LoadGame,
        load_tournament: LoadTournament,
        seat_of: SeatOf,
        *,
        remembered: int = REMEMBERED,
    ) -> None:
        self._load_game = load_game
        self._load_tournament = load_tournament
        self._seat_of = seat_of
        self._refs: OrderedDict[str, TableRef | None] = OrderedDict()  # a game's never changes
        self._remembered = remembered

    async def check(self, record: GameRecord, caller: Caller, *, live: bool = False) -> None:
        """Refuse (`game_embargoed`) a read of this game by this caller while it is secret.
        `live`: one of the live game's own reads, which a player seated at it may make."""
        ref = record.tournament
        if ref is None or caller.platform or not await self._secret(ref):
            return
        if live and await self._seat_of(record, caller) is not None:
            return
        raise embargoed()

    async def check_id(self, game: str, caller: Caller) -> None:
        """`check` of an archived read: the game's own players are refused too."""
        if caller.platform:
            return
        ref = await self._ref(game)
        if ref is not None and await self._secret(ref):
            raise embargoed()

    async def rounds_shown(self, tournament: TournamentRecord, caller: Caller) -> TournamentRecord:
        """The tournament with the tables of secret games left out of its rounds and
        results, but the caller's own."""
        if caller.platform:
            return tournament
        secret = await self.secret(tournament)
        hide = {p for p in secret if not _seated(tournament, p, caller)}
        if not hide:
            return tournament
        rounds = tuple(
            msgspec.structs.replace(
                r, tables=tuple(t for t in r.tables if (r.number, t.number) not in hide)
            )
            for r in tournament.rounds
        )
        return _without_results(msgspec.structs.replace(tournament, rounds=rounds), hide)

    async def standings_shown(
        self, tournament: TournamentRecord, caller: Caller
    ) -> TournamentRecord:
        """The tournament without the results of secret games: the standings count a
        deal once it has been played everywhere."""
        if caller.platform:
            return tournament
        return _without_results(tournament, await self.secret(tournament))

    async def sealed(self, ref: TableRef) -> bool:
        """Whether the game of this table is secret now: its archiving waits (the archive is
        read by everyone, and its record shows the seed)."""
        return await self._secret(ref)

    async def deal_of(self, ref: TableRef) -> list[str]:
        """The games of the other tables dealt this table's pile in its round."""
        tournament = await self._load_tournament(ref.tournament_id)
        rounds = () if tournament is None else tournament.rounds
        played = next((r for r in rounds if r.number == ref.round), None)
        if played is None:
            return []
        deal = next((t.deal for t in played.tables if t.number == ref.table), None)
        return [
            game_id(ref.tournament_id, ref.round, t.number)
            for t in played.tables
            if t.deal == deal and t.number != ref.table
        ]

    async def secret(self, tournament: TournamentRecord) -> frozenset[Place]:
        """(round, table) of every secret game of the tournament now."""
        secret: set[Place] = set()
        for played in tournament.rounds:
            if all(tournament.result_of(played.number, t.number) for t in played.tables):
                continue  # every table of the round finished (the rounds before the last)
            deals: dict[str, list[Table]] = {}
            for table in played.tables:
                deals.setdefault(table.deal, []).append(table)
            for tables in deals.values():
                playing = await self._playing(tournament, played.number, tables)
                secret.update((played.number, t.number) for t in tables if playing - {t.number})
        return frozenset(secret)

    async def _secret(self, ref: TableRef) -> bool:
        tournament = await self._load_tournament(ref.tournament_id)
        return tournament is not None and (ref.round, ref.table) in await self.secret(tournament)

    async def _playing(
        self, tournament: TournamentRecord, number: int, tables: Sequence[Table]
    ) -> set[int]:
        """The tables of one deal still played by a human (two at most: enough to know that
        every table of the deal is secret)."""
        bots = {e.id for e in tournament.entrants if e.bot is not None}
        found: set[int] = set()
        for table in tables:
            if len(found) == 2:
                break
            if tournament.result_of(number, table.number) is not None:
                continue
            if all(seat in bots for seat in table.seats):
                continue
            game = await self._load_game(game_id(tournament.id, number, table.number))
            if game is None:
                if not tournament.ended:  # not dealt yet
                    found.add(table.number)
            elif not game.ended:
                found.add(table.number)
        return found

    async def _ref(self, game: str) -> TableRef | None:
        """The tournament table of a game in the live store (None: no tournament's, or not
        there: an archived game outlives its live record)."""
        if game in self._refs:
            self._refs.move_to_end(game)
            return self._refs[game]
        record = await self._load_game(game)
        if record is None:
            return None
        self._refs[game] = record.tournament
        if len(self._refs) > self._remembered:
            self._refs.popitem(last=False)
        return record.tournament


def _seated(tournament: TournamentRecord, place: Place, caller: Caller) -> bool:
    if caller.kind != "player":
        return False
    for played in tournament.rounds:
        if played.number == place[0]:
            return any(t.number == place[1] and caller.player_id in t.seats for t in played.tables)
    return False


def _without_results(
    tournament: TournamentRecord, hide: set[Place] | frozenset[Place]
) -> TournamentRecord:
    kept = tuple(r for r in tournament.results if (r.round, r.table) not in hide)
    if len(kept) == len(tournament.results):
        return tournament
    return msgspec.structs.replace(tournament, results=kept)
