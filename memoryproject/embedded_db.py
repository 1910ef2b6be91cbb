"""The embedded PostgreSQL + pgvector used when no ``DATABASE_URL`` is set.

The PyPI package ``pgserver`` ships PostgreSQL 16 with pgvector 0.6 and keeps the cluster
in a data directory of ours (``var/postgres/`` by default). Starting is idempotent and
shared between processes: ``pgserver`` keeps a list of the processes using a cluster on
disk and stops the server when the last of them exits, so the web server, the worker and
a management command run side by side on one server. When run as root it runs the server
as its own system user.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

__all__ = ["default_shared_buffers_mb", "embedded_database_url"]

logger = logging.getLogger(__name__)


def default_shared_buffers_mb() -> int:
    """A quarter of this machine's physical memory, in MiB (at least PostgreSQL's default of 128).

    Source: PostgreSQL 16 documentation, 20.4.1 "Memory": "If you have a dedicated database
    server with 1GB or more of RAM, a reasonable starting value for shared_buffers is 25% of
    the memory in your system."
    """
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(128, total // 4 // 2**20)


def embedded_database_url(*, data_dir: Path, shared_buffers_mb: int | None = None) -> str:
    """Start (or join) the embedded server and return a libpq URL to its ``postgres`` database.

    Args:
        data_dir: the cluster's data directory; created and initialised on first use.
        shared_buffers_mb: PostgreSQL's buffer cache, in MiB. The setting needs a server
            restart: when the running server has another value it is written to the
            cluster's configuration (``ALTER SYSTEM``) and takes effect at the next start
            (the server stops when the last process using it exits). ``None`` keeps it.

    Returns:
        A ``postgresql://`` URL that connects through the server's Unix socket.

    Raises:
        RuntimeError: when the ``pgserver`` package is missing or the server fails to start.
    """
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI); /tmp is fine.
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError as exc:  # pragma: no cover - a broken install
        raise RuntimeError(
            "DATABASE_URL is not set and the embedded server (pgserver) is not installed; "
            "run `make run` or `pip install -r requirements.txt`."
        ) from exc
    data_dir.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(str(data_dir), cleanup_mode="stop")
    url = server.get_uri()
    logger.debug("embedded PostgreSQL at %s", url)
    if shared_buffers_mb is not None:
        _configure_shared_buffers(url, shared_buffers_mb)
    return url


def _configure_shared_buffers(url: str, megabytes: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        setting, unit, pending = connection.execute(
            "SELECT setting::bigint * 8192 / 1048576, unit, pending_restart "
            "FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
        if unit != "8kB":  # pragma: no cover - a server built with another block size
            return
        if setting != megabytes and not pending:
            connection.execute(f"ALTER SYSTEM SET shared_buffers = '{int(megabytes)}MB'")
            logger.info("embedded PostgreSQL: shared_buffers %s MB -> %s MB at the next start", setting, megabytes)
