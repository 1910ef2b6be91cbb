"""Database faults the service rides out: a database it cannot reach, and a schema changed under it.

- **Unreachable** (``database_unavailable``): the server is down or restarting, the connection was
  lost, or the pool found no working connection within ``DATABASE_POOL_TIMEOUT_SECONDS``. Clients
  get HTTP 503 ``DATABASE_UNAVAILABLE`` (``memories.http``, ``memories.graphql.errors``); the pool
  (``check`` on every checkout) and the worker's connections (``CONN_HEALTH_CHECKS``) reconnect by
  themselves once the server answers again.
- **Schema changed** (``schema_changed``): a restore (``pg_restore --clean`` drops and creates every
  table and the ``vector`` type again), a migration or a re-embed changed a table or a type that a
  connection had already looked up. PostgreSQL then refuses that connection's prepared statements
  ("cached plan must not change result type") and parameters sent with a type's old id ("cache
  lookup failed for type"), until the connection is replaced. ``database_reconnect`` replaces every
  connection of this process, and ``retry_after_schema_change`` runs a piece of work once more after
  it; the GraphQL view does the same for a query (``memories.graphql.views``).
- **Conflicts** (``transient_conflict``): a deadlock or a serialization failure rolled a transaction
  back; ``retry_transient`` runs it again a few times (the lock order of
  ``memories.services.user_locks`` keeps deadlocks rare to begin with).
- **Too long** (``statement_timed_out``): a statement of a process serving requests ran past
  ``REQUEST_STATEMENT_TIMEOUT_SECONDS`` (``statement_timeout_for_requests``) and was cancelled.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import psycopg.errors
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, ProgrammingError, connection

__all__ = [
    "database_mistake",
    "database_reconnect",
    "database_unavailable",
    "first_line",
    "retry_after_schema_change",
    "retry_transient",
    "schema_changed",
    "statement_timed_out",
    "statement_timeout_for_requests",
    "transient_conflict",
]

logger = logging.getLogger(__name__)

# PostgreSQL's messages for a statement planned, or a parameter typed, against a schema since changed
# (sqlstates 0A000 and XX000, which other errors share: the message tells them apart).
_SCHEMA_CHANGED = ("cached plan must not change result type", "cache lookup failed for type")
# A deadlock, a serialization failure: PostgreSQL rolled the transaction back, and it may simply run again.
_TRANSIENT_STATES = {"40P01", "40001"}
# How many times ``retry_transient`` runs a transaction at most, and the longest pause before the last run.
TRANSIENT_ATTEMPTS = 4
_TRANSIENT_PAUSE_SECONDS = 0.4
# Server states that mean "no database here now": admin shutdown, crash shutdown, cannot connect now.
_SHUTDOWN_STATES = {"57P01", "57P02", "57P03"}
# A connection refused for what it names: no such database, a wrong password, no such role or no access.
_CONNECTION_REFUSED_STATES = {"3D000", "28P01", "28000"}

P = ParamSpec("P")
R = TypeVar("R")


def first_line(error: BaseException) -> str:
    """The first line of an error's message (PostgreSQL adds DETAIL and HINT lines, which may quote data)."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` means the database cannot be reached now (rather than a statement's own failure).

    True for Django's ``InterfaceError`` (a closed connection) and for an ``OperationalError`` raised
    by the client (refused, lost, a pool timeout: no SQLSTATE), by a connection exception (class 08)
    or by a server shutting down (57P01-57P03); not for a statement timeout or a deadlock.
    """
    if isinstance(error, InterfaceError):
        return True
    if not isinstance(error, OperationalError):
        return False
    state = getattr(error.__cause__, "sqlstate", None)
    return state is None or state.startswith("08") or state in _SHUTDOWN_STATES


def transient_conflict(error: BaseException | None) -> bool:
    """Whether ``error`` is a deadlock (40P01) or a serialization failure (40001): PostgreSQL rolled the
    transaction back because of concurrent ones, and running it again may succeed."""
    return isinstance(error, DatabaseError) and getattr(error.__cause__, "sqlstate", None) in _TRANSIENT_STATES


def retry_transient(function: Callable[P, R]) -> Callable[P, R]:
    """Decorate a function that runs one transaction (put it above ``transaction.atomic``) to run it
    again, up to ``TRANSIENT_ATTEMPTS`` times in all, after a ``transient_conflict``, each time after a
    short random pause. Inside a caller's transaction it runs once: that transaction is rolled back
    whole, and the caller's own retry (if any) must run it again.

    Raises:
        DatabaseError: the last attempt's error (``DATABASE_CONFLICT`` in the API), or any other at once.
    """

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(1, TRANSIENT_ATTEMPTS + 1):
            try:
                return function(*args, **kwargs)
            except DatabaseError as error:
                if not transient_conflict(error) or attempt == TRANSIENT_ATTEMPTS or connection.in_atomic_block:
                    raise
                logger.warning(
                    "%s: %s; running it again (%d of %d)",
                    function.__qualname__,
                    first_line(error),
                    attempt + 1,
                    TRANSIENT_ATTEMPTS,
                )
                time.sleep(random.uniform(0, _TRANSIENT_PAUSE_SECONDS * 2 ** (attempt - TRANSIENT_ATTEMPTS + 1)))
        raise AssertionError("unreachable")

    return run


def statement_timed_out(error: BaseException | None) -> bool:
    """Whether ``error`` is PostgreSQL cancelling a statement that ran past ``statement_timeout`` (57014)."""
    return isinstance(error, OperationalError) and getattr(error.__cause__, "sqlstate", None) == "57014"


def statement_timeout_for_requests() -> None:
    """Make every connection this process opens from now on cancel a statement after
    ``REQUEST_STATEMENT_TIMEOUT_SECONDS`` (PostgreSQL's ``statement_timeout``; 0 leaves it unset).

    For the processes that serve requests (the web process, the MCP server), called before their
    first connection: the worker and the commands (imports, re-embedding) run longer statements.
    """
    milliseconds = round(settings.REQUEST_STATEMENT_TIMEOUT_SECONDS * 1000)
    if milliseconds <= 0:
        return
    options = settings.DATABASES["default"].setdefault("OPTIONS", {})
    options["options"] = f"{options.get('options', '')} -c statement_timeout={milliseconds}".strip()


def schema_changed(error: BaseException) -> bool:
    """Whether ``error`` is PostgreSQL refusing a connection's stale view of a schema changed since
    (a restore, a migration, a re-embed to another dimension): ``database_reconnect`` cures it."""
    return isinstance(error, DatabaseError) and any(text in str(error) for text in _SCHEMA_CHANGED)


def database_reconnect() -> None:
    """Replace every database connection of this process, so none keeps a stale schema.

    The web process's pool is drained (its idle connections closed and opened again; those in use are
    closed when returned); this thread's connection goes back to it, or is closed without a pool.
    Call it outside a transaction: a connection closed inside one leaves the transaction to roll back.
    """
    pool = connection.pool
    if pool is not None:
        pool.drain()
    connection.close()


def retry_after_schema_change(function: Callable[P, R]) -> Callable[P, R]:
    """Decorate ``function`` (safe to run twice: a task, a read) to run once more after a
    ``schema_changed`` error, on new connections (``database_reconnect``).

    Raises:
        DatabaseError: whatever the second run raises, or the first when it is not ``schema_changed``.
    """

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except DatabaseError as error:
            if not schema_changed(error):
                raise
            logger.warning(
                "%s: the database's schema changed under this process (%s); running it again on new connections",
                function.__qualname__,
                first_line(error),
            )
            database_reconnect()
            return function(*args, **kwargs)

    return run


def _database_named() -> str:
    """The database this process uses, as an operator knows it (no password)."""
    db = settings.DATABASES["default"]
    if settings.EMBEDDED_DB:
        return f"the embedded PostgreSQL in {settings.EMBEDDED_DB_DIR}"
    where = db.get("HOST") or db.get("OPTIONS", {}).get("host") or "the local socket"
    return f"database {db.get('NAME')!r} on {where}" + (f":{db['PORT']}" if db.get("PORT") else "")


def database_mistake(error: BaseException) -> str | None:
    """One line for a command pointed at the wrong database: one without this service's tables (an empty
    embedded PostgreSQL made afresh because EMBEDDED_DB_DIR or DATABASE_URL differ from the service's),
    or one it cannot reach. ``None`` for any other error (it keeps its traceback)."""
    same = (
        "run the command with the DATABASE_URL or EMBEDDED_DB_DIR the service runs with (the same .env, "
        "or the same variables set in this terminal)"
    )
    if isinstance(error, ProgrammingError) and isinstance(error.__cause__, psycopg.errors.UndefinedTable):
        return (
            f"{_database_named()} has no tables of this service ({first_line(error)}): it is empty or not the "
            f"service's. {same[0].upper()}{same[1:]}, or set this one up with `manage.py migrate`."
        )
    refused = getattr(error.__cause__, "sqlstate", None) in _CONNECTION_REFUSED_STATES
    if isinstance(error, OperationalError) and (refused or database_unavailable(error)):
        return f"Cannot connect to {_database_named()} ({first_line(error)}): {same}, and check that it is running."
    return None
