"""What the archive's database fails with, in the service's terms: a database that cannot
answer is StoreUnavailable (503, the job tried again), a value it refuses is
PermanentFailure (the job quarantined)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import exc as sa_exc

from service.core.ports import StoreUnavailable
from service.jobs.worker import PermanentFailure

# SQLSTATEs of a server that cannot answer now: a connection exception (class 08), and
# PostgreSQL shutting down or starting up (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
# cannot_connect_now: "the database system is starting up"), which SQLAlchemy's asyncpg
# dialect raises as a bare DBAPIError, not an OperationalError
_UNAVAILABLE_STATES = ("08", "57P01", "57P02", "57P03")


def _sqlstate(exc: sa_exc.DBAPIError) -> str:
    return getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None) or ""


@contextmanager
def translate_errors() -> Iterator[None]:
    """Connection-level failures become StoreUnavailable (the API answers 503).

    Besides the error classes and SQLSTATEs of a server that cannot answer, any error on a
    connection SQLAlchemy found broken and invalidated (`connection_invalidated`): a
    session PostgreSQL ends in the middle of a query can leave asyncpg's protocol mid-way,
    and the next step on it fails as asyncpg's InternalClientError ("cannot switch to
    state 12; another operation (2) is in progress"), an InternalError with no SQLSTATE
    (sqlalchemy/sqlalchemy#13241, MagicStack/asyncpg#1069)."""
    try:
        yield
    except (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError, OSError) as exc:
        raise StoreUnavailable(f"the archive database is unavailable: {exc}") from exc
    except sa_exc.DBAPIError as exc:
        if exc.connection_invalidated or _sqlstate(exc).startswith(_UNAVAILABLE_STATES):
            raise StoreUnavailable(f"the archive database is unavailable: {exc}") from exc
        raise


@contextmanager
def refused_data() -> Iterator[None]:
    """A value the database refuses (a data exception, SQLSTATE class 22: PostgreSQL refuses
    a NUL character in a text, a number out of range) will be refused again: the job is
    poisoned (`service.jobs.worker`)."""
    try:
        yield
    except sa_exc.DBAPIError as exc:
        if isinstance(exc, sa_exc.DataError) or _sqlstate(exc).startswith("22"):
            raise PermanentFailure(f"the archive database refused the game: {exc.orig}") from exc
        raise
