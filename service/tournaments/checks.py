"""The rules of the tournaments' use cases, on the records alone: what a create may ask,
who may change a tournament, what each step makes of the record."""

from __future__ import annotations

import msgspec

from domain.tournaments.rules import (
    Entrant,
    StandingsBy,
    Table,
    TableResult,
    next_round,
    settled,
    table_result,
)
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.model import GameRecord, TableRef, TournamentRecord
from service.tournaments.records import (
    BOT_PREFIX,
    MAX_AHEAD,
    MAX_PLACES,
    MAX_ROUND_INTERVAL,
    MAX_ROUNDS,
    CreateTournament,
    void_result,
)


def is_id(tournament_id: str) -> bool:
    return len(tournament_id) == 20 and all(c in "0123456789abcdef" for c in tournament_id)


def check_create(command: CreateTournament) -> None:
    if not 2 <= command.table_size <= 5:
        raise ServiceError("invalid_tournament", "table_size must be between 2 and 5.")
    if not command.table_size <= command.places <= MAX_PLACES:
        raise ServiceError(
            "invalid_tournament", "places must be between table_size and {most}.", most=MAX_PLACES
        )
    if not 1 <= command.rounds <= MAX_ROUNDS:
        raise ServiceError(
            "invalid_tournament", "rounds must be between 1 and {most}.", most=MAX_ROUNDS
        )
    if not 0 <= command.round_interval <= MAX_ROUND_INTERVAL:
        raise ServiceError(
            "invalid_tournament", "round_interval must be between 0 and {most} seconds.",
            most=int(MAX_ROUND_INTERVAL),
        )  # fmt: skip
    invited = command.invited
    if invited is not None and len(set(invited)) != len(invited):
        raise ServiceError("duplicate_player_id")


def check_times(command: CreateTournament, now: float) -> None:
    if command.starts_at is not None and not now < command.starts_at <= now + MAX_AHEAD:
        raise ServiceError(
            "invalid_tournament", "starts_at must be in the future, at most {days} days ahead.",
            days=int(MAX_AHEAD // 86400),
        )  # fmt: skip


def replayed(stored: TournamentRecord, fingerprint: str) -> TournamentRecord:
    """The tournament a keyed create made before, if this create asks what it asked."""
    if stored.fingerprint != fingerprint:
        raise ServiceError("idempotency_key_reused")
    return stored


def check_organiser(caller: Caller, record: TournamentRecord) -> None:
    if caller.kind == "anonymous":
        raise ServiceError("authentication_required")
    if caller.scope != record.organiser:
        raise ServiceError("not_organiser")


def registering(record: TournamentRecord) -> None:
    if record.status != "registering":
        raise ServiceError("tournament_not_registering")


def started(record: TournamentRecord, now: float) -> TournamentRecord:
    """The start: registration closes, bots fill the places left, round 1 is paired."""
    entrants = [Entrant(id=p) for p in record.registered]
    bots = record.places - len(entrants)
    entrants += [Entrant(id=f"{BOT_PREFIX}{i + 1}", bot=record.bot_level) for i in range(bots)]
    first = next_round(record.settings, entrants, (), ())
    return advanced(
        record, now, status="running", entrants=tuple(entrants), rounds=(first,),
        pending=(*record.pending, "started", "round:1"),
    )  # fmt: skip


def advanced(record: TournamentRecord, now: float, **changes: object) -> TournamentRecord:
    return msgspec.structs.replace(record, version=record.version + 1, updated_at=now, **changes)


def round_complete(record: TournamentRecord) -> bool:
    """Every table of the current round has its result, as the standings will always count
    it (`domain.tournaments.rules.settled`: luck-adjusted standings wait for the reviews)."""
    if not record.rounds:
        return False
    current = record.rounds[-1]
    by = record.settings.standings_by
    found = [record.result_of(current.number, t.number) for t in current.tables]
    return all(result is not None and settled(result, by) for result in found)


def waits_for_reviews(record: TournamentRecord) -> bool:
    """Luck-adjusted standings: a table has its result but not yet its luck-adjusted one."""
    by = record.settings.standings_by
    return any(not settled(result, by) for result in record.results)


def table_of(record: TournamentRecord, ref: TableRef) -> Table | None:
    for played in record.rounds:
        if played.number == ref.round:
            return next((t for t in played.tables if t.number == ref.table), None)
    return None


def result_of(
    game: GameRecord, round_number: int, table: Table, by: StandingsBy = "results"
) -> TableResult:
    """The table's result from its ended game; a game ended without results is a void result
    (`void_result`), which no review adjusts (`TableResult.unadjusted` in luck-adjusted
    standings)."""
    state = game.state
    if state is None or game.stopped or state.results is None:
        void = void_result(round_number, table)
        return msgspec.structs.replace(void, unadjusted=by == "luck_adjusted")
    return table_result(round_number, table, state.results)
