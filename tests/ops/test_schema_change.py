"""A schema changed under a running service (the documented restore, a migration, a re-embed): the
service recovers by itself. ``pg_restore --clean`` creates every table and the ``vector`` type again,
so the connections' prepared statements and the ``vector`` type's id they cached are stale; the
first search after it still answers, and the worker's tasks still run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pgserver
import pytest
from django.db import connection
from django_q.models import Failure

from memories.models import Message
from memories.services.api_keys import api_key_create
from tests.ops.live import (
    database_url,
    environment,
    free_port,
    graphql,
    request,
    start_serve,
    stop,
    wait_for,
    wait_until_served,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PGBIN = Path(pgserver.__file__).parent / "pginstall/bin"
ADD = """
mutation Add($text: String!) {
  addMessages(userId: "alice", sessionId: "s1", messages: [{role: "user", content: $text}]) { __typename }
}
"""
SEARCH = """
query { search(input: {userId: "alice", query: "Which instrument do I play?", topK: 1}) {
  ... on SearchResult { hits { content } }
} }
"""
WAITING = "{ backlog { messagesWaitingForVector } }"


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_service_recovers_from_a_restore_under_it(tmp_path, settings):
    if not settings.EMBEDDED_DB:
        pytest.skip("the documented commands are for the embedded server")
    _, key = api_key_create(name="test", all_users=True)
    port, log = free_port(), tmp_path / "serve.log"
    # The worker's connection, like the web process's, prepares a statement run 5 times.
    env = environment(DATABASE_URL=database_url(), WEB_THREADS="1", EMBEDDING_BACKEND="local")
    service = start_serve(port=port, env=env, log=log)
    try:
        wait_until_served(service, port)
        for text in ["I play the cello in a small orchestra.", *(f"Practice note {i}." for i in range(7))]:
            assert "errors" not in graphql(port, key, ADD, {"text": text}).json()
        waiting = lambda: graphql(port, key, WAITING).json()["data"]["backlog"]["messagesWaitingForVector"]  # noqa: E731
        wait_for(lambda: waiting() == 0, 60, "the worker to embed the messages")
        for _ in range(6):  # searched often enough to be prepared on the web process's connection
            assert graphql(port, key, SEARCH).json()["data"]["search"]["hits"], "nothing found before the restore"
        host, name = connection.settings_dict["HOST"], connection.settings_dict["NAME"]
        dump = tmp_path / "memories.dump"
        _run(str(PGBIN / "pg_dump"), "-h", host, "-U", "postgres", "-Fc", "-f", str(dump), name)

        _run(
            str(PGBIN / "pg_restore"),
            *("-h", host, "-U", "postgres", "-d", name),
            *("--clean", "--if-exists", "--single-transaction", str(dump)),
        )

        answer = graphql(port, key, SEARCH)  # the first search after the restore
        assert answer.status == 200, answer.body
        assert "errors" not in answer.json(), answer.json()
        assert "cello in a small orchestra" in answer.json()["data"]["search"]["hits"][0]["content"]
        assert request(port, "GET", "/readyz").json()["failed"] == []
        for text in (f"After the restore {i}." for i in range(3)):
            assert "errors" not in graphql(port, key, ADD, {"text": text}).json()
        wait_for(lambda: waiting() == 0, 30, "the worker to embed the messages added after the restore")
        assert not Failure.objects.exists(), log.read_text()[-3000:]
        assert Message.objects.count() == 11
    finally:
        stop(service)
