"""A GameStore decorator: times every call (`ten_store_seconds{op}`), counts version
conflicts and unreachable-store failures and, with tracing on, makes a span per call. The
adapters in `infra/` stay unaware of metrics and tracing. (What a save changed, the games
created and finished, is counted by the relay's `observability.metrics.GameMetrics`.)

The pass-through is written out per method, grouped by port (`service.core.ports`): a
generated one (`getattr(self.inner, name)` and `*args`) adds a good part of what a timed
call costs here to every store call of every request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import Any

from infra.observability.metrics import Metrics
from service.core.model import GameRecord
from service.core.ports import (
    DueGame,
    GameStore,
    IdempotentResponse,
    LogNews,
    Save,
    StoredEvent,
    StoreUnavailable,
    VersionConflict,
)

# operations as label tuples, made once
_CREATE, _LOAD, _SAVE, _EVENTS = ("create",), ("load",), ("save",), ("events",)
_EVENTS_OF, _IDEMPOTENT_RESPONSE, _PING = ("events_of",), ("idempotent_response",), ("ping",)
_LIST_GAMES, _HOLD, _HELD, _DROP = ("list_games",), ("hold",), ("held",), ("drop",)
_DUE_GAMES, _CLAIM_DUE, _SETTLE_DUE = ("due_games",), ("claim_due",), ("settle_due",)
_RELAY_READ, _RELAYED = ("relay_read",), ("relayed",)


class InstrumentedStore(GameStore):
    def __init__(
        self,
        inner: GameStore,
        metrics: Metrics | None,
        *,
        tracer: Any = None,
        system: str = "redis",
    ) -> None:
        self.inner = inner
        self._metrics = metrics
        self._tracer = tracer
        self._system = system

    async def _call(self, op: tuple[str], game_id: str | None, call, *args):
        if self._tracer is not None:
            attributes = {"db.system": self._system, "db.operation": op[0]}
            if game_id is not None:
                attributes["ten.game_id"] = game_id
            with self._tracer.start_as_current_span(f"store.{op[0]}", attributes=attributes):
                return await self._measured(op, call, *args)
        return await self._measured(op, call, *args)

    async def _measured(self, op: tuple[str], call, *args):
        metrics = self._metrics
        if metrics is None:
            return await call(*args)
        start = perf_counter()
        try:
            return await call(*args)
        except VersionConflict:
            metrics.store_conflicts.inc()
            raise
        except StoreUnavailable:
            metrics.store_unavailable.inc()
            raise
        finally:
            metrics.store_seconds.observe(op, perf_counter() - start)

    # -- Games
    async def create(
        self,
        record: GameRecord,
        events: Sequence[StoredEvent],
        ttl: int,
        idempotency: tuple[str, IdempotentResponse] | None = None,
    ) -> None:
        await self._call(_CREATE, record.id, self.inner.create, record, events, ttl, idempotency)

    async def load(self, game_id: str) -> GameRecord | None:
        return await self._call(_LOAD, game_id, self.inner.load, game_id)

    async def write(self, save: Save) -> None:
        await self._call(_SAVE, save.record.id, self.inner.write, save)

    async def idempotent_response(self, game_id: str, key: str) -> IdempotentResponse | None:
        return await self._call(
            _IDEMPOTENT_RESPONSE, game_id, self.inner.idempotent_response, game_id, key
        )

    # -- EventLog
    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        return await self._call(_EVENTS, game_id, self.inner.events, game_id, after, limit)

    async def events_of(self, after: Mapping[str, int], limit: int) -> dict[str, list[StoredEvent]]:
        return await self._call(_EVENTS_OF, None, self.inner.events_of, after, limit)

    def log_news(self) -> LogNews:
        return self.inner.log_news()  # wake-ups, not calls: the reads after them are timed

    # -- Listings
    async def list_games(
        self, index: str, before: tuple[float, str] | None, limit: int
    ) -> list[GameRecord]:
        return await self._call(_LIST_GAMES, None, self.inner.list_games, index, before, limit)

    # -- QuotaStore
    async def hold(self, key: str, item: str, score: float, limit: int, ttl: int) -> float | None:
        return await self._call(_HOLD, None, self.inner.hold, key, item, score, limit, ttl)

    async def held(self, key: str) -> list[tuple[str, float]]:
        return await self._call(_HELD, None, self.inner.held, key)

    async def drop(self, key: str, entries: Sequence[tuple[str, float]]) -> None:
        await self._call(_DROP, None, self.inner.drop, key, entries)

    async def live_games(self) -> int:
        return await self.inner.live_games()

    # -- RelayLog
    async def relay_read(self, game_id: str) -> tuple[GameRecord | None, list[StoredEvent]]:
        return await self._call(_RELAY_READ, game_id, self.inner.relay_read, game_id)

    async def relayed(self, game_id: str, seq: int) -> None:
        await self._call(_RELAYED, game_id, self.inner.relayed, game_id, seq)

    # -- DueIndex
    async def due_games(self, now: float, limit: int) -> list[DueGame]:
        # timed, never traced: every replica polls it a few times a second
        return await self._measured(_DUE_GAMES, self.inner.due_games, now, limit)

    async def claim_due(self, game_id: str, now: float, lease: float) -> bool:
        return await self._call(_CLAIM_DUE, game_id, self.inner.claim_due, game_id, now, lease)

    async def settle_due(self, game_id: str, due: float | None, stamp: int | None) -> None:
        await self._call(_SETTLE_DUE, game_id, self.inner.settle_due, game_id, due, stamp)

    # -- Lifecycle
    async def ping(self) -> None:
        await self._call(_PING, None, self.inner.ping)

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()
