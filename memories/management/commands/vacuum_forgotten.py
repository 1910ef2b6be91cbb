"""``manage.py vacuum_forgotten``: after ``forgetUser`` or ``deleteHistory``, rewrite the tables that held
the deleted words, so that PostgreSQL's files no longer hold them either.

A delete only marks rows dead: their bytes stay in the table's (and its indexes') files until the
space is reused, and in the write-ahead log. ``VACUUM FULL`` writes each table anew (the old files
are removed); a switch to a new WAL segment and two checkpoints then let PostgreSQL remove or
reuse the segments written before. What it cannot reach: backups, replicas, archived WAL, and
the blocks the file system freed (docs/operations.md, "What forgetting removes").

``VACUUM FULL`` locks each table while it rewrites it, so the command switches maintenance on
(``memories.maintenance``: the API answers 503 ``MAINTENANCE`` meanwhile) for its duration.
"""

from __future__ import annotations

import time

from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.core.management.base import BaseCommand
from django.db import DatabaseError, connection
from django_q.models import Task
from tqdm import tqdm

from memories.maintenance import maintenance_off, maintenance_on
from memories.management.commands.maintenance import add_wait_argument
from memories.models import Diary, EndUser, Entity, Knowledge, Message, Session, Summary

__all__ = ["Command", "forgettable_tables"]

# Other sessions whose transaction (or snapshot) began before the transaction id given (twice).
_OLDER = """
SELECT pid FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND (age(backend_xid) > age(%s::xid) OR age(backend_xmin) > age(%s::xid))
"""


def forgettable_tables() -> list[str]:
    """The tables that hold what an end user said or what was made of it: their rows, the facts'
    audit history, the admin log and the records of failed tasks."""
    models = [Message, Session, Summary, Knowledge, Knowledge.history.model, Diary, Entity, EndUser, LogEntry, Task]
    return [model._meta.db_table for model in models if apps.is_installed(model._meta.app_label)]


class Command(BaseCommand):
    help = (
        "After forgetting users or deleting history: rewrite the tables that held their words (VACUUM FULL) and "
        "let PostgreSQL drop its older write-ahead log, the service paused (503 MAINTENANCE) meanwhile."
    )

    def add_arguments(self, parser) -> None:
        add_wait_argument(parser)

    def handle(self, *args: object, wait: float, **options: object) -> None:
        maintenance_on(wait=wait, log=self.stderr.write)
        try:
            self._wait_for_older_transactions(wait)
            tables = forgettable_tables()
            with connection.cursor() as cursor:
                for table in tqdm(tables, desc="VACUUM FULL", unit="table", disable=options.get("verbosity", 1) == 0):
                    cursor.execute(f"VACUUM (FULL, ANALYZE) {connection.ops.quote_name(table)}")
            checkpointed = self._checkpoint()
        finally:
            maintenance_off()
        self.stdout.write(
            self.style.SUCCESS(f"Rewrote {len(tables)} tables.")
            + (" Older write-ahead log left to PostgreSQL to remove." if checkpointed else "")
        )

    def _wait_for_older_transactions(self, wait: float) -> None:
        """Wait up to ``wait`` seconds for the transactions that began before now to end: a row deleted after
        one began stays visible to it, so VACUUM FULL would copy it (any database's DDL counts too)."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT (txid_current() % 4294967296)::text")
            (now,) = cursor.fetchone()
            deadline = time.monotonic() + wait
            while True:
                cursor.execute(_OLDER, [now, now])
                older = [pid for (pid,) in cursor.fetchall()]
                if not older or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        if older:
            self.stderr.write(
                f"Transactions older than this command still run (pids {', '.join(map(str, older))}): rows deleted "
                "after they began stay until they end. Run the command again then."
            )

    def _checkpoint(self) -> bool:
        """A new WAL segment and two checkpoints (needs superuser or ``pg_checkpoint``); whether they ran."""
        try:
            with connection.cursor() as cursor:
                for statement in ("SELECT pg_switch_wal()", "CHECKPOINT", "SELECT pg_switch_wal()", "CHECKPOINT"):
                    cursor.execute(statement)
        except DatabaseError as exc:
            self.stderr.write(
                f"The write-ahead log was left as it is ({str(exc).strip().splitlines()[0]}): a role with "
                "pg_checkpoint (or a superuser) can run CHECKPOINT; PostgreSQL removes it in time anyway."
            )
            return False
        return True
