"""A database that cannot be reached, or whose schema changed under the service, as GraphQL clients
see it: HTTP 503 JSON ``DATABASE_UNAVAILABLE`` with ``Retry-After``, and a query run once more on new
connections after a schema change. The real faults (a killed server, a restore) are in tests/ops."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, OperationalError

from memories.graphql import mutations, queries
from tests.graphql.documents import msg

pytestmark = pytest.mark.django_db

BACKLOG = "{ backlog { messagesWaitingForVector } }"
ADD = """
mutation($messages: [MessageInput!]!) {
  addMessages(userId: "alice", sessionId: "s1", messages: $messages) { __typename }
}"""
STALE_PLAN = "cached plan must not change result type"


@pytest.fixture
def reconnects(monkeypatch) -> list[None]:
    """The view's connection replacements, counted (a real one would close the test's transaction)."""
    calls: list[None] = []
    monkeypatch.setattr("memories.graphql.views.database_reconnect", lambda: calls.append(None))
    return calls


def _failing(real, errors: list[Exception]):
    """``real``, raising the next of ``errors`` first, once each."""

    def run(*args, **kwargs):
        if errors:
            raise errors.pop(0)
        return real(*args, **kwargs)

    return run


def test_a_query_while_the_database_is_unreachable_is_a_json_503_with_retry_after(client, trusted_key, monkeypatch):
    monkeypatch.setattr(queries, "backlog_get", _failing(queries.backlog_get, [OperationalError("connection refused")]))
    response = client.post(
        "/graphql/", {"query": BACKLOG}, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {trusted_key}"
    )
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == "5"
    assert [e["extensions"]["code"] for e in response.json()["errors"]] == ["DATABASE_UNAVAILABLE"]


def test_a_query_after_a_schema_change_runs_again_on_new_connections(gql, monkeypatch, reconnects):
    monkeypatch.setattr(queries, "backlog_get", _failing(queries.backlog_get, [DatabaseError(STALE_PLAN)]))
    assert gql(BACKLOG) == {"data": {"backlog": {"messagesWaitingForVector": 0}}}
    assert len(reconnects) == 1


def test_a_mutation_after_a_schema_change_is_not_run_twice(gql, monkeypatch, reconnects):
    calls = []
    real = _failing(mutations.messages_add, [DatabaseError(STALE_PLAN)])
    monkeypatch.setattr(mutations, "messages_add", lambda **kw: calls.append(None) or real(**kw))
    messages = [msg("I love ramen", "2024-05-01T09:00:00Z")]
    body = gql(ADD, {"messages": messages}, status=503)
    assert [e["extensions"]["code"] for e in body["errors"]] == ["DATABASE_UNAVAILABLE"]
    assert (len(calls), len(reconnects)) == (1, 1)
    assert gql(ADD, {"messages": messages})["data"]["addMessages"]["__typename"] == "AddMessagesResult"  # the retry
