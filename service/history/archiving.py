"""Archiving an ended game: what the archive keeps of it (`archival`, pure), and the two use
cases that write the archive through its unit of work (`service.history.archive.ArchiveUnit`):
`archive_game` and `rebuild_ratings`.

An ended game is finished, or stopped while live: aborted (`GameRecord.aborted`, by its
host or the platform) or abandoned (`GameRecord.abandoned`, nobody acted for the idle
time); a stopped game's state stops mid-game, it has no results, its status says which.
Each game is ranked or not, and each seat's result counts or not, as `service.core.ranking`
decides on the record (`archived_ranking`: player ids given apart from the record's own
are unverified); a ranked game is rated when `service.history.ratings.rated_table` finds two or
more rated seats.

Everything derived is checked first, so a game is archived whole or not at all (a
ValueError, before anything is written): the log must be complete (seq 1..n,
`game_started` first; a finished game's ends with `game_finished`, a stopped game's has
none), one player id (or None) per seat, a player id in one seat at most, ids no longer
than the archive keeps.

Rated exactly once (`archive_game`): a rated game's ratings are updated in the unit that
adds the game, and only when that unit added it; a second archiver of the same game adds
nothing, rates nothing and answers False. The players' ratings are read through the unit,
which holds them until it ends: two games with a player in common are rated one after the
other, the second from what the first wrote (no lost update), in the rating order.

The rebuild (`rebuild_ratings`, `python -m service.cli ratings rebuild`): every rating
again, by replaying the archive's rated games in rating order (`service.history.ratings.replay`):
the same numbers as the ratings updated game by game, to the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from domain.game.model import AnyEvent, Busted, CardDrawn, GameFinished, GameStarted, Result
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.core.ranking import archived_ranking
from service.history.archive import (
    ID_LENGTH,
    PLAYER_ID_LENGTH,
    Archival,
    ArchivedEvent,
    ArchivedGame,
    ArchivedResult,
    ArchivedSeat,
    ArchivedTable,
    ArchiveUnits,
    ColorScore,
    GameRating,
)
from service.history.ratings import RatedSeat, SeatFacts, rate, rated_table, replay

PERFECT_RUN = 9  # a run of all nine numbers
_event_decoder = msgspec.json.Decoder(AnyEvent)


def timestamp(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def archival(
    record: GameRecord, events: Sequence[StoredEvent], player_ids: Sequence[str | None]
) -> Archival:
    """What the archive keeps of the ended game `record` with its whole log `events` and a
    player id (or None) per seat. Raises ValueError when the input is not a whole game that
    ended (finished, aborted or abandoned)."""
    _check_game(record, player_ids)
    state = record.state
    assert state is not None
    decoded = _checked_log(record, events)
    deck, busts = _deck_and_busts(record, decoded)
    decided = archived_ranking(record, player_ids)
    ref = record.tournament
    seats = tuple(
        ArchivedSeat(
            seat=p.seat,
            name=p.name,
            bot=p.bot,
            player_id=player_ids[p.seat],
            ranked=decided.counts(p.seat),
            unranked_reason=decided.seats[p.seat],
        )
        for p in state.players
    )
    # none for a stopped game
    results = tuple(_archived_result(r, busts[r.seat]) for r in state.results or ())
    game = ArchivedGame(
        id=record.id,
        status=record.status,  # checked: finished, aborted or abandoned
        ranked=decided.ranked,
        unranked_reason=decided.reason,
        unranked_reasons=decided.reasons,
        player_count=len(state.players),
        rules=msgspec.to_builtins(state.rules),
        seed=state.seed,
        deck=tuple(deck),
        schema_version=state.schema_version,
        created_at=timestamp(record.created_at),
        finished_at=timestamp(record.updated_at),
        version=state.version,
        event_count=len(events),
        seats=seats,
        results=results,
        clock=None if state.clock is None else msgspec.to_builtins(state.clock.control),
        tournament=None
        if ref is None
        else ArchivedTable(id=ref.tournament_id, round=ref.round, table=ref.table),
    )
    logged = tuple(
        ArchivedEvent(seq=e.seq, type=d.__struct_config__.tag, data=bytes(e.data).decode())
        for e, d in zip(events, decoded, strict=True)
    )
    return Archival(game=game, events=logged, rated=tuple(rated_seats(game)))


def _archived_result(r: Result, busts: int) -> ArchivedResult:
    return ArchivedResult(
        seat=r.seat,
        score=r.score,
        colors={c: ColorScore(points=cs.points, run=tuple(cs.run)) for c, cs in r.colors.items()},
        rank=r.rank,
        winner=r.winner,
        currency=r.currency,
        bust=r.bust,
        cards=r.cards,
        resigned=r.resigned,
        perfect_colors=sum(1 for cs in r.colors.values() if len(cs.run) == PERFECT_RUN),
        busts=busts,
    )


def seat_facts(game: ArchivedGame) -> tuple[SeatFacts, ...]:
    """What the ratings look at of each seat of an archived game, in seat order."""
    ranks = {r.seat: r.rank for r in game.results}
    return tuple(
        SeatFacts(player_id=s.player_id, bot=s.bot, counts=s.ranked, rank=ranks.get(s.seat))
        for s in game.seats
    )


def rated_seats(game: ArchivedGame) -> list[RatedSeat]:
    """The seats of an archived game that are rated (`service.history.ratings.rated_table`), in
    seat order; empty when the game is not rated."""
    return rated_table(seat_facts(game))


async def archive_game(
    archive: ArchiveUnits,
    record: GameRecord,
    events: Sequence[StoredEvent],
    player_ids: Sequence[str | None],
) -> bool:
    """Archive an ended game once, ranked or not, and rate it in the same unit of work when
    it is rated (see the module docstring). True when this call archived it, False when it
    was archived already (nothing changes). ValueError for a game still going or an
    incomplete log (nothing is written)."""
    kept = archival(record, events, player_ids)
    async with archive.unit() as uow:
        if not await uow.add_game(kept):
            return False  # archived (and rated) already: the unit ends without a change
        if kept.rated:
            current = await uow.ratings_of([s.player_id for s in kept.rated])
            outcomes = rate(current, kept.rated)
            await uow.save_ratings(
                GameRating(
                    game_id=kept.game.id,
                    finished_at=kept.game.finished_at,
                    outcomes=tuple(outcomes),
                )
            )
        await uow.commit()
    return True


async def rebuild_ratings(archive: ArchiveUnits) -> int:
    """Recompute every rating and the whole history from the archived games, in rating
    order, in one unit of work (no game is rated meanwhile); the number of games rated."""
    async with archive.unit() as uow:
        order = [
            (game, table) for game in await uow.ranked_games() if (table := rated_table(game.seats))
        ]
        current, outcomes = replay(table for _, table in order)
        rated = [
            GameRating(game_id=game.game_id, finished_at=game.finished_at, outcomes=tuple(done))
            for (game, _), done in zip(order, outcomes, strict=True)
        ]
        await uow.replace_ratings(rated, current)
        await uow.commit()
    return len(rated)


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
