"""Django for the benchmarks, and the databases they work in on the configured PostgreSQL server.

Every benchmark works in a database of its own beside the developer's: a throwaway one
(``throwaway_database``), a kept one reused by the next run (``use_kept_database``,
``bench.synthetic``'s datasets), or one dropped and created afresh (``fresh_database``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "connect",
    "database_url",
    "fresh_database",
    "setup_django",
    "throwaway_database",
    "use_database",
    "use_kept_database",
]


def setup_django() -> None:
    """Configure and start Django for the benchmark (no-op when it is already set up).

    django-q2 is put in sync mode (``Q_SYNC=1``) before the settings are read, so queued
    tasks run in-process when the transaction that queued them commits. The embedded
    PostgreSQL is started when the settings use it.
    """
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")
    os.environ["Q_SYNC"] = "1"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()
    from memoryproject.embedded_db import ensure_embedded_database

    ensure_embedded_database()


def connect(dbname: str | None = None) -> psycopg.Connection:
    """An autocommit psycopg connection to ``dbname`` (default: Django's database) on Django's server."""
    import psycopg
    from django.db import connection

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    if dbname is not None:
        params["dbname"] = dbname
    return psycopg.connect(**params, autocommit=True)


def database_url(name: str) -> str:
    """A libpq URL to database ``name`` on the server Django is connected to (for a child process's settings)."""
    from memoryproject.embedded_db import ensure_embedded_database

    url = os.environ.get("DATABASE_URL") or ensure_embedded_database()
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def use_database(name: str) -> None:
    """Point Django's default connection at database ``name`` (closing the current connection)."""
    from django.db import connection

    connection.close()
    if hasattr(connection, "close_pool"):  # a pool's connections stay on the old database
        connection.close_pool()
    connection.settings_dict["NAME"] = name


def fresh_database(name: str, *, use: bool = True) -> None:
    """Drop database ``name`` if it exists and create it empty; with ``use``, connect Django to it and migrate."""
    with connect() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    if use:
        from django.core.management import call_command

        use_database(name)
        call_command("migrate", verbosity=0)


@contextmanager
def throwaway_database(name: str) -> Iterator[None]:
    """Connect Django to a new, migrated database ``bench_<name>_<pid>`` for the block, and drop it after.

    Django's test-database machinery: it works with the embedded server and with ``DATABASE_URL``;
    the pid keeps it apart from the developer's database and from concurrent runs.
    """
    from django.db import connection

    old_name = connection.settings_dict["NAME"]
    old_test = dict(connection.settings_dict.get("TEST") or {})
    connection.settings_dict["TEST"] = {**old_test, "NAME": f"bench_{name}_{os.getpid()}"}
    # A pool keeps connecting to the database it was made for: start it again for the new one.
    connection.close()
    connection.close_pool()
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        connection.settings_dict["TEST"] = old_test


def use_kept_database(name: str) -> bool:
    """Connect Django to the database ``name`` on the configured server, created and migrated if missing.

    Returns:
        Whether it existed already.
    """
    from django.core.management import call_command
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        exists = cursor.fetchone() is not None
    # A pool keeps connecting to the database it was made for: start it again for the new one.
    connection.close()
    connection.close_pool()
    if not exists:
        connection.settings_dict["TEST"] = {**(connection.settings_dict.get("TEST") or {}), "NAME": name}
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        return False
    connection.close()
    connection.settings_dict["NAME"] = name
    call_command("migrate", verbosity=0)
    return True
