"""Deletes racing the worker: ``forgetUser`` while the worker summarises the same user never deadlocks (one
lock order, ``memories.services.user_locks``), the task ends quietly, and a deadlock or serialization
failure that does happen is retried before the client sees ``DATABASE_CONFLICT``."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait

import psycopg
import pytest
from django.db import OperationalError, connection
from django.test import Client

from memories.models import EndUser, KnowledgeStatus, Message, Session, Summary
from memories.services import history
from memories.services.api_keys import api_key_create
from memories.tasks import summarize_session
from tests.factories import KnowledgeFactory
from tests.graphql.documents import msg
from tests.ops.live import database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("hashing_embedder")]

FORGET = 'mutation { forgetUser(userId: "alice") { __typename ... on ForgetUserResult { messages sessions } } }'


def _post(key: str, query: str) -> dict:
    """A GraphQL request from this thread, on its own connection (closed after)."""
    try:
        response = Client().post(
            "/graphql/",
            json.dumps({"query": query}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        return response.json()
    finally:
        connection.close()


def _run(task, *args):
    try:
        return task(*args)
    finally:
        connection.close()


def _waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def test_forget_user_and_the_worker_summarising_that_user_never_deadlock(add_messages, trusted_key, monkeypatch):
    add_messages("alice", "s1", [msg("My sister Sarah lives in Lisbon.", "2024-05-01T09:00:00Z")])
    add_messages("alice", "s2", [msg("I play the cello.", "2024-05-02T09:00:00Z")])
    session = Session.objects.get(external_id="s2").pk
    deleted, go_on = threading.Event(), threading.Event()
    delete_messages = history._delete_messages

    def deleting_then_waiting(messages):  # the forget stops half-way, its messages deleted, its sessions not yet
        count = delete_messages(messages)
        deleted.set()
        assert go_on.wait(30)
        return count

    monkeypatch.setattr(history, "_delete_messages", deleting_then_waiting)
    with ThreadPoolExecutor(2) as threads:
        forgetting = threads.submit(_post, trusted_key, FORGET)
        assert deleted.wait(30)
        summarising = threads.submit(_run, summarize_session, session, True)  # the worker's task, forced
        deadline = time.monotonic() + 30
        while not _waiting_for_a_lock():  # the task waits for the forget (whatever it waits on)
            assert not summarising.done(), summarising.result()
            assert time.monotonic() < deadline, "the task did not wait for the forget"
            time.sleep(0.05)
        go_on.set()
        forgotten = forgetting.result(timeout=60)
        summary = summarising.result(timeout=60)

    assert forgotten == {"data": {"forgetUser": {"__typename": "ForgetUserResult", "messages": 2, "sessions": 2}}}
    assert summary is None  # the user went while it waited: it wrote nothing, and did not fail
    assert not EndUser.objects.exists()
    assert [Session.objects.count(), Message.objects.count(), Summary.objects.count()] == [0, 0, 0]


def test_summaries_of_one_user_share_its_lock(add_messages):
    """A summary takes the user's row shared, as every writer that adds (memories.services.user_locks),
    and locks no more of it: two summaries (or a summary and addMessages) of one user never wait for
    each other there, so they cannot deadlock on it."""
    add_messages("alice", "s1", [msg("I play the cello.", "2024-05-02T09:00:00Z")])
    session = Session.objects.get()
    with ThreadPoolExecutor(1) as threads, psycopg.connect(database_url()) as writer:
        # Another writer of alice's rows, its transaction open: it holds her row shared.
        writer.execute("SELECT 1 FROM memories_enduser WHERE id = %s FOR KEY SHARE", [session.user_id])
        summarising = threads.submit(_run, summarize_session, session.pk, True)
        done, _ = wait([summarising], timeout=20)
        assert done, "the summary waited for the other writer"  # (its transaction ends here, the thread too)
    assert summarising.result() is not None


def _deadlock() -> OperationalError:
    error = OperationalError("deadlock detected")
    error.__cause__ = psycopg.errors.DeadlockDetected("deadlock detected")
    return error


def test_a_deadlock_is_retried_before_the_client_sees_it(add_messages, trusted_key, monkeypatch):
    add_messages("alice", "s1", [msg("I play the cello.", "2024-05-02T09:00:00Z")])
    jobs_forget = history.jobs_forget
    calls = []

    def failing_once(**kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise _deadlock()
        return jobs_forget(**kwargs)

    monkeypatch.setattr(history, "jobs_forget", failing_once)
    assert _post(trusted_key, FORGET)["data"]["forgetUser"] == {
        "__typename": "ForgetUserResult",
        "messages": 1,
        "sessions": 1,
    }
    assert len(calls) == 2
    assert not Message.objects.exists()


def test_a_deadlock_that_persists_is_answered_database_conflict_and_nothing_is_deleted(
    add_messages, trusted_key, monkeypatch
):
    add_messages("alice", "s1", [msg("I play the cello.", "2024-05-02T09:00:00Z")])

    def failing(**kwargs):
        raise _deadlock()

    monkeypatch.setattr(history, "jobs_forget", failing)
    answer = _post(trusted_key, FORGET)
    assert answer["data"] is None
    assert answer["errors"][0]["extensions"] == {"code": "DATABASE_CONFLICT"}
    assert Message.objects.count() == 1


def test_approving_a_fact_waits_for_the_worker_writing_that_users_facts(add_messages):
    """Curation settles slots as the worker does, so it takes the user's locks in the worker's order
    (memories.services.user_locks) before any fact: it waits for the worker's transaction instead of
    locking facts the worker is about to lock."""
    add_messages("alice", "s1", [msg("I play the cello.", "2024-05-02T09:00:00Z")])
    user = EndUser.objects.get(external_id="alice")
    candidate = KnowledgeFactory(user=user, content="Alice lives in Osaka.", status=KnowledgeStatus.CANDIDATE)
    _, curator = api_key_create(name="curator", user_external_ids=["alice"], may_curate=True)
    approve = (
        f'mutation {{ approveKnowledge(id: "{candidate.pk}", userId: "alice") '
        "{ __typename ... on Knowledge { status } } }"
    )
    with ThreadPoolExecutor(1) as threads, psycopg.connect(database_url()) as worker:
        # The worker's transaction writing alice's facts: her row shared, then her facts lock.
        worker.execute("SELECT 1 FROM memories_enduser WHERE id = %s FOR KEY SHARE", [user.pk])
        worker.execute("SELECT pg_advisory_xact_lock(1835363696, %s)", [user.pk])
        approving = threads.submit(_post, curator, approve)
        deadline = time.monotonic() + 30
        while not _waiting_for_a_lock():
            assert not approving.done(), approving.result()
            assert time.monotonic() < deadline, "the approval did not wait for the worker"
            time.sleep(0.05)
        candidate.refresh_from_db()
        assert candidate.status == KnowledgeStatus.CANDIDATE
        worker.commit()
        assert approving.result(timeout=60) == {
            "data": {"approveKnowledge": {"__typename": "Knowledge", "status": "ACTIVE"}}
        }
