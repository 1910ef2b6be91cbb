"""``manage.py maintenance [--wait S] [-- COMMAND ...]``: the service paused while COMMAND runs (a restore).

While it runs, every process of the service (on any machine) answers API requests HTTP 503
``MAINTENANCE``, its worker's tasks wait, and ``/readyz`` answers 503; switching on waits for the
requests and tasks already running (``memories.maintenance``). Without a COMMAND it holds the
service paused until Ctrl-C.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import threading

from django.core.management.base import BaseCommand, CommandError

from memories.maintenance import maintenance_off, maintenance_on

__all__ = ["Command", "add_wait_argument"]


def add_wait_argument(parser: argparse.ArgumentParser) -> None:
    """``--wait SECONDS``, of every command that switches maintenance on (``maintenance_on``'s ``wait``)."""
    parser.add_argument(
        "--wait",
        type=float,
        default=30.0,
        help="Seconds the requests and tasks already running get to finish before their database sessions "
        "are ended (default 30).",
    )


class Command(BaseCommand):
    help = (
        "Pause the service (API requests answered 503 MAINTENANCE, tasks wait, /readyz 503) while COMMAND runs, "
        "e.g. `manage.py maintenance -- pg_restore ...`; without COMMAND, until Ctrl-C."
    )

    def add_arguments(self, parser) -> None:
        add_wait_argument(parser)
        parser.add_argument("command", nargs=argparse.REMAINDER, help="The command to run (after `--`).")

    def handle(self, *args: object, wait: float, command: list[str], **options: object) -> None:
        command = command[1:] if command[:1] == ["--"] else command
        self.stderr.write("Switching maintenance on: waiting for the requests and tasks running now...")
        maintenance_on(wait=wait, log=self.stderr.write)
        self.stderr.write(self.style.WARNING("Maintenance on: the API answers 503 MAINTENANCE, tasks wait."))
        try:
            status = self._run(command) if command else self._hold()
        finally:
            maintenance_off()
            self.stderr.write(self.style.SUCCESS("Maintenance off."))
        if status:
            raise CommandError(f"{command[0]} exited with status {status}.", returncode=status)

    def _run(self, command: list[str]) -> int:
        try:
            return subprocess.run(command, check=False).returncode
        except OSError as exc:
            raise CommandError(f"{command[0]}: {exc.strerror}") from exc

    def _hold(self) -> int:
        self.stderr.write("Press Ctrl-C (or send SIGTERM) to switch it off.")
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        while not stop.wait(0.5):
            pass
        return 0
