"""``manage.py import_conversations PATH``: load a LoCoMo-format file through ``messages_add``.

A bad turn is repaired or dropped and a bad session skipped, each with a warning naming the
sample, session and turn; the command ends with a summary line, and fails (``CommandError``,
no traceback, nothing stored) when the file cannot be read, a sample named with ``--samples`` has
no session in it, ``--max-sessions`` is under 1, or nothing in it could be imported. With
``--wait`` it then follows the worker embedding and reading what it stored, with a progress bar
of messages per second and the time left.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.backlog import backlog_get, backlog_messages_count
from memories.importers import LocomoReport, locomo_sessions
from memories.services.messages import messages_add
from memories.services.validation import described

# How often ``--wait`` counts the messages still waiting for the worker.
_POLL_SECONDS = 1.0


class Command(BaseCommand):
    help = (
        "Import conversations in LoCoMo format: one end user per sample (its sample_id), one session "
        "per LoCoMo session. Safe to run twice. Summaries are written by the worker."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--samples", nargs="*", help="Only these sample_ids.")
        parser.add_argument("--max-sessions", type=int, help="At most this many sessions per sample.")
        parser.add_argument("--channel", default="locomo")
        parser.add_argument(
            "--wait",
            action="store_true",
            help="Then follow the worker embedding and reading the imported messages (messages/s and time left) "
            "until none is waiting.",
        )

    def handle(
        self,
        *args: object,
        path: Path,
        samples: list[str] | None,
        max_sessions: int | None,
        channel: str,
        wait: bool = False,
        **options: object,
    ) -> None:
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        if max_sessions is not None and max_sessions < 1:
            raise CommandError("--max-sessions must be at least 1.")
        report = LocomoReport()
        try:
            sessions = list(locomo_sessions(path, report=report))
        except (OSError, ValueError) as exc:  # unreadable, not UTF-8, not JSON, not a list
            raise CommandError(f"{path}: {exc}") from exc
        if samples:
            # A misspelt sample id would otherwise import nothing and still succeed.
            if missing := sorted(set(samples) - {s.user_id for s in sessions}):
                raise CommandError(f"{path}: no session of sample {', '.join(missing)} in the file; nothing imported.")
            sessions = [s for s in sessions if s.user_id in samples]
        if max_sessions is not None:
            sessions = [s for s in sessions if int(s.session_id.rsplit("_", 1)[1]) <= max_sessions]
        imported: set[tuple[str, str]] = set()
        # django-q2 logs each task it queues at INFO: a few lines per session would push the progress bar away.
        queue_log = logging.getLogger("django-q")
        queue_log_level = queue_log.level
        queue_log.setLevel(max(queue_log.getEffectiveLevel(), logging.WARNING))
        try:
            stored, already = self._import(sessions, channel, report, imported, options.get("verbosity", 1) == 0)
        finally:
            queue_log.setLevel(queue_log_level)
        for line in report.warnings:
            self.stderr.write(f"warning: {line}")
        for line in report.skipped:
            self.stderr.write(f"skipped: {line}")
        users = len({user_id for user_id, _ in imported})
        summary = (
            f"{users} users, {len(imported)} sessions imported: {stored} messages stored, {already} already there; "
            f"{len(report.skipped)} skipped, {len(report.warnings)} warnings."
        )
        if not imported and report.skipped:
            raise CommandError(f"Nothing could be imported. {summary} First problem: {report.skipped[0]}")
        self.stdout.write(self.style.SUCCESS(summary) if not report.skipped else self.style.WARNING(summary))
        backlogs = [backlog_get(user_external_id=u) for u in sorted({user_id for user_id, _ in imported})]
        waiting = sum(b.messages_waiting_for_vector for b in backlogs)
        pending = [p for b in backlogs for p in b.sessions_waiting_for_summary]
        due = min((p.due_at for p in pending), default=None)
        self.stdout.write(
            f"Backlog: {waiting} messages wait for a vector, {len(pending)} sessions for a summary"
            + (f" (the first due {due:%Y-%m-%d %H:%M} UTC; `createSummaries` writes them now)." if due else ".")
            + " The worker (`make run` or `make worker`) does both."
        )
        if wait and waiting:
            users = sorted({user_id for user_id, _ in imported})
            self._follow_worker(users, waiting, quiet=options.get("verbosity", 1) == 0)

    def _follow_worker(self, users: list[str], waiting: int, *, quiet: bool) -> None:
        """A progress bar of the imported messages the worker has embedded and read, until none is waiting:
        its rate is the worker's throughput (messages/s) and its estimate the time left."""
        with tqdm(total=waiting, desc="embedded and read", unit="message", disable=quiet) as bar:
            while left := sum(backlog_messages_count(user_external_id=u) for u in users):
                bar.update(waiting - left - bar.n)
                time.sleep(_POLL_SECONDS)
            bar.update(waiting - bar.n)
        self.stdout.write(f"The worker has embedded and read all {waiting} messages.")

    @staticmethod
    def _import(
        sessions: list, channel: str, report: LocomoReport, imported: set[tuple[str, str]], quiet: bool
    ) -> tuple[int, int]:
        """Store each session through ``messages_add`` with a progress bar; ``(messages stored, already there)``."""
        stored = already = 0
        for session in tqdm(sessions, desc="sessions", unit="session", disable=quiet):
            try:
                added = messages_add(
                    user_external_id=session.user_id,
                    session_external_id=session.session_id,
                    channel=channel,
                    messages=session.messages,
                )
            except ValidationError as exc:  # nothing of this session is stored (one transaction)
                report.skipped.append(f"{session.user_id}, {session.session_id}: {' '.join(described(exc))}")
                continue
            imported.add((session.user_id, session.session_id))
            stored += len(added.messages)
            already += added.skipped
        return stored, already
