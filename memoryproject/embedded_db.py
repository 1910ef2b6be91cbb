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
import warnings
from pathlib import Path

__all__ = ["embedded_database_url"]

logger = logging.getLogger(__name__)


def embedded_database_url(*, data_dir: Path) -> str:
    """Start (or join) the embedded server and return a libpq URL to its ``postgres`` database.

    Args:
        data_dir: the cluster's data directory; created and initialised on first use.

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
    return url
