"""The embedded PostgreSQL + pgvector used when no ``DATABASE_URL`` is set.

The PyPI package ``pgserver`` ships PostgreSQL 16 with pgvector and keeps the cluster in a
data directory of ours (``EMBEDDED_DB_DIR``, ``var/postgres/`` by default). Settings only
name the server's Unix socket (in that directory); ``ensure_embedded_database`` starts it, and
is called by what needs it: ``manage.py`` (commands that use the database), gunicorn's
``on_starting`` hook and the pytest session.

Who uses the server: every process that joins holds a shared ``flock`` on ``.<data dir>.users``
(beside the data directory) for as long as it lives; the kernel drops the lock of a process that
is killed outright. A process that leaves and then gets the lock exclusively was the last user,
and stops the server (``pg_ctl stop``) while joiners wait; ``.<data dir>.start`` makes starts one
at a time. ``pgserver`` itself is asked only to start (``get_server(..., cleanup_mode=None)``), as
its own list of users keeps the pids of killed processes. When run as root, ``pgserver`` runs the
server as its own system user.

A server that stops while in use (killed, crashed) is started again by whoever supervises it:
``manage.py serve`` watches ``embedded_database_running`` and calls ``embedded_database_restart``.
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import subprocess
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

__all__ = [
    "default_shared_buffers_mb",
    "embedded_database_restart",
    "embedded_database_running",
    "embedded_database_settings",
    "ensure_embedded_database",
]

logger = logging.getLogger(__name__)

# What a Unix socket path may hold on Linux (sun_path), with its final NUL byte.
_MAX_SOCKET_PATH = 107
_SOCKET_NAME = ".s.PGSQL.5432"

_lock = threading.Lock()
_url: str | None = None


def default_shared_buffers_mb() -> int:
    """A quarter of this machine's physical memory, in MiB (at least PostgreSQL's default of 128).

    Source: PostgreSQL 16 documentation, 20.4.1 "Memory": "If you have a dedicated database
    server with 1GB or more of RAM, a reasonable starting value for shared_buffers is 25% of
    the memory in your system."
    """
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(128, total // 4 // 2**20)


def embedded_database_settings(*, data_dir: Path) -> dict[str, str]:
    """Django's ``DATABASES`` entry for the embedded server in ``data_dir``; starts nothing.

    The server listens only on its Unix socket, which ``pgserver`` puts in the data directory.
    """
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "postgres",
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(data_dir.resolve()),
        "PORT": "",
    }


def ensure_embedded_database() -> str | None:
    """Start (or join) the embedded server when the settings use it; idempotent, per process.

    Reads ``EMBEDDED_DB`` (false when ``DATABASE_URL`` is set), ``EMBEDDED_DB_DIR`` and
    ``EMBEDDED_DB_SHARED_BUFFERS_MB``. The server keeps running while any process that called
    this is alive, and stops when the last one exits.

    Returns:
        A ``postgresql://`` URL to the server's ``postgres`` database (through its Unix
        socket), or ``None`` when the settings use another server.

    Raises:
        ImproperlyConfigured: ``EMBEDDED_DB_DIR`` is too long a path for a Unix socket, or the
            server that runs there listens elsewhere.
        RuntimeError: ``pgserver`` is missing, or the server failed to start.
    """
    global _url
    if not settings.EMBEDDED_DB:
        return None
    with _lock:
        if _url is None:
            _url = _start(Path(settings.EMBEDDED_DB_DIR).resolve(), settings.EMBEDDED_DB_SHARED_BUFFERS_MB)
    return _url


def embedded_database_running() -> bool:
    """Whether the embedded server this process started or joined still runs (``True`` when it uses none).

    Reads the server's ``postmaster.pid``: cheap enough to ask a few times a second.
    """
    if _url is None:
        return True
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(Path(settings.EMBEDDED_DB_DIR).resolve())
    return info is not None and info.is_running()


def embedded_database_restart() -> None:
    """Start the embedded server this process started or joined again, after it stopped (killed, crashed).

    PostgreSQL recovers from its write-ahead log at start, so every committed transaction is kept.

    Raises:
        subprocess.CalledProcessError: the server did not start (e.g. its killed processes still hold
            its shared memory; try again a little later). Its log is in ``<EMBEDDED_DB_DIR>/log``.
        subprocess.TimeoutExpired: the server took more than 10 s to start.
    """
    import pgserver

    data_dir = Path(settings.EMBEDDED_DB_DIR).resolve()
    with _starting(data_dir):
        pgserver.get_server(data_dir, cleanup_mode=None).ensure_postgres_running()  # this process's handle


def _start(data_dir: Path, shared_buffers_mb: int | None) -> str:
    if len(str(data_dir / _SOCKET_NAME)) > _MAX_SOCKET_PATH:
        raise ImproperlyConfigured(f"EMBEDDED_DB_DIR {data_dir} is too long for a Unix socket; use a shorter path.")
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
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    users = os.open(_beside(data_dir, "users"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(users, fcntl.LOCK_SH)  # waits while a last user stops the server
    with _starting(data_dir):
        server = pgserver.get_server(data_dir, cleanup_mode=None)
    atexit.register(_leave, data_dir, users, os.getpid(), server.system_user)
    info = server.get_postmaster_info()
    if info.socket_dir is None or info.socket_dir.resolve() != data_dir:
        raise ImproperlyConfigured(
            f"The embedded PostgreSQL in {data_dir} listens at {info.socket_dir}, not in its data directory; "
            "stop it (pg_ctl stop) and start the service again."
        )
    url = server.get_uri()
    if shared_buffers_mb is not None:
        _configure_shared_buffers(url, shared_buffers_mb)
    return url


def _beside(data_dir: Path, name: str) -> Path:
    """A file next to the data directory (``initdb`` wants that directory empty)."""
    return data_dir.with_name(f".{data_dir.name}.{name}")


@contextmanager
def _starting(data_dir: Path) -> Iterator[None]:
    """One process at a time starts (or stops) the server: two ``pg_ctl start`` would collide."""
    lock = os.open(_beside(data_dir, "start"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)  # releases the lock


def _leave(data_dir: Path, users: int, pid: int, system_user: str | None) -> None:
    """At exit: stop the server when no other process uses it."""
    if os.getpid() != pid:  # a forked child (gunicorn's worker) runs its parent's atexit handlers
        return
    fcntl.flock(users, fcntl.LOCK_UN)
    try:
        fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(users)
        return  # another process uses it, and the last one stops it
    from pgserver import pg_ctl
    from pgserver.utils import PostmasterInfo

    try:
        with _starting(data_dir):
            info = PostmasterInfo.read_from_pgdata(data_dir)
            if info is not None and info.is_running():
                pg_ctl(["-w", "stop"], pgdata=data_dir, user=system_user)
    except subprocess.CalledProcessError:
        logger.warning("embedded PostgreSQL: pg_ctl stop failed; see %s", data_dir / "log")
    finally:
        os.close(users)  # releases the lock: joiners waiting start it again


def _configure_shared_buffers(url: str, megabytes: int) -> None:
    """Write ``shared_buffers`` to the cluster's configuration when it differs; it takes effect at the next start."""
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
