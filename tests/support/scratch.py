"""Throwaway archive databases, for tests and benchmarks.

`scratch_database(server_url)` creates a database of its own next to the one `server_url`
names (PostgreSQL: `CREATE DATABASE ten_scratch_<random>` through an autocommit
connection; SQLite: a new file in a temporary directory), yields its URL and drops it
afterwards. Nothing is migrated: call `infra.archive.migrate.upgrade(url)`.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy import pool, text
from sqlalchemy.engine import make_url

from infra.archive.database import database_url, make_engine


@asynccontextmanager
async def scratch_database(server_url: str, prefix: str = "ten_scratch") -> AsyncIterator[str]:
    url = make_url(database_url(server_url))
    name = f"{prefix}_{secrets.token_hex(6)}"
    if url.get_backend_name() == "sqlite":
        with tempfile.TemporaryDirectory(prefix=f"{prefix}-") as tmp:
            yield url.set(database=str(Path(tmp) / f"{name}.sqlite3")).render_as_string(False)
        return
    admin = make_engine(
        url.render_as_string(False), poolclass=pool.NullPool, isolation_level="AUTOCOMMIT"
    )
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield url.set(database=name).render_as_string(False)
        finally:
            async with admin.connect() as conn:
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()
