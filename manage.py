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
    if command not in _NO_DATABASE and not command.startswith("-"):
        from memoryproject.embedded_db import ensure_embedded_database

        ensure_embedded_database()
        # SIGTERM leaves through atexit, as Ctrl-C does, so the embedded server can stop with the last user.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
