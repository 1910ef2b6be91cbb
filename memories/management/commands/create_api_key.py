"""``manage.py create_api_key NAME --user ID ... | --all-users [--may-curate]``: prints the new key once."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from memories.services.api_keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key scoped to some end users (or all, for a trusted backend) and print it once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="What the key is for, e.g. slack-bot.")
        parser.add_argument("--user", action="append", dest="users", default=[], help="An end user id (repeat).")
        parser.add_argument("--all-users", action="store_true", help="Allow every end user (trusted backend).")
        parser.add_argument(
            "--may-curate", action="store_true", help="May approve, reject and edit fact candidates through the API."
        )

    def handle(
        self, *args: object, name: str, users: list[str], all_users: bool, may_curate: bool, **options: object
    ) -> None:
        try:
            key, raw_key = api_key_create(
                name=name, user_external_ids=users, all_users=all_users, may_curate=may_curate
            )
        except ValidationError as exc:
            raise CommandError(" ".join(m for ms in exc.message_dict.values() for m in ms)) from exc
        scope = "all users" if key.all_users else ", ".join(sorted(users))
        curates = " It may curate fact candidates." if key.may_curate else ""
        self.stderr.write(f"API key {key.name!r} for {scope}.{curates} It is shown only now; store it safely:")
        self.stdout.write(raw_key)
