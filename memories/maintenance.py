"""The maintenance switch: while it is on, the service touches none of its tables, so a restore (or any
other work that must have the database to itself) runs without a request or a task in its way.

The switch is a PostgreSQL advisory lock on the service's database (``MAINTENANCE_LOCK``), held
exclusively by the session of ``manage.py maintenance`` while it runs. It is seen by every process
on every machine, it is in no table (a restore cannot turn it off), and it goes off when that
command ends, even killed.

- A request (``MaintenanceMiddleware``: every URL but ``/healthz`` and ``/readyz``) and an MCP tool
  call (``maintenance_guard``) hold the lock shared while they run; while the switch is on, or about
  to be, they are answered at once: HTTP 503 ``MAINTENANCE`` with ``Retry-After``, without touching
  a table.
- A worker task (``maintenance_guard(wait=True)``) holds it shared too, and waits for the switch to
  go off before it starts.
- ``/readyz`` answers 503 (``"failed": ["maintenance"]``) at once.
- Switching on (``maintenance_on``) waits for the requests and tasks that hold the lock to finish,
  up to a limit, then ends their database sessions (their transactions roll back; a client gets
  ``DATABASE_UNAVAILABLE``, a task is retried).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from django.db import DatabaseError, OperationalError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse

from memories.database import database_unavailable
from memories.http import RETRY_AFTER_SECONDS, database_unavailable_response, error_body

__all__ = [
    "MAINTENANCE_LOCK",
    "MaintenanceMiddleware",
    "guarded_task",
    "maintenance_active",
    "maintenance_guard",
    "maintenance_off",
    "maintenance_on",
    "maintenance_response",
]

logger = logging.getLogger(__name__)

# The advisory lock's two keys ("memo", 1); pg_locks shows them as classid and objid, objsubid 2.
MAINTENANCE_LOCK = (0x6D656D6F, 1)
MAINTENANCE_MESSAGE = "The service is in maintenance (a restore, say): retry in a few seconds."
# Paths served during maintenance: the health checks (``/readyz`` reports the maintenance itself).
UNGUARDED_PATHS = frozenset({"/healthz", "/readyz"})
# After ending the sessions still holding the switch off, how long the ones that started meanwhile get.
_STRAGGLER_SECONDS = 2.0
_HOLDERS = """
SELECT l.pid, coalesce(nullif(a.application_name, ''), a.backend_type), a.state, left(a.query, 60) FROM pg_locks l
JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = %s AND l.objid = %s AND l.objsubid = 2 AND l.mode = 'ShareLock' AND l.granted
    AND l.pid <> pg_backend_pid()
"""

P = ParamSpec("P")
R = TypeVar("R")


def maintenance_response() -> JsonResponse:
    """HTTP 503 ``MAINTENANCE``, with ``Retry-After``."""
    return JsonResponse(
        error_body(MAINTENANCE_MESSAGE, "MAINTENANCE"), status=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
    )


def _value(statement: str, params: tuple = MAINTENANCE_LOCK) -> object:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone()[0]


def _hold_shared(*, wait: bool) -> bool:
    """Take the lock shared on this thread's connection (until ``_release_shared``): at once, or
    ``False`` while the switch is on; with ``wait``, once the switch is off."""
    if wait:
        _value("SELECT pg_advisory_lock_shared(%s, %s)::text")
        return True
    return bool(_value("SELECT pg_try_advisory_lock_shared(%s, %s)"))


def _release_shared() -> None:
    try:
        _value("SELECT pg_advisory_unlock_shared(%s, %s)")
    except DatabaseError:  # the connection broke meanwhile: its locks went with it
        connection.close()


def maintenance_active() -> bool:
    """Whether the switch is on, or being switched on (inside a transaction: it takes and drops the
    lock shared in it)."""
    return not _value("SELECT pg_try_advisory_xact_lock_shared(%s, %s)")


@contextmanager
def maintenance_guard(*, wait: bool = False) -> Iterator[bool]:
    """Hold the switch off for the block, which learns whether it may run: ``False`` while the switch
    is on (with ``wait``, the block waits for it to go off instead, and may always run).

    Raises:
        DatabaseError: the database cannot be reached.
    """
    acquired = _hold_shared(wait=wait)
    try:
        yield acquired
    finally:
        if acquired:
            _release_shared()


def guarded_task(function: Callable[P, R]) -> Callable[P, R]:
    """Decorate a worker task to wait while the switch is on, and to hold it off while the task runs."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with maintenance_guard(wait=True):
            return function(*args, **kwargs)

    return run


class MaintenanceMiddleware:
    """Answers every request but the health checks with HTTP 503 ``MAINTENANCE`` while the switch is on,
    and holds it off while a request runs (see the module's docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path in UNGUARDED_PATHS:
            return self.get_response(request)
        try:
            allowed = _hold_shared(wait=False)
        except DatabaseError as exc:
            if database_unavailable(exc):
                return database_unavailable_response()
            raise
        if not allowed:
            return maintenance_response()
        try:
            return self.get_response(request)
        finally:
            _release_shared()


def maintenance_on(*, wait: float, log: Callable[[str], None] = logger.info) -> None:
    """Switch maintenance on, on this thread's connection, until that connection closes.

    New requests and tasks are held off at once (the lock is asked for in one wait, so they queue
    behind it); those running get ``wait`` seconds to finish, after which their database sessions are
    ended, and again every ``_STRAGGLER_SECONDS`` until none is left.

    Raises:
        OperationalError: the database cannot be reached.
    """
    patience = wait
    while not _locked_within(patience):
        with connection.cursor() as cursor:
            cursor.execute(_HOLDERS, MAINTENANCE_LOCK)
            holders = cursor.fetchall()
            for pid, *_ in holders:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        named = "; ".join(f"{pid} {name} ({state}: {query})" for pid, name, state, query in holders)
        log(f"Ended {len(holders)} database sessions still running requests or tasks after {patience:g} s: {named}.")
        patience = _STRAGGLER_SECONDS


def _locked_within(seconds: float) -> bool:
    """Take the lock exclusively, waiting at most ``seconds`` (in the queue: later requests wait behind)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = {max(1, round(seconds * 1000))}")
        try:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)::text", MAINTENANCE_LOCK)
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != "55P03":  # lock_not_available: the wait ran out
                raise
            return False
        finally:
            cursor.execute("RESET lock_timeout")
    return True


def maintenance_off() -> None:
    """Switch maintenance off (``maintenance_on``'s lock released, and its connection closed)."""
    try:
        _value("SELECT pg_advisory_unlock_all()::text", ())
    finally:
        connection.close()
