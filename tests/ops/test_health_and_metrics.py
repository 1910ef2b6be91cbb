"""/healthz, /readyz, /metrics and the backlog query: what an operator and a load balancer see."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import psycopg
import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from django_q.conf import Conf
from django_q.models import Schedule

from memories import tasks
from memories.llm import ModelBackendError
from memories.models import Message, Session
from memories.services.schedules import SWEEP_NAME
from memoryproject import WORKER_APPLICATION_NAME

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("hashing_embedder")]


@pytest.fixture
def worker_connected() -> Iterator[None]:
    """A connection to the test database under the name a worker's processes use (as ``manage.py qcluster``)."""
    with psycopg.connect(**_connection_params(), application_name=WORKER_APPLICATION_NAME):
        yield


def test_healthz_answers_without_a_key(client):
    response = client.get("/healthz", HTTP_HOST="localhost")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ready_when_every_check_passes(client, worker_connected):
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now() + timedelta(minutes=1))
    response = client.get("/readyz", HTTP_HOST="localhost")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["status"], body["failed"], body["degraded"]) == ("ready", [], [])
    assert set(body["checks"]) == {
        "database",
        "maintenance",
        "migrations",
        "search",
        "worker",
        "embedding_backend",
        "embedding_backlog",
    }
    assert body["checks"]["embedding_backend"]["model"] == "hashing"
    assert body["checks"]["worker"]["connections"] == 1


def test_readyz_reports_the_worker_degraded_as_soon_as_none_is_connected(client):
    """Its sweep ran on time, but no worker process is connected now (killed, restarting)."""
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now() + timedelta(minutes=1))
    response = client.get("/readyz", HTTP_HOST="localhost")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["status"], body["failed"], body["degraded"]) == ("ready", [], ["worker"])
    assert body["checks"]["worker"] == {"ok": False, "sweep_overdue_seconds": 0, "connections": 0}


@pytest.mark.django_db(transaction=True)
def test_readyz_fails_within_a_second_while_a_restore_holds_the_tables(client, worker_connected):
    """pg_restore --single-transaction drops and creates the tables, holding them until it commits."""
    with psycopg.connect(**_connection_params()) as restore, ThreadPoolExecutor(1) as probes:
        restore.execute(f"LOCK TABLE django_migrations, {Message._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        probe = probes.submit(_readyz_from_another_thread, client)
        try:
            response, seconds = probe.result(timeout=5)
        finally:
            restore.rollback()  # the restore ends: whatever waits for its tables goes on
    assert seconds < 2
    assert response.status_code == 503
    assert response.json()["failed"] == ["migrations"]
    assert "statement timeout" in response.json()["checks"]["migrations"]["error"]
    assert client.get("/readyz", HTTP_HOST="localhost").status_code == 200


def _readyz_from_another_thread(client) -> tuple[object, float]:
    started = time.monotonic()
    try:
        return client.get("/readyz", HTTP_HOST="localhost"), time.monotonic() - started
    finally:
        connection.close()


def test_readyz_fails_when_a_search_statement_fails(client, worker_connected):
    """A restore that left the vector column out: searches fail, and so does readiness."""
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {Message._meta.db_table} RENAME COLUMN embedding TO embedding_gone")
    response = client.get("/readyz", HTTP_HOST="localhost")
    assert response.status_code == 503
    assert response.json()["failed"] == ["search"]
    assert "embedding" in response.json()["checks"]["search"]["error"]


def _connection_params() -> dict[str, object]:
    params = connection.get_connection_params()
    return {k: v for k, v in params.items() if k in {"dbname", "user", "password", "host", "port"}}


def test_readyz_stays_ready_without_a_worker_and_reports_it(client, add_messages):
    """Web processes serve while the worker is down: a load balancer must keep them in rotation."""
    add_messages("alice", "s1", [{"role": "user", "content": "I like green tea."}])
    Message.objects.update(embedding=None)  # the worker died before embedding it
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now() - timedelta(hours=1))

    response = client.get("/readyz", HTTP_HOST="localhost")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["status"], body["failed"], body["degraded"]) == ("ready", [], ["worker"])
    assert body["checks"]["worker"]["ok"] is False
    assert body["checks"]["worker"]["sweep_overdue_seconds"] >= 3600 - 5
    assert body["checks"]["embedding_backlog"] == {"ok": True, "messages": 1}


def test_metrics_show_a_stopped_worker(client, settings):
    """What to alert on when the worker stops, since /readyz stays ready."""
    settings.METRICS_TOKEN = "s3cret"
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now() + timedelta(minutes=1))

    def overdue() -> float:
        response = client.get("/metrics", HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer s3cret")
        return _gauge(response.content.decode(), "memory_worker_sweep_overdue_seconds")

    assert overdue() == 0
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now() - timedelta(hours=1))
    assert 3600 - 5 <= overdue() <= 3600 + 5


def test_readyz_fails_when_a_migration_is_not_applied(client):
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now())
    latest = MigrationRecorder.Migration.objects.filter(app="memories").latest("id")
    latest.delete()

    response = client.get("/readyz", HTTP_HOST="localhost")

    assert response.status_code == 503
    body = response.json()
    assert (body["status"], body["failed"]) == ("not ready", ["migrations"])
    assert body["checks"]["migrations"]["pending"] == [f"memories.{latest.name}"]


def test_readyz_fails_when_the_embedding_backend_fails(client, settings):
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now())
    settings.EMBEDDING_BACKEND = "tests.ops.test_health_and_metrics.BrokenEmbedder"
    response = client.get("/readyz", HTTP_HOST="localhost")
    assert response.status_code == 503
    body = response.json()
    assert (body["status"], body["failed"]) == ("not ready", ["embedding_backend"])
    assert "model server down" in body["checks"]["embedding_backend"]["error"]


class BrokenEmbedder:
    model_name = "broken"
    dimensions = 384

    def embed(self, texts):
        raise RuntimeError("model server down")


def test_readyz_stays_ready_when_a_remote_embedding_server_does_not_answer(client, settings, worker_connected):
    Schedule.objects.filter(name=SWEEP_NAME).update(next_run=timezone.now())
    settings.EMBEDDING_BACKEND = "tests.ops.test_health_and_metrics.UnreachableEmbedder"
    response = client.get("/readyz", HTTP_HOST="localhost")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["failed"], body["degraded"]) == ("ready", [], ["embedding_backend"])
    assert "connection refused" in body["checks"]["embedding_backend"]["error"]


class UnreachableEmbedder(BrokenEmbedder):
    def embed(self, texts):
        raise ModelBackendError("MODEL_BACKEND_UNAVAILABLE", "embedding server: connection refused")


def test_metrics_show_operation_latency_stages_and_backlog(client, add_messages, search, settings):
    settings.METRICS_TOKEN = "s3cret"
    add_messages("alice", "s1", [{"role": "user", "content": "I like green tea."}])
    search(userId="alice", query="What do I drink?")
    Message.objects.update(embedding=None)  # as if the worker had not run yet

    response = client.get("/metrics", HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer s3cret")

    assert response.status_code == 200
    text = response.content.decode()
    assert 'memory_graphql_request_seconds_count{field="search"}' in text
    assert 'memory_search_stage_seconds_count{stage="retrieve"}' in text
    assert 'memory_model_calls_total{kind="embed",outcome="success"}' in text
    assert "memory_embedding_backlog_messages 1.0" in text
    assert "memory_task_queue_depth" in text


def test_metrics_need_the_token(client, settings):
    assert client.get("/metrics", HTTP_HOST="localhost", REMOTE_ADDR="127.0.0.1").status_code == 403
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics", HTTP_HOST="localhost", REMOTE_ADDR="127.0.0.1").status_code == 403
    wrong = client.get("/metrics", HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer guess")
    assert wrong.status_code == 403
    allowed = client.get("/metrics", HTTP_HOST="localhost", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer s3cret")
    assert allowed.status_code == 200


def test_metric_labels_are_only_the_schemas_fields(client, gql, settings):
    settings.METRICS_TOKEN = "s3cret"
    gql("query { ...Attacker } fragment Attacker on Query { __typename }")
    text = client.get("/metrics", HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer s3cret").content.decode()
    assert "Attacker" not in text
    assert 'memory_graphql_request_seconds_count{field="other"}' in text


def _gauge(text: str, name: str) -> float:
    (value,) = re.findall(rf"^{name} (\S+)$", text, flags=re.MULTILINE)
    return float(value)


CREATE_SUMMARIES = """
mutation($u: String!) { createSummaries(userId: $u) { ... on QueuedSummariesResult { queuedSessionIds } } }
"""


def test_summary_backlog_follows_each_summarys_watermark(client, add_messages, gql, settings):
    """A summary covers its session up to a message; a newer message puts the session back in the backlog,
    in the API's list and in the metrics alike."""
    settings.METRICS_TOKEN = "s3cret"
    settings.SUMMARY_IDLE_MINUTES = 30
    add_messages("alice", "s1", [{"role": "user", "content": "I like green tea."}])
    add_messages("bob", "s1", [{"role": "user", "content": "I play chess."}])
    assert gql(CREATE_SUMMARIES, {"u": "alice"})["data"]["createSummaries"]["queuedSessionIds"] == ["s1"]
    Session.objects.filter(user__external_id="bob").update(updated_at=timezone.now() - timedelta(hours=1))

    def scrape() -> str:
        return client.get("/metrics", HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer s3cret").content.decode()

    def listed() -> list[tuple[str, str]]:
        pending = gql(BACKLOG)["data"]["backlog"]["sessionsWaitingForSummary"]
        return [(p["userId"], p["sessionId"]) for p in pending]

    assert listed() == [("bob", "s1")]
    text = scrape()
    assert _gauge(text, "memory_summary_backlog_sessions") == 1
    assert 1800 - 5 <= _gauge(text, "memory_summary_lag_seconds") <= 1800 + 5  # bob's: due 30 minutes ago

    add_messages("alice", "s1", [{"role": "user", "content": "And oolong."}])

    assert listed() == [("bob", "s1"), ("alice", "s1")]  # soonest due first
    assert _gauge(scrape(), "memory_summary_backlog_sessions") == 2


BACKLOG = """
query($u: String) {
  backlog(userId: $u) { messagesWaitingForVector sessionsWaitingForSummary { userId sessionId dueAt } }
}
"""


def test_backlog_per_user_and_overall(add_messages, gql, make_api_key, settings):
    add_messages("alice", "s1", [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}])
    add_messages("bob", "s1", [{"role": "user", "content": "three"}])
    Message.objects.filter(user__external_id="alice").update(embedding=None)

    alice = gql(BACKLOG, {"u": "alice"})["data"]["backlog"]
    assert alice["messagesWaitingForVector"] == 2
    (pending,) = alice["sessionsWaitingForSummary"]
    assert (pending["userId"], pending["sessionId"]) == ("alice", "s1")

    overall = gql(BACKLOG)["data"]["backlog"]
    assert overall["messagesWaitingForVector"] == 2
    assert {(p["userId"], p["sessionId"]) for p in overall["sessionsWaitingForSummary"]} == {
        ("alice", "s1"),
        ("bob", "s1"),
    }

    scoped = gql(BACKLOG, key=make_api_key("alice"))
    assert scoped["errors"][0]["extensions"]["code"] == "FORBIDDEN"


PROGRESS = """
query($u: String) {
  backlog(userId: $u) {
    messagesWaitingForVector messagesWaitingForFacts allProcessed sessionsWaitingForSummary { sessionId dueAt }
  }
}
"""


def test_backlog_counts_user_turns_waiting_for_facts_until_all_is_processed(add_messages, gql, monkeypatch):
    monkeypatch.setattr(Conf, "SYNC", False)  # no worker running: the tasks wait in the queue
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "I moved to Osaka last month."},
            {"role": "assistant", "content": "How exciting!"},
            {"role": "user", "content": "I work as a nurse there."},
        ],
    )
    waiting = gql(PROGRESS, {"u": "alice"})["data"]["backlog"]
    assert (waiting["messagesWaitingForFacts"], waiting["allProcessed"]) == (2, False)  # the user's two turns

    monkeypatch.setattr(Conf, "SYNC", True)  # the worker: it embeds and reads the turns, then summarises
    tasks.embed_rows("message", list(Message.objects.values_list("pk", flat=True)))
    gql(CREATE_SUMMARIES, {"u": "alice"})

    assert gql(PROGRESS, {"u": "alice"})["data"]["backlog"] == {
        "messagesWaitingForVector": 0,
        "messagesWaitingForFacts": 0,
        "allProcessed": True,
        "sessionsWaitingForSummary": [],
    }
    monkeypatch.setattr(Conf, "SYNC", False)
    add_messages("alice", "s1", [{"role": "user", "content": "I also took up tennis."}])
    again = gql(PROGRESS, {"u": "alice"})["data"]["backlog"]
    assert (again["messagesWaitingForFacts"], again["allProcessed"]) == (1, False)
    assert gql(PROGRESS, {"u": "bob"})["data"]["backlog"]["allProcessed"] is True


def test_create_summaries_makes_the_summary_due_now(client, add_messages, gql, trusted_key, settings):
    settings.SUMMARY_IDLE_MINUTES = 30
    add_messages("alice", "s1", [{"role": "user", "content": "I like green tea."}])
    (pending,) = gql(PROGRESS, {"u": "alice"})["data"]["backlog"]["sessionsWaitingForSummary"]
    assert _seconds_from_now(pending["dueAt"]) == pytest.approx(1800, abs=10)

    # Queued, but not run yet (its work runs when the request's transaction commits: never, in this test).
    client.post(
        "/graphql/",
        data=json.dumps({"query": CREATE_SUMMARIES, "variables": {"u": "alice"}}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {trusted_key}",
    )

    (pending,) = gql(PROGRESS, {"u": "alice"})["data"]["backlog"]["sessionsWaitingForSummary"]
    assert _seconds_from_now(pending["dueAt"]) == pytest.approx(0, abs=10)
    gql(CREATE_SUMMARIES, {"u": "alice"})  # and now the worker writes it
    assert gql(PROGRESS, {"u": "alice"})["data"]["backlog"]["sessionsWaitingForSummary"] == []


def _seconds_from_now(moment: str) -> float:
    return (datetime.fromisoformat(moment) - timezone.now()).total_seconds()


def test_json_logs_are_one_object_per_line():
    script = "import django; django.setup(); import logging; logging.getLogger('memories.demo').warning('stored %s', 3)"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings", "LOG_FORMAT": "json"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    line = json.loads(done.stderr.strip().splitlines()[-1])
    assert (line["level"], line["logger"], line["message"]) == ("WARNING", "memories.demo", "stored 3")
