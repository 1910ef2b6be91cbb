"""``manage.py serve``: the whole service in one command (what ``make run`` calls).

Applies migrations, then runs the ``Procfile``'s processes (``web``: gunicorn; ``worker``: the
django-q2 cluster; ``mcp``, the MCP server over HTTP, only when named: ``serve web worker mcp``),
each in a process group of its own, and supervises them:

- A process that exits (even killed with SIGKILL) is started again, once what is left of its
  process group is stopped; so is the embedded PostgreSQL when it stops (the web process and the
  worker reconnect by themselves). Each is restarted at most ``SERVE_MAX_RESTARTS`` times within
  ``RESTART_WINDOW_SECONDS``, each time a little later (0, 1, 2, 4... s); when one stops once more,
  everything is stopped and the command fails (exit status 1).
- On SIGINT or SIGTERM all are stopped: SIGTERM, then SIGKILL after ``STOP_SECONDS``, and the
  command returns once no process of any group is left. The embedded PostgreSQL, when used, was
  started by ``manage.py`` for this command and stops when the last process using it exits.

Why not honcho: it notices a process's exit by the end of its output, which the orphaned
children of a killed ``qcluster`` keep open, so the service would run on without a worker parent.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections import defaultdict, deque
from pathlib import Path

import psutil
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from memoryproject.embedded_db import embedded_database_restart, embedded_database_running

__all__ = ["ON_REQUEST", "RESTART_WINDOW_SECONDS", "STOP_SECONDS", "Command", "procfile_processes"]

# How long the processes get to stop after SIGTERM (gunicorn finishes its requests, django-q2 its tasks).
STOP_SECONDS = 30
# SERVE_MAX_RESTARTS counts the restarts of one process (or of the database) within this window.
RESTART_WINDOW_SECONDS = 600
# The embedded PostgreSQL's name in the log and in the restart counts.
_DATABASE = "embedded PostgreSQL"
# How long what is left of a stopped child's process group gets after SIGTERM, before SIGKILL.
_ORPHAN_STOP_SECONDS = 5
_PROCFILE_LINE = re.compile(r"^([A-Za-z0-9_-]+):\s*(.+)$")
# Procfile processes run only when named: the MCP server is an extra way in, with a port of its own.
ON_REQUEST = frozenset({"mcp"})


def procfile_processes(path: Path) -> dict[str, str]:
    """The ``name: command`` lines of a Procfile, in order (blank lines and ``#`` comments skipped)."""
    lines = (line.strip() for line in path.read_text().splitlines())
    return {m[1]: m[2] for line in lines if (m := _PROCFILE_LINE.match(line))}


class _Restarts:
    """The restarts of each process within ``RESTART_WINDOW_SECONDS``, up to ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._times: defaultdict[str, deque[float]] = defaultdict(deque)

    def count(self, name: str) -> int | None:
        """Count a restart of ``name`` now: its number within the window, or ``None`` past the limit."""
        now, times = time.monotonic(), self._times[name]
        while times and now - times[0] > RESTART_WINDOW_SECONDS:
            times.popleft()
        if len(times) >= self.limit:
            return None
        times.append(now)
        return len(times)


class Command(BaseCommand):
    help = (
        "Apply migrations, then run the Procfile's processes (web server and background worker) until "
        "Ctrl-C or SIGTERM; a process (or the embedded PostgreSQL) that stops is started again, up to "
        "SERVE_MAX_RESTARTS times in 10 minutes, after which everything is stopped."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "names", nargs="*", help="Procfile processes to run (default: all but mcp, the MCP server over HTTP)."
        )
        parser.add_argument("--host", default=settings.HOST)
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--no-worker", action="store_true", help="Do not start the background worker.")

    def handle(self, *args: object, names: list[str], host: str, port: int, no_worker: bool, **options: object) -> None:
        stop_requested: list[int] = []
        # Set first: a SIGTERM from now on stops what is started, then leaves through atexit.
        signal.signal(signal.SIGTERM, lambda signum, frame: stop_requested.append(signum))
        signal.signal(signal.SIGINT, lambda signum, frame: stop_requested.append(signum))
        procfile = Path(settings.BASE_DIR) / "Procfile"
        processes = procfile_processes(procfile)
        unknown = set(names) - set(processes)
        if unknown:
            raise CommandError(f"{procfile} has no process {', '.join(sorted(unknown))}.")
        wanted = set(names) if names else set(processes) - ON_REQUEST
        processes = {name: command for name, command in processes.items() if name in wanted}
        if no_worker:
            processes.pop("worker", None)
        call_command("migrate", interactive=False, verbosity=0)
        connections.close_all()
        if stop_requested:
            return
        env = {**os.environ, "HOST": host, "PORT": str(port), "PYTHONUNBUFFERED": "1"}
        children: dict[str, subprocess.Popen] = {}
        try:
            for name, command in processes.items():
                children[name] = _spawn(command, env)
            if "web" in children:
                base = f"http://{host}:{port}"
                self.stdout.write(
                    self.style.SUCCESS(
                        f"GraphiQL: {base}/graphql/\nAdmin:    {base}/admin/\n"
                        "Staff login: `.venv/bin/python manage.py createsuperuser`; API key: "
                        "`.venv/bin/python manage.py create_api_key NAME --all-users`.\nCtrl-C stops everything."
                    )
                )
            if "mcp" in children:
                self.stdout.write(self.style.SUCCESS(f"MCP:      http://{host}:{settings.MCP_PORT}/mcp"))
            failure = self._supervise(children, processes, env, stop_requested)
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the stop short
            _stop(children)
        if failure is not None:
            raise CommandError(f"{failure}; everything was stopped.")

    def _supervise(
        self, children: dict[str, subprocess.Popen], commands: dict[str, str], env: dict[str, str], stop: list[int]
    ) -> str | None:
        """Keep the processes and the embedded PostgreSQL running until a stop is requested (``None``),
        or until one stops more often than ``SERVE_MAX_RESTARTS`` allows (what stopped)."""
        restarts = _Restarts(settings.SERVE_MAX_RESTARTS)
        while not stop:
            for name, child in list(children.items()):
                if child.poll() is None:
                    continue
                _stop({name: child})  # what is left of its group: a killed qcluster's processes
                what = f"The {name} process exited (code {child.returncode})"
                if not self._may_restart(restarts, name, what, stop):
                    return what
                if not stop:
                    children[name] = _spawn(commands[name], env)
            if not embedded_database_running():
                what = f"The {_DATABASE} stopped"
                if not self._may_restart(restarts, _DATABASE, what, stop):
                    return what
                try:
                    embedded_database_restart()
                except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                    self.stderr.write(f"The {_DATABASE} did not start ({exc}); trying again.")
            time.sleep(0.2)
        return None

    def _may_restart(self, restarts: _Restarts, name: str, what: str, stop: list[int]) -> bool:
        """Count a restart of ``name`` and say so, then wait its delay; ``False`` past the limit."""
        number = restarts.count(name)
        if number is None:
            return False
        minutes = RESTART_WINDOW_SECONDS // 60
        self.stderr.write(f"{what}; starting it again (restart {number} of {restarts.limit} in {minutes} minutes).")
        deadline = time.monotonic() + (0 if number == 1 else min(2 ** (number - 2), 30))
        while not stop and time.monotonic() < deadline:
            time.sleep(0.1)
        return True


def _spawn(command: str, env: dict[str, str]) -> subprocess.Popen:
    """A Procfile command, run by ``/bin/sh`` as a Procfile runner does, in a process group of its own."""
    return subprocess.Popen(["/bin/sh", "-c", command], env=env, cwd=settings.BASE_DIR, start_new_session=True)


def _stop(children: dict[str, subprocess.Popen]) -> None:
    """Stop every child and whatever is left of its process group; return when all are gone.

    SIGTERM goes to each child alone first: django-q2's cluster stops its own processes, and
    would hang if they got the signal too. After ``STOP_SECONDS`` (or once the child is gone),
    what is left of its group (the orphans of a killed child) gets SIGTERM, then SIGKILL.
    """
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while any(child.poll() is None for child in children.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    groups = [child.pid for child in children.values()]  # each child leads its own group (new session)
    for signum, seconds in ((signal.SIGTERM, _ORPHAN_STOP_SECONDS), (signal.SIGKILL, STOP_SECONDS)):
        _signal_groups(groups, signum)
        deadline = time.monotonic() + seconds
        while _alive_members(groups) and time.monotonic() < deadline:
            for child in children.values():
                child.poll()  # reap: a zombie counts as gone
            time.sleep(0.1)
        if not _alive_members(groups):
            break
    for child in children.values():
        child.wait()


def _signal_groups(groups: list[int], signum: int) -> None:
    for group in groups:
        try:
            os.killpg(group, signum)
        except ProcessLookupError:
            pass


def _alive_members(groups: list[int]) -> list[psutil.Process]:
    """The processes of ``groups`` still running (not zombies), orphans included."""
    alive = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) in groups and process.info["status"] != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except (ProcessLookupError, psutil.Error):
            continue
    return alive
