#!/usr/bin/env python
"""Django's command-line utility; starts the embedded PostgreSQL first for commands that use a database."""

import os
import signal
import sys

# Commands that never open a database connection.
_NO_DATABASE = {
    "help",
    "version",
    "makemigrations",
    "diffsettings",
    "startapp",
    "startproject",
    "makemessages",
    "train_reader",
}
# Commands that serve requests from threads, through a pool of connections (the others use none).
_POOLED = {"serve", "runserver", "mcp"}


def main() -> None:
    """Run a management command."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from django.core.management import execute_from_command_line

    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command == "qcluster":
        from memoryproject import WORKER_APPLICATION_NAME

        # Its processes' connections carry this name (libpq reads it): /readyz sees that a worker runs.
        os.environ.setdefault("PGAPPNAME", WORKER_APPLICATION_NAME)
    if command not in _POOLED:
        # A one-off command needs one connection, not a pool (whose retries would hide why a connection fails).
        os.environ.setdefault("DATABASE_POOL", "false")
    if command not in _NO_DATABASE and not command.startswith("-"):
        from memoryproject.embedded_db import ensure_embedded_database

        ensure_embedded_database()
        # SIGTERM leaves through atexit, as Ctrl-C does, so the embedded server can stop with the last user.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        execute_from_command_line(sys.argv)
    except Exception as error:
        from memories.database import database_mistake

        # A command pointed at an empty or unreachable database: one line saying which, and what to set.
        if (mistake := database_mistake(error)) is None:
            raise
        print(f"{command}: {mistake}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
