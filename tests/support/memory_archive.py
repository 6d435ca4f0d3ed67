"""An in-memory archive for the core's archiving tests (tests/unit/service/history/test_archiving.py): the
unit of work of `service.history.archive.ArchiveUnit` on plain dicts, and the few reads those tests
look at (`get_game`, `list_games`, `events`, `ratings`, `rating_history`).

A unit works on a copy of the archive's state and puts it back on `commit()`; a unit that
ends without committing (an exception, an early return) leaves nothing behind. Units run
one at a time (an asyncio lock held for a unit's whole life), as SQLite's writers do; so a
second unit sees what the first committed. `broken` names a unit method that raises
`Broken` (a database failing mid-transaction), `units` and `commits` count.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime

from service.core.ports import StoredEvent
from service.history.archive import (
    Archival,
    ArchivedGame,
    GameRating,
    GameSummary,
    RankedGame,
    RatingChange,
    SeatSummary,
)
from service.history.archiving import seat_facts
from service.history.ratings import Rating


class Broken(RuntimeError):
    """The failure a `MemoryArchive(broken=...)` raises."""


@dataclass
class _State:
    games: dict[str, Archival] = field(default_factory=dict)  # in the order archived
    rated: list[GameRating] = field(default_factory=list)  # the rating order
    ratings: dict[str, Rating] = field(default_factory=dict)

    def copy(self) -> _State:
        """A copy to change (the records in it are frozen)."""
        return _State(dict(self.games), list(self.rated), dict(self.ratings))


class MemoryUnit:
    def __init__(self, archive: MemoryArchive) -> None:
        self._archive = archive
        self._state = archive.state.copy()

    def _step(self, name: str) -> None:
        if self._archive.broken == name:
            raise Broken(f"{name} failed")

    async def add_game(self, archival: Archival) -> bool:
        self._step("add_game")
        if archival.game.id in self._state.games:
            return False
        self._state.games[archival.game.id] = archival
        return True

    async def ratings_of(self, player_ids: Sequence[str]) -> dict[str, Rating]:
        self._step("ratings_of")
        return {p: self._state.ratings[p] for p in player_ids if p in self._state.ratings}

    async def save_ratings(self, rated: GameRating) -> None:
        self._step("save_ratings")
        if any(g.game_id == rated.game_id for g in self._state.rated):
            raise ValueError(f"game {rated.game_id} is rated already")  # rated_games' UNIQUE
        self._state.rated.append(rated)
        self._state.ratings.update((o.player_id, o.after) for o in rated.outcomes)

    async def is_rated(self, game_id: str) -> bool:
        self._step("is_rated")
        return any(g.game_id == game_id for g in self._state.rated)

    async def ranked_games(self) -> list[RankedGame]:
        self._step("ranked_games")
        place = {g.game_id: n for n, g in enumerate(self._state.rated)}
        ranked = [kept.game for kept in self._state.games.values() if kept.game.ranked]
        ranked.sort(key=lambda g: (g.id in place, place.get(g.id, 0), g.finished_at, g.id.encode()))
        return [
            RankedGame(game_id=g.id, finished_at=g.finished_at, seats=seat_facts(g)) for g in ranked
        ]

    async def replace_ratings(
        self, rated: Sequence[GameRating], ratings: Mapping[str, Rating]
    ) -> None:
        self._step("replace_ratings")
        self._state.rated = list(rated)
        self._state.ratings = dict(ratings)

    async def commit(self) -> None:
        self._step("commit")
        self._archive.state = self._state
        self._archive.commits += 1
        self._state = self._state.copy()


class MemoryArchive:
    def __init__(self, broken: str | None = None) -> None:
        self.state = _State()
        self.broken = broken
        self.units = 0
        self.commits = 0
        self.reviews: dict[str, bytes] = {}
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def unit(self) -> AsyncIterator[MemoryUnit]:
        async with self._lock:
            self.units += 1
            yield MemoryUnit(self)

    async def list_games(
        self,
        *,
        status: str | None = None,
        ranked: bool | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> tuple[list[GameSummary], str | None]:
        """The games of `status` and `ranked` (None: any), in the order archived, `limit` a
        page (the cursor: the next page's offset)."""
        found = [
            kept.game
            for kept in self.state.games.values()
            if status in (None, kept.game.status) and ranked in (None, kept.game.ranked)
        ]
        start = int(cursor or 0)
        page = [_summary(g) for g in found[start : start + limit]]
        more = start + limit < len(found)
        return page, str(start + limit) if more else None

    async def get_game(self, game_id: str) -> ArchivedGame | None:
        kept = self.state.games.get(game_id)
        return None if kept is None else kept.game

    async def events(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        kept = self.state.games.get(game_id)
        found = [] if kept is None else [e for e in kept.events if e.seq > after]
        return [StoredEvent(e.seq, e.data.encode()) for e in found[:limit]]

    async def get_review(self, game_id: str) -> bytes | None:
        return self.reviews.get(game_id)

    async def save_review(self, game_id: str, review: bytes, at: datetime) -> bool:
        if game_id in self.reviews:
            return False
        self.reviews[game_id] = review
        return True

    async def ratings(self, player_ids: Sequence[str]) -> dict[str, Rating]:
        return {p: self.state.ratings[p] for p in player_ids if p in self.state.ratings}

    async def rating_history(self, player_id: str) -> list[RatingChange]:
        """Every rating change of the player, newest first."""
        return [
            RatingChange(
                seq=seq,
                game_id=g.game_id,
                finished_at=g.finished_at,
                rank=o.rank,
                rated_seats=len(g.outcomes),
                mu_before=o.before.mu,
                sigma_before=o.before.sigma,
                mu=o.after.mu,
                sigma=o.after.sigma,
                ordinal=o.after.ordinal,
                games=o.after.games,
            )
            for seq, g in reversed(list(enumerate(self.state.rated, start=1)))
            for o in g.outcomes
            if o.player_id == player_id
        ]


def _summary(game: ArchivedGame) -> GameSummary:
    results = {r.seat: r for r in game.results}
    return GameSummary(
        id=game.id,
        status=game.status,
        ranked=game.ranked,
        unranked_reason=game.unranked_reason,
        unranked_reasons=game.unranked_reasons,
        player_count=game.player_count,
        created_at=game.created_at,
        finished_at=game.finished_at,
        version=game.version,
        event_count=game.event_count,
        seats=tuple(
            SeatSummary(
                seat=s.seat,
                name=s.name,
                bot=s.bot,
                player_id=s.player_id,
                ranked=s.ranked,
                unranked_reason=s.unranked_reason,
                score=None if (r := results.get(s.seat)) is None else r.score,
                rank=None if r is None else r.rank,
                winner=None if r is None else r.winner,
            )
            for s in game.seats
        ),
    )
