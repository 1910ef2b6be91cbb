"""The backup steps of docs/operations.md: pg_dump of the running embedded server, pg_restore into it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pgserver
import pytest
from django.db import connection

from memories.models import Message

PGBIN = Path(pgserver.__file__).parent / "pginstall/bin"


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.django_db(transaction=True)
def test_a_dump_restored_into_the_running_service_brings_back_its_memory(add_messages, search, tmp_path, settings):
    if not settings.EMBEDDED_DB:
        pytest.skip("the documented commands are for the embedded server")
    host, name = connection.settings_dict["HOST"], connection.settings_dict["NAME"]
    add_messages("alice", "s1", [{"role": "user", "content": "I play the cello in a small orchestra."}])
    dump = tmp_path / "memories.dump"
    _run(str(PGBIN / "pg_dump"), "-h", host, "-U", "postgres", "-Fc", "-f", str(dump), name)

    add_messages("alice", "s1", [{"role": "user", "content": "Written after the backup."}])
    _run(
        str(PGBIN / "pg_restore"),
        *("-h", host, "-U", "postgres", "-d", name),
        *("--clean", "--if-exists", "--single-transaction", str(dump)),
    )

    assert list(Message.objects.values_list("content", flat=True)) == ["I play the cello in a small orchestra."]
    hits = search(userId="alice", query="Which instrument does Alice play?", topK=1)["hits"]
    assert "cello in a small orchestra" in hits[0]["content"]  # the turn, or the fact raised from it
    add_messages("alice", "s1", [{"role": "user", "content": "Written after the restore."}])
    assert Message.objects.count() == 2
