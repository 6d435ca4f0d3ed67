"""The probes: liveness, and readiness (the game store answers)."""

from __future__ import annotations

from litestar import Request, get

from service.entrypoints.api.routes import games_of
from service.entrypoints.api.schemas import Health


@get("/health", operation_id="health", summary="Liveness", tags=["operations"])
async def health() -> Health:
    return Health(status="ok")


@get(
    "/ready", operation_id="ready", summary="Readiness: the game store answers", tags=["operations"]
)
async def ready(request: Request) -> Health:
    service = games_of(request)
    await service.store.ping()
    return Health(status="ready")
