"""A search by a key that authenticated lately: its query is embedded while the key is checked.

The GraphQL view starts the embedding before authenticating the request and parsing its
document (``query_embedding_started_early``); the search takes it when its query is that text.
Nothing starts before a request with any other key is checked.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from memories import search as search_module
from memories.graphql import views as views_module
from memories.llm import EmbeddingBatch, ModelBackendError
from memories.models import ApiKey
from memories.search import query_embedding_started_early, search_memories
from memories.services import api_keys as api_keys_module
from memories.services.api_keys import api_key_hash, api_key_revoke
from tests.conftest import ADD_MESSAGES, SEARCH


class _Recording:
    """The configured embedder, recording each query it is asked to embed in ``events``."""

    def __init__(self, inner: Any, events: list[tuple[str, str]], *, fail: bool = False) -> None:
        self.inner, self.events, self.fail = inner, events, fail
        self.model_name, self.dimensions = inner.model_name, inner.dimensions

    def embed(self, texts: list[str]) -> EmbeddingBatch:
        return self.embed_later(texts).result()

    def embed_later(self, texts: list[str]) -> Future[EmbeddingBatch]:
        self.events.append(("embed", texts[0]))
        if self.fail:
            raise ModelBackendError("MODEL_BACKEND_UNAVAILABLE", "The embedding model's process stopped.")
        return self.inner.embed_later(texts)


@pytest.fixture
def events(monkeypatch) -> list[tuple[str, str]]:  # noqa: ANN001
    """What happened, in order: ``("embed", query)`` and ``("authenticate", "")``."""
    recorded: list[tuple[str, str]] = []
    embedder = search_module.get_embedder()
    monkeypatch.setattr(search_module, "get_embedder", lambda: _Recording(embedder, recorded))
    authenticate = views_module.api_key_authenticate

    def recording_authenticate(*, raw_key: str) -> ApiKey | None:
        recorded.append(("authenticate", ""))
        return authenticate(raw_key=raw_key)

    monkeypatch.setattr(views_module, "api_key_authenticate", recording_authenticate)
    return recorded


def _search(client, key: str, query: str, status: int = 200, user: str = "alice") -> dict[str, Any]:  # noqa: ANN001
    response = client.post(
        "/graphql/",
        data=json.dumps({"query": SEARCH, "variables": {"input": {"userId": user, "query": query}}}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert response.status_code == status, response.content
    return response.json()


@pytest.fixture
def alice(add_messages) -> None:  # noqa: ANN001
    message = {"role": "user", "content": "My favourite food is ramen.", "createdAt": "2024-05-01T10:00:00Z"}
    add_messages("alice", "s1", [message])


def test_a_key_that_authenticated_lately_has_its_query_embedded_before_it_is_checked(
    alice, client, make_api_key, events
):
    key = make_api_key("alice")
    first = _search(client, key, "What is my favourite food?")
    assert events == [("authenticate", ""), ("embed", "What is my favourite food?")]
    events.clear()
    second = _search(client, key, "What is my favourite food?")
    # Embedded once, before the key was checked, and the search found what it found without it.
    assert events == [("embed", "What is my favourite food?"), ("authenticate", "")]
    assert second == first
    assert "ramen" in second["data"]["search"]["hits"][0]["content"]


def test_nothing_starts_before_an_unknown_key_is_checked(alice, client, events):
    body = _search(client, "mem_not-a-key", "What is my favourite food?", status=401)
    assert body["data"] is None
    assert events == [("authenticate", "")]


def test_a_key_revoked_elsewhere_gets_401_even_when_its_query_was_embedded_early(alice, client, make_api_key, events):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    # Revoked by another process (the admin's): this one still counts the key as good lately.
    ApiKey.objects.filter(key_hash=api_key_hash(key)).update(revoked_at=timezone.now())
    events.clear()
    body = _search(client, key, "What is my favourite food?", status=401)
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert events == [("embed", "What is my favourite food?"), ("authenticate", "")]
    # Refused once, it starts nothing early any more.
    events.clear()
    _search(client, key, "What is my favourite food?", status=401)
    assert events == [("authenticate", "")]


def test_a_key_revoked_in_this_process_starts_nothing_early(alice, client, make_api_key, events):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    api_key_revoke(key_id=ApiKey.objects.get(key_hash=api_key_hash(key)).pk)
    events.clear()
    _search(client, key, "What is my favourite food?", status=401)
    assert events == [("authenticate", "")]


def test_a_key_revoked_in_the_admin_starts_nothing_early(alice, client, make_api_key, events, admin_client):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    api_key = ApiKey.objects.get(key_hash=api_key_hash(key))
    response = admin_client.post(
        reverse("admin:memories_apikey_changelist"), {"action": "revoke", "_selected_action": [api_key.pk]}
    )
    assert response.status_code == 302
    events.clear()
    _search(client, key, "What is my favourite food?", status=401)
    assert events == [("authenticate", "")]


def test_a_key_not_used_for_a_minute_starts_nothing_early(alice, client, make_api_key, events, monkeypatch):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    later = time.monotonic() + 61
    monkeypatch.setattr(api_keys_module.time, "monotonic", lambda: later)
    events.clear()
    _search(client, key, "What is my favourite food?")
    assert events == [("authenticate", ""), ("embed", "What is my favourite food?")]


@pytest.mark.parametrize(
    "body",
    [
        "[]",
        "{not json",
        "[" * 100_000 + "]" * 100_000,
        '{"query": "query { search }", "variables": null, "input": 1}',
        '{"query": "query { search }", "variables": {"input": "What is my favourite food?"}}',
        '{"query": "query { search }", "variables": {"input": {"query": 7}}}',
        '{"query": 7, "variables": {"input": {"query": "What is my favourite food?"}}}',
    ],
    ids=["list", "invalid", "deeply nested", "no variables", "input not an object", "query not text", "no document"],
)
def test_odd_bodies_from_a_good_key_start_nothing_and_get_graphqls_own_answer(
    body, alice, client, make_api_key, events
):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    events.clear()
    response = client.post("/graphql/", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code in (200, 400)  # Strawberry's answer, not a server error
    assert events == [("authenticate", "")]


def test_an_early_embedding_nobody_took_is_given_up_when_the_request_ends(alice, client, make_api_key, monkeypatch):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    started: list[Future] = []
    embedder = search_module.get_embedder()

    class Queued:
        model_name, dimensions = embedder.model_name, embedder.dimensions

        def embed_later(self, texts: list[str]) -> Future[EmbeddingBatch]:
            started.append(Future())  # queued, not running: it can still be cancelled
            return started[-1]

    monkeypatch.setattr(search_module, "get_embedder", Queued)
    # bob is out of the key's scope: the search is refused before it takes the embedding.
    body = _search(client, key, "What is bob's favourite food?", user="bob")
    assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert len(started) == 1
    assert started[0].cancelled()
    assert search_module._EARLY_EMBEDDING.get() is None


def test_other_requests_start_no_embedding(alice, client, make_api_key, events, gql):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    events.clear()
    # A document that does not call search, whose body holds "search" and an input.query all the same.
    message = {"role": "user", "content": "I search for ramen shops.", "createdAt": "2024-05-02T10:00:00Z"}
    variables = {"userId": "alice", "sessionId": "s2", "channel": "web", "messages": [message]}
    body = gql(ADD_MESSAGES, {**variables, "input": {"query": "What is my favourite food?"}}, key=key)
    assert body["data"]["addMessages"]["__typename"] == "AddMessagesResult"
    assert ("embed", "What is my favourite food?") not in events
    assert events[0] == ("authenticate", "")


def test_an_embedding_started_for_another_text_is_given_up_not_used(alice, events, monkeypatch):
    given_up: list[str] = []
    recording = search_module.get_embedder()

    class Cancelling:
        model_name, dimensions = recording.model_name, recording.dimensions

        def embed_later(self, texts: list[str]) -> Future[EmbeddingBatch]:
            started = recording.embed_later(texts)
            original_cancel = started.cancel
            started.cancel = lambda: given_up.append(texts[0]) or original_cancel()
            return started

    monkeypatch.setattr(search_module, "get_embedder", Cancelling)
    with query_embedding_started_early(query="What do I eat?"):
        result = search_memories(user_external_ids=["alice"], query="What is my favourite food?", answer=False)
        assert given_up == ["What do I eat?"]  # before the search's own embedding was read
    assert events == [("embed", "What do I eat?"), ("embed", "What is my favourite food?")]
    assert "ramen" in result.hits[0].content


def test_a_backend_that_cannot_start_leaves_the_search_to_report_it(alice, client, make_api_key, monkeypatch):
    key = make_api_key("alice")
    _search(client, key, "What is my favourite food?")
    events: list[tuple[str, str]] = []
    down = _Recording(search_module.get_embedder(), events, fail=True)
    monkeypatch.setattr(search_module, "get_embedder", lambda: down)
    body = _search(client, key, "What is my favourite food?")
    assert body["errors"][0]["extensions"]["code"] == "MODEL_BACKEND_UNAVAILABLE"
    assert events == [("embed", "What is my favourite food?")] * 2  # early, then by the search itself
