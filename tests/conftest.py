"""Shared fixtures. Tests run on the real PostgreSQL + pgvector (a throwaway test database)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from memories.models import Summary
from memories.services.api_keys import api_key_create
from memoryproject.embedded_db import ensure_embedded_database
from tests.graphql.documents import CREATE_SUMMARIES, ok

logging.getLogger("django-q").setLevel(logging.WARNING)

# Fixture modules every test may use: ``fake_openai``, ``unreachable_openai_url``; ``exported``, ``alice_memory``.
pytest_plugins = ["tests.fake_openai", "tests.export_fixtures"]


def pytest_configure(config: pytest.Config) -> None:
    """Start (or join) the embedded PostgreSQL unless DATABASE_URL names a server; settings start nothing."""
    ensure_embedded_database()


GraphQL = Callable[..., dict[str, Any]]


@pytest.fixture
def make_api_key(db) -> Callable[..., str]:
    """Create an API key and return its secret: ``make_api_key("alice")`` or ``make_api_key(all_users=True)``."""

    def make(*user_ids: str, all_users: bool = False) -> str:
        _, raw_key = api_key_create(name="test", user_external_ids=list(user_ids), all_users=all_users)
        return raw_key

    return make


@pytest.fixture
def trusted_key(make_api_key) -> str:
    """An all-users key (a trusted backend), used by ``gql`` unless a test passes another."""
    return make_api_key(all_users=True)


@pytest.fixture
def gql(client, django_capture_on_commit_callbacks, trusted_key) -> GraphQL:
    """POST a GraphQL document to /graphql/ over HTTP and return the decoded JSON body.

    Sends ``key`` (default: an all-users key) as ``Authorization: Bearer``. Background tasks
    queued by the request run (django-q2 is in sync mode in tests) once the request's
    transaction "commits", as they would in the worker.
    """

    def run(
        query: str, variables: dict[str, Any] | None = None, *, key: str | None = None, status: int = 200
    ) -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/graphql/",
                data=json.dumps({"query": query, "variables": variables or {}}),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {key or trusted_key}",
            )
        assert response.status_code == status, response.content
        return response.json()

    return run


ADD_MESSAGES = """
mutation Add($userId: String!, $sessionId: String!, $channel: String!, $messages: [MessageInput!]!) {
  addMessages(userId: $userId, sessionId: $sessionId, channel: $channel, messages: $messages) {
    __typename
    ... on AddMessagesResult {
      skipped
      session { sessionId userId channel firstMessageAt lastMessageAt }
      messages { id role content createdAt metadata sessionId externalId }
    }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""

SEARCH = """
query Search($input: SearchInput!) {
  search(input: $input) {
    __typename
    ... on SearchResult {
      answer answerMode found retrievedData stages
      hits {
        kind id score relevance content userId sessionId conversationTime speaker text cited foundBy
        turns { id role speaker content createdAt isHit excerpt }
      }
      usage { promptTokens completionTokens embeddingTokens }
    }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""


@pytest.fixture
def gql_ok(gql: GraphQL) -> GraphQL:
    """``gql`` that asserts there are no errors and returns ``data``."""

    def run(query: str, variables: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        return ok(gql(query, variables, **kwargs))

    return run


@pytest.fixture
def summarize(gql_ok: GraphQL) -> Callable[[str], list[str]]:
    """Summarise every session of a user (``createSummaries``; the worker runs in the request)."""

    def run(user_id: str) -> list[str]:
        return gql_ok(CREATE_SUMMARIES, {"userId": user_id})["createSummaries"]["queuedSessionIds"]

    return run


@pytest.fixture
def add_messages(gql: GraphQL) -> Callable[..., dict[str, Any]]:
    """Call ``addMessages`` over GraphQL; returns the ``addMessages`` payload."""

    def run(user_id: str, session_id: str, messages: list[dict[str, Any]], channel: str = "web") -> dict[str, Any]:
        body = gql(
            ADD_MESSAGES,
            {"userId": user_id, "sessionId": session_id, "channel": channel, "messages": messages},
        )
        assert "errors" not in body, body
        return body["data"]["addMessages"]

    return run


@pytest.fixture
def search(gql: GraphQL) -> Callable[..., dict[str, Any]]:
    """Call ``search`` over GraphQL with the given input fields; returns the ``search`` payload."""

    def run(**input_fields: Any) -> dict[str, Any]:
        body = gql(SEARCH, {"input": input_fields})
        assert "errors" not in body, body
        return body["data"]["search"]

    return run


@pytest.fixture
def hashing_embedder(settings) -> None:
    """Embed with ``tests.fakes.HashingEmbedder`` (instant, deterministic) where ranking is not under test."""
    settings.EMBEDDING_BACKEND = "tests.fakes.HashingEmbedder"
    settings.EMBEDDING_MODEL = "hashing"


@pytest.fixture
def openai_settings(settings, fake_openai):
    """Both backends (``openai``) on the ``fake_openai`` server, with no retries (fast failures)."""
    settings.EMBEDDING_BACKEND = "openai"
    settings.CHAT_BACKEND = "openai"
    settings.OPENAI_API_KEY = "test"
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.OPENAI_MAX_RETRIES = 0
    settings.OPENAI_TIMEOUT_SECONDS = 5.0
    settings.OPENAI_EMBEDDING_DIMENSIONS = None
    settings.EMBEDDING_MODEL = "text-embedding-3-small"
    settings.CHAT_MODEL = "gpt-4o-mini"
    return settings


@pytest.fixture
def openai_chat(settings, fake_openai):
    """Only the chat model on ``fake_openai`` (``CHAT_BACKEND = "openai"``, no retries); returns the server."""
    settings.CHAT_BACKEND = "openai"
    settings.OPENAI_API_KEY = "test"
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.OPENAI_MAX_RETRIES = 0
    return fake_openai


@pytest.fixture
def alice(add_messages, gql) -> dict[str, str]:
    """alice: two sessions (s1 summarised), a fact and a diary entry; plus shared knowledge and bob's s1.

    Returns the ids of alice's fact and of the shared one.
    """
    for user_id, session_id, content, at in [
        ("alice", "s1", "I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
        ("alice", "s2", "I play the cello.", "2024-05-02T10:00:00Z"),  # s1 is summarised now
        ("bob", "s1", "Bob adopted a dog named Rex.", "2024-05-01T10:00:00Z"),
    ]:
        add_messages(user_id, session_id, [{"role": "user", "content": content, "createdAt": at}])
    add_knowledge = (
        "mutation A($userId: String, $content: String!) "
        "{ addKnowledge(userId: $userId, content: $content) { ... on Knowledge { id } } }"
    )
    fact = gql(add_knowledge, {"userId": "alice", "content": "Alice is allergic to peanuts."})
    shared = gql(add_knowledge, {"content": "The support desk opens at 9am."})
    diary = gql(
        'mutation { upsertDiary(userId: "alice", diaryDate: "2024-05-01", content: "Went to Osaka.") { __typename } }'
    )
    for body in (fact, shared, diary):
        assert "errors" not in body, body
    assert Summary.objects.filter(user__external_id="alice").count() == 1
    return {"knowledge": fact["data"]["addKnowledge"]["id"], "shared": shared["data"]["addKnowledge"]["id"]}


@pytest.fixture
def staff_client(django_user_model) -> Client:
    """A staff member logged into the admin, with CSRF checks on (as in a browser)."""
    staff = django_user_model.objects.create_user("staff", password="secret", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    return client
