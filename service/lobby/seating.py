"""The lobby's rules on a table alone: who is refused and why (a caller without
credentials where identities are verified), which seat a join takes, an open table's
seats, a join answered again."""

from __future__ import annotations

from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.model import GameRecord, Table
from service.core.ports import (
    IdempotentResponse,
)
from service.games.use_cases import (
    token_matches,
)
from service.lobby.records import Joined


def require_credentials(caller: Caller, identities_open: bool) -> None:
    """Anyone may act while identities are open (unverified); else an anonymous caller
    holding no credential is refused."""
    if caller.kind == "anonymous" and not identities_open:
        raise ServiceError("authentication_required")


def refusal(caller: Caller, record: GameRecord, code: str) -> ServiceError:
    """403 `code` for a credential of this game that does not allow this; 401 `unauthorized`
    for a token that is none of this game's (forged, replaced by a reissue, or another
    game's): a bad credential, not a good one refused."""
    token = caller.seat_token
    if caller.kind == "anonymous" and token is not None:
        hashes = (record.host_token_hash, *record.token_hashes)
        if not any(token_matches(expected, token) for expected in hashes):
            return ServiceError("unauthorized")
    return ServiceError(code)


def joined_again(first: IdempotentResponse) -> Joined:
    """A join's first outcome, handed back to its copy."""
    assert first.seat is not None
    seat, token = first.tokens[0]
    return Joined(record=first.record, seat=seat, token=token, events=[], replayed=True)


def open_table(record: GameRecord) -> Table:
    if record.status != "open":
        raise ServiceError("game_not_open", "The game is {status}.", status=record.status)
    assert record.table is not None
    return record.table


def seat_for(table: Table, pid: str | None, wanted: int | None) -> int:
    """The seat a join takes: the player's reservation, else the one asked for, else the
    first open one."""
    if pid is not None:
        if any(s.taken and s.player_id == pid for s in table.seats):
            raise ServiceError("already_seated")
        reserved = [i for i, s in enumerate(table.seats) if not s.taken and s.player_id == pid]
        if reserved:
            if wanted is not None and wanted != reserved[0]:
                raise ServiceError(
                    "seat_unavailable", "Seat {seat} is reserved for you.", seat=reserved[0]
                )
            return reserved[0]
    free = [i for i, s in enumerate(table.seats) if s.open and not s.taken]
    if wanted is not None:
        if not 0 <= wanted < len(table.seats):
            raise ServiceError("seat_not_found")
        if wanted not in free:
            raise ServiceError("seat_unavailable")
        return wanted
    if not free:
        raise ServiceError("table_full")
    return free[0]
