"""Django's PostgreSQL backend (``ENGINE = "memoryproject.postgresql"``), failing fast while the database is down.

With a pool (``DATABASE_POOL``), Django waits up to ``DATABASE_POOL_TIMEOUT_SECONDS`` for a connection,
which only a database that does not answer makes it wait for. Once such a wait has run out, this
process takes the database for down: later connections wait at most ``DOWN_WAIT_SECONDS`` (time for
one the pool has just opened), and the first that comes ends it. So a web process whose database
is down answers each request in a fraction of a second (``DATABASE_UNAVAILABLE``) instead of holding
each of its threads for the whole timeout, and ``/healthz`` and ``/readyz`` still find a free thread.
Meanwhile the pool keeps trying to connect in the background (psycopg_pool's ``reconnect_timeout``).
A probe that must answer quickly waits less in any case (``patience``).

A connection goes back to the pool without the session-level advisory locks it holds
(``release_session_locks``): a request holds the maintenance switch off with one
(``memories.maintenance``), and a connection closed in the middle of a request (django-q2's ORM
broker closes the one it enqueues on) would otherwise keep it, for whichever request takes it next.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from django.db.backends.postgresql import base
from psycopg_pool import PoolTimeout

__all__ = ["DOWN_WAIT_SECONDS", "DatabaseWrapper", "patience", "release_session_locks"]

DOWN_WAIT_SECONDS = 0.25

# Set while this process takes the database for down; shared by every thread's connection.
_down = threading.Event()
_patience = threading.local()


@contextmanager
def patience(seconds: float) -> Iterator[None]:
    """Within it, this thread waits at most ``seconds`` for a pooled connection (``/readyz``'s checks)."""
    previous = getattr(_patience, "seconds", None)
    _patience.seconds = seconds
    try:
        yield
    finally:
        _patience.seconds = previous


def release_session_locks(conn: psycopg.Connection) -> None:
    """The pool's ``reset``: release every advisory lock the session holds, and end any transaction."""
    conn.execute("SELECT pg_advisory_unlock_all()")
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()


class DatabaseWrapper(base.DatabaseWrapper):
    """Django's PostgreSQL ``DatabaseWrapper``, waiting less for a pooled connection while the database is
    down, and whose pool releases a returned connection's advisory locks (``release_session_locks``)."""

    @property
    def pool(self) -> object:
        options = self.settings_dict["OPTIONS"].get("pool")
        if isinstance(options, dict):
            options.setdefault("reset", release_session_locks)
        return base.DatabaseWrapper.pool.fget(self)

    def get_new_connection(self, conn_params: dict) -> object:
        if self.pool is None:
            return super().get_new_connection(conn_params)
        wait = DOWN_WAIT_SECONDS if _down.is_set() else getattr(_patience, "seconds", None)
        try:
            if wait is not None:
                # Django's own wait is the pool's timeout: first see whether one comes in time.
                self.pool.open()
                self.pool.putconn(self.pool.getconn(timeout=wait))
            connection = super().get_new_connection(conn_params)
        except PoolTimeout:
            _down.set()
            raise
        _down.clear()
        return connection
