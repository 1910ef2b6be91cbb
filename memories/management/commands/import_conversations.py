"""``manage.py import_conversations PATH``: load a LoCoMo-format file through ``messages_add``."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.importers import locomo_sessions
from memories.services.messages import messages_add


class Command(BaseCommand):
    help = (
        "Import conversations in LoCoMo format: one end user per sample (its sample_id), one session "
        "per LoCoMo session. Safe to run twice. Summaries are written by the worker."
    )

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("path", type=Path)
        parser.add_argument("--samples", nargs="*", help="Only these sample_ids.")
        parser.add_argument("--max-sessions", type=int, help="At most this many sessions per sample.")
        parser.add_argument("--channel", default="locomo")

    def handle(
        self,
        *args: object,
        path: Path,
        samples: list[str] | None,
        max_sessions: int | None,
        channel: str,
        **options: object,
    ) -> None:
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        try:
            sessions = list(locomo_sessions(path))
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if samples:
            sessions = [s for s in sessions if s.user_id in samples]
        if max_sessions is not None:
            sessions = [s for s in sessions if int(s.session_id.rsplit("_", 1)[1]) <= max_sessions]
        stored = skipped = 0
        for session in tqdm(sessions, desc="sessions", unit="session", disable=options.get("verbosity", 1) == 0):
            added = messages_add(
                user_external_id=session.user_id,
                session_external_id=session.session_id,
                channel=channel,
                messages=session.messages,
            )
            stored += len(added.messages)
            skipped += added.skipped
        users = len({s.user_id for s in sessions})
        self.stdout.write(
            self.style.SUCCESS(
                f"{users} users, {len(sessions)} sessions: {stored} messages stored, {skipped} already there."
            )
        )
