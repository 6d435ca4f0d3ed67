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

The places a game rates its players by (`TEN_RATINGS_BY`, `RatingsBy`): "results", the ranks of
its results, the game rated when it is archived (`archive_game`); or "luck_adjusted", the
`adjusted_rank` of each seat of its review (`domain.bots.review.luck_adjusted`), the game rated
when both the game and its review are kept (`rate_reviewed`, called by whichever of the two
lands last, `service.history.reviews.rate_if_reviewed`; the review is queued by the relay's
reaction to the game's end, `service.history.reviews.ReviewReaction`). Either way the same rule
(`rated_table`, `rate`): only the places differ.

The rating order is the order the games were rated: a game takes the next place when its
ratings are saved (`ArchiveUnit.save_ratings`), after its players' ratings were held; games
never rated (archived before ratings existed, or before a rebuild switched the places) go
first, by their end then id (`ArchiveUnit.ranked_games`).

The rebuild (`rebuild_ratings`, `python -m service.cli ratings rebuild [--by ...]`): every
rating again, by replaying the archive's rated games in rating order with the places asked
for (`service.history.ratings.replay`): the same numbers as the ratings updated game by game
with those places, to the last bit. By "luck_adjusted" a game without a review is not rated
(the command computes the missing reviews first: `service.history.reviews.adjusted_ranks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import msgspec

from domain.game.model import AnyEvent, Busted, CardDrawn, GameFinished, GameStarted, Result
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.core.ranking import archived_ranking
from service.core.settings import RatingsBy
from service.history.archive import (
    ID_LENGTH,
    PLAYER_ID_LENGTH,
    Archival,
    ArchivedEvent,
    ArchivedGame,
    ArchivedResult,
    ArchivedSeat,
    ArchivedTable,
    ArchiveUnit,
    ArchiveUnits,
    ColorScore,
    GameArchive,
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


def placed(seats: Sequence[SeatFacts], ranks: Sequence[int]) -> tuple[SeatFacts, ...]:
    """The seats of a game (seat order) placed by `ranks` (seat order: its review's
    luck-adjusted ranks) instead of their results' ranks; a seat without a result stays so."""
    if len(ranks) != len(seats):
        raise ValueError(f"{len(ranks)} ranks for {len(seats)} seats")
    return tuple(
        s if s.rank is None else msgspec.structs.replace(s, rank=rank)
        for s, rank in zip(seats, ranks, strict=True)
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
    *,
    by: RatingsBy = "results",
) -> bool:
    """Archive an ended game once, ranked or not, and by "results" rate it in the same unit
    of work when it is rated (see the module docstring; by "luck_adjusted" its review rates
    it: `rate_reviewed`). True when this call archived it, False when it was archived
    already (nothing changes). ValueError for a game still going or an incomplete log
    (nothing is written)."""
    kept = archival(record, events, player_ids)
    async with archive.unit() as uow:
        if not await uow.add_game(kept):
            return False  # archived (and rated) already: the unit ends without a change
        if kept.rated and by == "results":
            await _rate(uow, kept.game.id, kept.game.finished_at, kept.rated)
        await uow.commit()
    return True


async def _rate(
    uow: ArchiveUnit, game_id: str, finished_at: datetime, table: Sequence[RatedSeat]
) -> None:
    """Rate one game in `uow`: its players' ratings held, updated, saved (the next place in
    the rating order)."""
    current = await uow.ratings_of([s.player_id for s in table])
    outcomes = rate(current, table)
    await uow.save_ratings(
        GameRating(game_id=game_id, finished_at=finished_at, outcomes=tuple(outcomes))
    )


async def rate_reviewed(archive: GameArchive, game_id: str, ranks: Sequence[int]) -> bool:
    """Rate the archived game `game_id` by its review's luck-adjusted `ranks` (seat order),
    unless it is rated already (by a replica racing, a rebuild, or by its results before the
    places were switched); True when this call rated it. A game not archived yet is rated
    at its archival (`service.history.reviews.rate_if_reviewed`); False here."""
    game = await archive.get_game(game_id)
    if game is None:
        return False
    table = rated_table(placed(seat_facts(game), ranks))
    if not table:
        return False
    async with archive.unit() as uow:
        # held first: of two units rating this game, the second sees the first's row
        await uow.ratings_of([s.player_id for s in table])
        if await uow.is_rated(game_id):
            return False
        await _rate(uow, game_id, game.finished_at, table)
        await uow.commit()
    return True


async def rebuild_ratings(
    archive: ArchiveUnits, adjusted: Mapping[str, Sequence[int]] | None = None
) -> int:
    """Recompute every rating and the whole history from the archived games, in rating
    order, in one unit of work (no game is rated meanwhile); the number of games rated.
    By their results' ranks; with `adjusted` (game id -> its review's luck-adjusted ranks,
    seat order) by those, a game without them not rated."""
    async with archive.unit() as uow:
        order = [
            (game, table)
            for game in await uow.ranked_games()
            if (table := rated_table(_places(game.game_id, game.seats, adjusted)))
        ]
        current, outcomes = replay(table for _, table in order)
        rated = [
            GameRating(game_id=game.game_id, finished_at=game.finished_at, outcomes=tuple(done))
            for (game, _), done in zip(order, outcomes, strict=True)
        ]
        await uow.replace_ratings(rated, current)
        await uow.commit()
    return len(rated)


def _places(
    game_id: str, seats: Sequence[SeatFacts], adjusted: Mapping[str, Sequence[int]] | None
) -> Sequence[SeatFacts]:
    """A ranked game's seats as the rebuild rates them: by results (`adjusted` None), else
    by the game's luck-adjusted ranks (none kept: no seat placed, the game not rated)."""
    if adjusted is None:
        return seats
    ranks = adjusted.get(game_id)
    return () if ranks is None else placed(seats, ranks)


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
