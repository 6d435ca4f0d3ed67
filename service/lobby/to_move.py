"""A player's listing with the games that wait on them first (`GET /v1/games?player_id=`).

The order is two runs, each newest first with the listing's own keyset: first the player's
live games whose decision is theirs (`to_act` is a seat of theirs), then every other game
of theirs (open tables, live games waiting on someone else). A cursor says which run it is
in (`m` for the first) and where in it. The first run is found by reading the player's
listing (`SCAN` games at most, newest first: a player with more sees those among their
newest first); the second is the listing itself, only the first run's games left out (a
game waiting on the player beyond the newest `SCAN` is listed there, so every game is on
some page). The order
follows the games as they are at each request: a game whose turn passed between two pages
changes run (it may be missed or shown twice across pages, as with any order that moves),
never a page's soundness."""

from __future__ import annotations

import base64
import math
from collections.abc import Awaitable, Callable

from domain.game.engine import to_act
from service.core.errors import ServiceError
from service.core.model import GameRecord
from service.lobby.records import Page, encode_cursor

SCAN = 1000  # the player's games read, newest first, to find those waiting on them
BATCH = 100
# (index, keyset cursor, limit) -> that listing's games, newest first
ListGames = Callable[[str, tuple[float, str] | None, int], Awaitable[list[GameRecord]]]
MOVE = "m"  # the cursor's mark of the first run


def waits_on(record: GameRecord, player_id: str) -> bool:
    state = record.state
    if state is None or record.ended:
        return False
    seat = to_act(state)
    ids = record.player_ids
    return seat is not None and seat < len(ids) and ids[seat] == player_id


def _cursor(record: GameRecord, first_run: bool) -> str:
    if not first_run:
        return encode_cursor(record.created_at, record.id)
    text = f"{record.created_at!r}|{record.id}|{MOVE}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(cursor: str | None) -> tuple[bool, tuple[float, str] | None]:
    """(in the first run, the keyset position) of a cursor; (True, None) for none."""
    if cursor is None:
        return True, None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, _, rest = text.partition("|")
        game_id, _, mark = rest.partition("|")
        value = float(created)
    except (ValueError, UnicodeDecodeError):
        raise ServiceError("invalid_cursor") from None
    if not game_id or not math.isfinite(value) or mark not in ("", MOVE):
        raise ServiceError("invalid_cursor")
    return mark == MOVE, (value, game_id)


async def _waiting(
    list_games: ListGames, index: str, player_id: str, scan: int, batch_size: int
) -> list[GameRecord]:
    """The player's games that wait on them, newest first, among their newest `scan`."""
    found: list[GameRecord] = []
    before, read = None, 0
    while read < scan:
        want = min(batch_size, scan - read)
        batch = await list_games(index, before, want)
        read += len(batch)
        found.extend(r for r in batch if waits_on(r, player_id))
        if len(batch) < want:
            break
        before = (batch[-1].created_at, batch[-1].id)
    return found


async def player_page(
    list_games: ListGames,
    index: str,
    player_id: str,
    cursor: str | None,
    limit: int,
    *,
    scan: int = SCAN,
    batch_size: int = BATCH,
) -> Page:
    first_run, at = _decode(cursor)
    waiting = await _waiting(list_games, index, player_id, scan, batch_size)
    games: list[GameRecord] = []
    if first_run:
        games = [r for r in waiting if at is None or (r.created_at, r.id) < at][: limit + 1]
        if len(games) > limit:
            return Page(games=games[:limit], next_cursor=_cursor(games[limit - 1], True))
        at = None  # the second run from its start
    shown = {r.id for r in waiting}
    while len(games) <= limit:
        batch = await list_games(index, at, batch_size)
        games.extend(r for r in batch if r.id not in shown)
        if len(batch) < batch_size:
            break
        at = (batch[-1].created_at, batch[-1].id)
    more = len(games) > limit
    games = games[:limit]
    last = games[-1] if more else None
    next_cursor = None if last is None else _cursor(last, last.id in shown)
    return Page(games=games, next_cursor=next_cursor)
