"""The store's ports: `GameStore` is the composition of the narrow ports and adds nothing of
its own, no method belongs to two of them, and every store implements every method itself.
A store subclasses `GameStore`, so a method it lacks would silently be the port's stub (an
`async def` whose body is a docstring answers None). Two are the ports' own: `save`, once
over each store's `write`, and `open`, nothing to do for most stores (the decorator hands it
through all the same: the store it wraps may need it)."""

from __future__ import annotations

import inspect

import pytest

from infra.memory_store import MemoryGameStore
from infra.observability.instrumented_store import InstrumentedStore
from infra.redis_store import RedisGameStore
from service.core.ports import (
    DueIndex,
    EventLog,
    Games,
    GameStore,
    Lifecycle,
    Listings,
    RelayLog,
)

PORTS = (Games, EventLog, Listings, RelayLog, DueIndex, Lifecycle)
SHARED = {"save"}  # on `Games`, over `write`: no store has its own
DEFAULT = {"open"}  # `Lifecycle.open`, nothing to do: an adapter may keep it


def methods(port: type) -> set[str]:
    return {
        name
        for name, value in vars(port).items()
        if inspect.isfunction(value) and not name.startswith("__")
    }


def test_the_game_store_is_the_narrow_ports_and_nothing_more() -> None:
    assert set(GameStore.__bases__) >= set(PORTS)
    assert methods(GameStore) == set()
    seen: set[str] = set()
    for port in PORTS:
        assert methods(port), port
        assert not methods(port) & seen, port
        seen |= methods(port)


@pytest.mark.parametrize(
    ("store", "kept"),
    [
        (MemoryGameStore, SHARED | DEFAULT),
        (RedisGameStore, SHARED | DEFAULT),
        (InstrumentedStore, SHARED),
    ],
    ids=["memory", "redis", "instrumented"],
)
@pytest.mark.parametrize("port", PORTS, ids=lambda port: port.__name__)
def test_every_store_implements_every_method_of_every_port(
    store: type, kept: set[str], port: type
) -> None:
    assert GameStore in store.__mro__
    stubs = [
        name for name in sorted(methods(port) - kept) if getattr(store, name) is getattr(port, name)
    ]
    assert stubs == []
