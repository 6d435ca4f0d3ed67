"""Use cases over the SQL archive: ended games (finished, aborted or abandoned), their logs
and replays, player figures (of the seats that count in ranked games unless asked for
all). A game of a duplicate deal is archived, hence read and listed, only once its deal has
been played at every table (`service.history.archiver`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import datetime
from typing import Any, NamedTuple

import msgspec

from domain.game.fairness import Fairness
from domain.game.model import AnyEvent, GameStarted
from domain.game.replay import replay
from domain.game.views import PublicView
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.exports import End, ended
from service.core.ports import StoredEvent
from service.games.use_cases import GAME_ID
from service.history.archive import (
    ArchivedGame,
    ArchivedStatus,
    ExportFilter,
    GameArchive,
    GameSummary,
    LeaderboardOrder,
    LeaderboardRow,
    PlayerStats,
    RatingChange,
)
from service.history.ratings import PRIOR, Rating, predict
from service.history.records import GameRecordV1, RecordContext, encode_line, record_of

_RECORD = {"frozen": True, "kw_only": True}


class FinalView(NamedTuple):
    """An archived game's last public state, its fair deal (None: a given deck) and seed."""

    view: PublicView
    fairness: Fairness | None
    seed: str


class SeatForecast(msgspec.Struct, **_RECORD):
    player_id: str
    rating: Rating  # the prior (games 0) for a player never rated
    win: float  # the chance this seat wins the table (the seats' chances sum to 1)


class TableForecast(msgspec.Struct, **_RECORD):
    seats: list[SeatForecast]  # in the order the player ids were given
    draw: float  # the model's chance that the table ends in a draw


_events_decoder = msgspec.json.Decoder(AnyEvent)
EXPORT_PAGE = 100  # games a page of the bulk export reads (and holds) at once
END = "end"  # the `type` of the bulk export's trailer, its last line (no record has a `type`)


def export_trailer(count: int) -> dict[str, Any]:
    """The fields of the bulk export's trailer: how many records came before it."""
    return {"type": END, "count": count}


class History:
    """The archive's reads. The archive holds no secret game: a game of a deal still played
    at another table enters it only once the deal is done (`service.history.archiver`), so
    nothing here asks the live store whether a game is secret."""

    def __init__(self, archive: GameArchive) -> None:
        self.archive = archive

    async def list_games(
        self,
        caller: Caller,
        *,
        player_id: str | None,
        since: datetime | None,
        until: datetime | None,
        cursor: str | None,
        limit: int,
        status: ArchivedStatus | None = None,
        ranked: bool | None = None,
    ) -> tuple[list[GameSummary], str | None]:
        """A page of the archive, less the games still secret to the caller (a page may
        hold fewer than `limit`; `next_cursor` goes on after the page as read)."""
        items, cursor = await self.archive.list_games(
            player_id=player_id,
            since=since,
            until=until,
            status=status,
            ranked=ranked,
            cursor=cursor,
            limit=limit,
        )
        return items, cursor

    async def game(self, game_id: str, caller: Caller) -> ArchivedGame:
        found = await self.archive.get_game(game_id) if GAME_ID.fullmatch(game_id) else None
        if found is None:
            raise ServiceError("archived_game_not_found")
        return found

    async def events(
        self, game_id: str, after: int, limit: int | None, *, caller: Caller
    ) -> list[StoredEvent]:
        await self.game(game_id, caller)
        return await self.archive.events(game_id, after, limit)

    async def replay(
        self, game_id: str, from_version: int, limit: int, caller: Caller
    ) -> list[PublicView]:
        """The public state after each action, versions from_version .. from_version+limit-1,
        rebuilt from the archived event log alone."""
        stored = await self.events(game_id, 0, None, caller=caller)
        states = []
        for view in replay(_events_decoder.decode(e.data) for e in stored):
            if view.version >= from_version + limit:
                break
            if view.version >= from_version:
                states.append(view)
        return states

    async def final_view(self, game_id: str, caller: Caller) -> FinalView | None:
        """The last public state of an archived game (None when not archived), with its
        fair deal and its seed: an archived game has ended (a duplicate deal's is archived
        once played everywhere), so its seed is revealed."""
        if not GAME_ID.fullmatch(game_id):
            return None
        game = await self.archive.get_game(game_id)
        if game is None:
            return None
        events = [
            _events_decoder.decode(e.data) for e in await self.archive.events(game_id, 0, None)
        ]
        last = None
        for last in replay(events):  # noqa: B007
            pass
        started = events[0] if events else None
        fairness = started.fairness if isinstance(started, GameStarted) else None
        return None if last is None else FinalView(last, fairness, game.seed)

    async def record(self, game_id: str, caller: Caller) -> GameRecordV1:
        """The game's record (`service.history.records`): read as the archived game is."""
        game = await self.game(game_id, caller)
        return record_of(game, await self.archive.events(game_id, 0, None))

    @staticmethod
    def may_export(caller: Caller, player_id: str | None) -> None:
        """The bulk export is the platform's (its API key), or a player's of their own
        games (their JWT, `player_id` theirs); raises ServiceError otherwise."""
        if caller.platform or (caller.kind == "player" and caller.player_id == player_id):
            return
        raise ServiceError(
            "authentication_required" if caller.kind == "anonymous" else "platform_only"
        )

    def bulk_export(self, **filters: Any) -> AsyncIterator[bytes | End]:
        """The bulk export as it is streamed: `export`'s records (`filters` are its), then
        its trailer `{"type": "end", "count": <records>, "complete": ...}`
        (`service.core.exports`): complete once every page was sent, else with the failure
        that cut it."""
        return ended(self.export(**filters), export_trailer)

    async def export(
        self,
        *,
        player_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        contexts: Mapping[str, RecordContext] | None = None,
        page: int = EXPORT_PAGE,
    ) -> AsyncIterator[bytes]:
        """The archive's records as NDJSON, oldest first, a page of `page` games at a time
        (keyset pages: memory bounded whatever the archive's size). `contexts`: only these
        games (a tournament's), each with what the archive does not keep of it. A game of a
        deal still played elsewhere is not in the archive yet (`service.history.archiver`),
        so it is left out."""
        after: tuple[datetime, str] | None = None
        game_ids = None if contexts is None else tuple(sorted(contexts))
        which = ExportFilter(player_id=player_id, since=since, until=until, game_ids=game_ids)
        known = contexts or {}
        none = RecordContext()
        while True:
            found = await self.archive.export_page(which, after, page)
            if not found:
                return
            yield b"".join(
                encode_line(record_of(game, logged, known.get(game.id, none)))
                for game, logged in found
            )
            last = found[-1][0]
            after = (last.finished_at, last.id)

    async def player_stats(self, player_id: str, *, ranked_only: bool = True) -> PlayerStats:
        return await self.archive.player_stats(player_id, ranked_only=ranked_only)

    async def rating_history(
        self, player_id: str, before: int | None, limit: int
    ) -> tuple[list[RatingChange], int | None]:
        """A page of a player's rating changes, newest first, and the `before` of the next
        page (None: the last)."""
        found = await self.archive.rating_history(player_id, before=before, limit=limit + 1)
        page = found[:limit]
        return page, page[-1].seq if len(found) > limit else None

    async def predict(self, player_ids: list[str]) -> TableForecast:
        """Each seat's chance to win a proposed table of 2 to 5 distinct players, from
        their current ratings (the prior for a player never rated)."""
        known = await self.archive.ratings(player_ids)
        table = [known.get(pid, PRIOR) for pid in player_ids]
        chances = predict(table)
        return TableForecast(
            seats=[
                SeatForecast(player_id=pid, rating=r, win=w)
                for pid, r, w in zip(player_ids, table, chances.win, strict=True)
            ],
            draw=chances.draw,
        )

    async def leaderboard(
        self,
        by: LeaderboardOrder,
        min_games: int,
        offset: int,
        limit: int,
        *,
        ranked_only: bool = True,
    ) -> list[LeaderboardRow]:
        return await self.archive.leaderboard(
            by, ranked_only=ranked_only, min_games=min_games, offset=offset, limit=limit
        )
