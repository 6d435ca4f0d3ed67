"""Alembic environment of the archive: async engine, the models' metadata.

The URL: `-x url=...`, else the one given from code (`config.attributes["url"]`, set by
`infra.archive.migrate`), else `TEN_DATABASE_URL`, else the embedded SQLite default.
Code may also hand over an open connection (`config.attributes["connection"]`, a sync
Connection, e.g. from `AsyncConnection.run_sync`).

Concurrent upgrades (several replicas starting at once) are serialized: PostgreSQL takes a
transaction-scoped advisory lock, SQLite a write lock (BEGIN IMMEDIATE) before Alembic
reads the current revision. Both run the whole upgrade in one transaction (DDL included).
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection

from infra.archive.database import database_url, make_engine
from infra.archive.models import metadata

MIGRATION_LOCK = 0x7E4A_2C41  # pg_advisory_xact_lock key of the archive's migrations

config = context.config
target_metadata = metadata

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    explicit = context.get_x_argument(as_dictionary=True).get("url") or config.attributes.get("url")
    return database_url(explicit)


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        compare_server_default=True,
        **kwargs,
    )


def run_migrations_offline() -> None:
    """Emit the SQL (alembic upgrade --sql) instead of running it."""
    url = _url()
    _configure(
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    _configure(connection=connection, render_as_batch=sqlite, transactional_ddl=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()
        if sqlite:
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")


async def run_async_migrations() -> None:
    # SQLite: foreign keys off while migrating (batch mode drops and rebuilds tables); the
    # schema is checked with PRAGMA foreign_key_check before the transaction commits
    engine = make_engine(_url(), poolclass=pool.NullPool, sqlite_foreign_keys=False)
    try:
        async with engine.connect() as connection:
            if connection.dialect.name == "sqlite":
                await connection.execution_options(sqlite_immediate=True)
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
    else:
        asyncio.run(run_async_migrations())


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
