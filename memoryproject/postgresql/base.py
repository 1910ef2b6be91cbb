"""Django's PostgreSQL backend (``ENGINE = "memoryproject.postgresql"``), failing fast while the database is down.

With a pool (``DATABASE_POOL``), Django waits up to ``DATABASE_POOL_TIMEOUT_SECONDS`` for a connection,
which only a database that does not answer makes it wait for. Once such a wait has run out, this
process takes the database for down: later connections wait at most ``DOWN_WAIT_SECONDS`` (time for
one the pool has just opened), and the first that comes ends it. So a web process whose database
is down answers each request in a fraction of a second (``DATABASE_UNAVAILABLE``) instead of holding
each of its threads for the whole timeout, and ``/healthz`` and ``/readyz`` still find a free thread.
Meanwhile the pool keeps trying to connect in the background (psycopg_pool's ``reconnect_timeout``).
"""

from __future__ import annotations

import threading

from django.db.backends.postgresql import base
from psycopg_pool import PoolTimeout

__all__ = ["DOWN_WAIT_SECONDS", "DatabaseWrapper"]

DOWN_WAIT_SECONDS = 0.25

# Set while this process takes the database for down; shared by every thread's connection.
_down = threading.Event()


class DatabaseWrapper(base.DatabaseWrapper):
    """Django's PostgreSQL ``DatabaseWrapper``, waiting less for a pooled connection while the database is down."""

    def get_new_connection(self, conn_params: dict) -> object:
        if self.pool is None:
            return super().get_new_connection(conn_params)
        if _down.is_set():
            self.ensure_pool_connection(DOWN_WAIT_SECONDS)
        try:
            connection = super().get_new_connection(conn_params)
        except PoolTimeout:
            _down.set()
            raise
        _down.clear()
        return connection

    def ensure_pool_connection(self, seconds: float) -> None:
        """Wait at most ``seconds`` for the pool to have a connection ready (a probe's patience).

        Raises:
            psycopg_pool.PoolTimeout: none came in time (Django's ``OperationalError`` when called
                within ``wrap_database_errors``); the database is then taken for down.
        """
        self.pool.open()
        try:
            self.pool.putconn(self.pool.getconn(timeout=seconds))
        except PoolTimeout:
            _down.set()
            raise
