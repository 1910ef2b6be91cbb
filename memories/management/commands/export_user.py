"""``manage.py export_user USER [--out FILE]``: one end user's memory as one JSON document (``docs/export.md``)."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.models import EndUser
from memories.services.user_export import export_counts, export_user
from memories.services.validation import described


class _Unended:
    """The command's stdout taking the document piece by piece (``OutputWrapper`` ends each write with a newline)."""

    def __init__(self, wrapper) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")


class Command(BaseCommand):
    help = (
        "Write everything stored of one end user (sessions, messages, summaries, knowledge with its history, "
        "diaries, entities) as one JSON document, streamed; `import_user` reads it back."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("user", help="The end user's id (the chatbot's userId).")
        parser.add_argument("--out", type=Path, help="The file to write (default: standard output).")

    def handle(self, *args: object, user: str, out: Path | None, **options: object) -> None:
        try:
            total = sum(export_counts(user_external_id=user).values())
        except EndUser.DoesNotExist:
            raise CommandError(f"No end user {user!r}.") from None
        quiet = options.get("verbosity", 1) == 0
        try:
            stream = out.open("w", encoding="utf-8") if out else _Unended(self.stdout)
        except OSError as exc:
            raise CommandError(f"{out}: {exc.strerror}") from exc
        try:
            with tqdm(total=total, unit="row", disable=quiet, file=sys.stderr) as bar:
                counts = export_user(
                    user_external_id=user,
                    out=stream,
                    progress=lambda section, n: (bar.set_description(section), bar.update(n)),
                )
        except ValidationError as exc:
            raise CommandError(" ".join(described(exc))) from exc
        finally:
            if out:
                stream.close()
        if out:
            summary = ", ".join(f"{n} {section}" for section, n in counts.items())
            self.stdout.write(self.style.SUCCESS(f"Exported {user}: {summary} to {out}."))
