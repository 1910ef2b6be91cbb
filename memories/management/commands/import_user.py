"""``manage.py import_user FILE [--merge]``: read back an end user's export (``docs/export.md``)."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.services.user_import import import_user


class Command(BaseCommand):
    help = (
        "Store the end user an export file (`export_user`, `exportUser`) describes, in one transaction: all or "
        "nothing. A user who already exists is refused unless --merge. Vectors are made again by the worker."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="The export file ('-': standard input).")
        parser.add_argument("--merge", action="store_true", help="Add to an end user who already exists here.")
        parser.add_argument("--as-user", dest="as_user", help="Store the rows under this user id instead.")

    def handle(self, *args: object, file: str, merge: bool, as_user: str | None, **options: object) -> None:
        path = Path(file)
        try:
            stream = sys.stdin.buffer if file == "-" else path.open("rb")
        except OSError as exc:
            raise CommandError(f"{file}: {exc.strerror}") from exc
        size = None if file == "-" else path.stat().st_size
        quiet = options.get("verbosity", 1) == 0
        try:
            with tqdm.wrapattr(stream, "read", total=size, desc="reading", disable=quiet, file=sys.stderr) as reading:
                result = import_user(stream=reading, merge=merge, user_external_id=as_user)
        except ValidationError as exc:
            raise CommandError(f"{file}: nothing imported: {' '.join(exc.messages)}") from exc
        finally:
            stream.close()
        created = ", ".join(f"{n} {section}" for section, n in result.created.items())
        kept = ", ".join(f"{n} {section}" for section, n in result.kept.items() if n)
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {result.user_id}: {created}" + (f"; already there and kept: {kept}" if kept else "") + ". "
                "The worker (`make run` or `make worker`) embeds them for vector search."
            )
        )
