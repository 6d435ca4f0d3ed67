"""The archive's database engine: PostgreSQL (asyncpg) in production, a SQLite file
(aiosqlite) as the embedded default.

`TEN_DATABASE_URL` names the database; unset, the archive is `./ten-archive.sqlite3`.
Plain driver-less URLs are accepted and given the async driver (`postgresql://...` ->
`postgresql+asyncpg://...`, `sqlite:///x` -> `sqlite+aiosqlite:///x`).

SQLite connections get foreign keys, WAL (readers never block the writer), a busy
timeout, and SQLAlchemy-controlled transactions (the sqlite3 module's legacy mode does not
BEGIN before SELECT or DDL): `BEGIN` for reads, `BEGIN IMMEDIATE` for connections marked
`execution_options(sqlite_immediate=True)`, so a writer takes the write lock up front
and waits its turn (busy timeout) instead of failing on a stale snapshot.

`sqlite_twin(engine)`: a synchronous engine (the sqlite3 module) on the same SQLite file,
configured the same, for the archive's unit of work to run each of its steps in one thread
hop (`repository.SqlArchive.unit`): through aiosqlite every statement costs three or four
hops to its thread and back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import msgspec
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

DEFAULT_PATH = "./ten-archive.sqlite3"
DEFAULT_URL = f"sqlite+aiosqlite:///{DEFAULT_PATH}"
ENV_VAR = "TEN_DATABASE_URL"
SQLITE_BUSY_TIMEOUT = 30.0  # seconds a SQLite writer waits for the write lock

_DRIVERS = {"postgresql": "postgresql+asyncpg", "postgres": "postgresql+asyncpg"}
_json_encoder = msgspec.json.Encoder()


def database_url(url: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The archive URL: `url` if given, else `TEN_DATABASE_URL`, else the SQLite default;
    with the async driver filled in."""
    env = os.environ if environ is None else environ
    chosen = url or (env.get(ENV_VAR) or "").strip() or DEFAULT_URL
    return normalize_url(chosen)


def normalize_url(url: str | URL) -> str:
    parsed = make_url(url)
    backend, _, driver = parsed.drivername.partition("+")
    if backend in _DRIVERS and driver in ("", "asyncpg"):
        parsed = parsed.set(drivername=_DRIVERS[backend])
    elif backend == "sqlite" and driver in ("", "pysqlite", "aiosqlite"):
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    else:
        raise ValueError(
            f"unsupported archive database {parsed.drivername!r}: use postgresql or sqlite"
        )
    return parsed.render_as_string(hide_password=False)


def _json_serializer(value: Any) -> str:
    return _json_encoder.encode(value).decode()


def make_engine(
    url: str | None = None, *, sqlite_foreign_keys: bool = True, **kwargs: Any
) -> AsyncEngine:
    """An AsyncEngine for the archive (`url` as for `database_url`). Extra keyword arguments
    go to `create_async_engine` (e.g. `poolclass`, `pool_size`, `echo`).

    `sqlite_foreign_keys=False` is for migrations: Alembic's batch mode rebuilds a SQLite
    table by dropping it, which with foreign keys on would cascade to the rows that refer
    to it."""
    full = make_url(database_url(url))
    _json_options(kwargs)
    if full.get_backend_name() == "sqlite":
        _sqlite_options(kwargs)
        engine = create_async_engine(full, **kwargs)
        _configure_sqlite(
            engine.sync_engine, in_memory=_in_memory(full), foreign_keys=sqlite_foreign_keys
        )
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_async_engine(full, **kwargs)


def sqlite_twin(engine: AsyncEngine) -> Engine | None:
    """A synchronous engine on the SQLite file of `engine`, configured as `make_engine`
    configures it (foreign keys on); None for another database or an in-memory one (a
    second engine would open a database of its own)."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or _in_memory(url):
        return None
    kwargs: dict[str, Any] = {}
    _json_options(kwargs)
    _sqlite_options(kwargs)
    twin = create_engine(url.set(drivername="sqlite+pysqlite"), **kwargs)
    _configure_sqlite(twin, in_memory=False, foreign_keys=True)
    return twin


def _json_options(kwargs: dict[str, Any]) -> None:
    kwargs.setdefault("json_serializer", _json_serializer)
    kwargs.setdefault("json_deserializer", msgspec.json.decode)


def _sqlite_options(kwargs: dict[str, Any]) -> None:
    connect_args = kwargs.setdefault("connect_args", {})
    connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT)


def _in_memory(url: URL) -> bool:
    return url.database in (None, "", ":memory:")


def _configure_sqlite(sync_engine: Engine, *, in_memory: bool, foreign_keys: bool) -> None:
    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT * 1000)}")
            if not in_memory:
                cursor.execute("PRAGMA journal_mode = WAL")
        finally:
            cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get("sqlite_immediate", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
