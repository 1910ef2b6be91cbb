"""``manage.py maintenance``: while it runs, requests are answered 503 ``MAINTENANCE`` and ``/readyz`` 503,
for every process; and ``manage.py vacuum_forgotten``: a forgotten user's words leave the database's files."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from memories.maintenance import MAINTENANCE_LOCK
from tests.graphql.documents import msg
from tests.ops.live import database_url

HISTORY = '{ history(userId: "alice") { results { content } } }'
# Run by the maintenance command: exit status 0 when a request would be refused now (the switch is on).
PAUSED = (
    "import sys, psycopg; c = psycopg.connect(sys.argv[1]); "
    "sys.exit(0 if not c.execute('SELECT pg_try_advisory_lock_shared(%s, %s)', sys.argv[2:]).fetchone()[0] else 3)"
)


@pytest.mark.django_db
def test_requests_are_answered_503_while_maintenance_is_on(client, gql, trusted_key):
    with psycopg.connect(database_url(), autocommit=True) as maintenance:
        maintenance.execute("SELECT pg_advisory_lock(%s, %s)", MAINTENANCE_LOCK)
        refused = client.post(
            "/graphql/",
            json.dumps({"query": HISTORY}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {trusted_key}",
        )
        ready = client.get("/readyz", HTTP_HOST="localhost")
        alive = client.get("/healthz", HTTP_HOST="localhost")
        maintenance.execute("SELECT pg_advisory_unlock(%s, %s)", MAINTENANCE_LOCK)
    assert refused.status_code == 503
    assert refused["Retry-After"] == "5"
    assert refused.json()["errors"][0]["extensions"] == {"code": "MAINTENANCE"}
    assert (ready.status_code, ready.json()["failed"]) == (503, ["maintenance"])
    assert alive.status_code == 200
    # Off again: served as before.
    assert gql(HISTORY) == {"data": {"history": {"results": []}}}


@pytest.mark.django_db(transaction=True)
def test_the_maintenance_command_pauses_the_service_while_its_command_runs():
    check = [sys.executable, "-c", PAUSED, database_url(), *map(str, MAINTENANCE_LOCK)]
    assert subprocess.run(check, check=False).returncode == 3  # not paused before

    err = StringIO()
    call_command("maintenance", "--wait", "5", "--", *check, stdout=StringIO(), stderr=err)
    assert "Maintenance on" in err.getvalue()
    assert "Maintenance off." in err.getvalue()
    assert subprocess.run(check, check=False).returncode == 3  # nor after

    with pytest.raises(CommandError, match="exited with status 4") as failed:
        call_command("maintenance", "--", sys.executable, "-c", "raise SystemExit(4)", stderr=StringIO())
    assert failed.value.returncode == 4


@pytest.mark.django_db(transaction=True)
def test_maintenance_ends_the_sessions_of_requests_that_do_not_finish():
    with psycopg.connect(database_url(), autocommit=True) as stuck:
        stuck.execute("SELECT pg_advisory_lock_shared(%s, %s)", MAINTENANCE_LOCK)  # a request that never ends
        err = StringIO()
        call_command("maintenance", "--wait", "0.5", "--", sys.executable, "-c", "pass", stderr=err)
        assert "Ended 1 database sessions" in err.getvalue()
        with pytest.raises(psycopg.OperationalError):
            stuck.execute("SELECT 1")


@pytest.mark.django_db(transaction=True)
def test_vacuum_forgotten_removes_a_forgotten_users_words_from_the_database_files(add_messages, gql):
    if not settings.EMBEDDED_DB:
        pytest.skip("reads the embedded server's files")
    secret = f"my-secret-{uuid.uuid4().hex}"
    add_messages("alice", "s1", [msg(f"Remember {secret} please.", "2024-05-01T09:00:00Z")])
    gql('mutation { forgetUser(userId: "alice") { __typename } }')
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
        cursor.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
        files = Path(settings.EMBEDDED_DB_DIR) / "base" / str(cursor.fetchone()[0])
    assert _holding(files, secret), "forgetting alone leaves the words in the table files"

    out = StringIO()
    call_command("vacuum_forgotten", stdout=out, stderr=StringIO(), verbosity=0)

    assert "Rewrote" in out.getvalue()
    assert not _holding(files, secret)


def _holding(folder: Path, text: str) -> list[Path]:
    needle = text.encode()
    return [path for path in folder.iterdir() if path.is_file() and needle in path.read_bytes()]
