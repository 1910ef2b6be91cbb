"""What one request may cost: expensive fields per document, tokens, the size of an export, and what an
export shows a scoped key; a request Django refuses before any view answers JSON too."""

from __future__ import annotations

import pytest
from django.test import Client

from memories.models import EndUser, Message, Session
from tests.graphql.documents import ADD_KNOWLEDGE, UPDATE_KNOWLEDGE, msg, ok, only_error

pytestmark = pytest.mark.django_db

SEARCH_FIELD = '{alias}: search(input: {{userId: "alice", query: "ramen"}}) {{ __typename }}'
ADD_FIELD = '{alias}: addMessages(userId: "alice", sessionId: "{alias}", messages: $m) {{ __typename }}'


def _searches(count: int) -> str:
    return "query { " + " ".join(SEARCH_FIELD.format(alias=f"s{i}") for i in range(count)) + " }"


def test_aliased_searches_over_the_cost_limit_are_refused_before_any_runs(gql, settings):
    settings.MAX_QUERY_COST = 4
    refused = only_error(gql(_searches(5)))
    assert refused["extensions"] == {"code": "QUERY_TOO_COMPLEX"}
    assert "5 expensive fields (search x5)" in refused["message"]
    assert "MAX_QUERY_COST" in refused["message"]
    assert ok(gql(_searches(4))).keys() == {"s0", "s1", "s2", "s3"}


def test_aliased_add_messages_over_the_limit_store_nothing(gql, settings):
    settings.MAX_QUERY_COST = 2
    document = "mutation($m: [MessageInput!]!) { " + " ".join(ADD_FIELD.format(alias=f"a{i}") for i in range(3)) + " }"
    refused = only_error(gql(document, {"m": [msg("I ate ramen.", "2024-05-01T10:00:00Z")]}))
    assert refused["extensions"] == {"code": "QUERY_TOO_COMPLEX"}
    assert not Message.objects.exists()


def test_fragments_and_nested_contexts_count_as_they_run(gql, settings):
    settings.MAX_QUERY_COST = 2
    # A fragment spread twice runs once (its fields merge); each alias in it runs.
    twice = "query { ...F ...F } fragment F on Query { " + SEARCH_FIELD.format(alias="a") + " }"
    assert ok(gql(twice)).keys() == {"a"}
    three = "query { ...F } fragment F on Query { " + " ".join(SEARCH_FIELD.format(alias=a) for a in "abc") + " }"
    assert only_error(gql(three))["extensions"] == {"code": "QUERY_TOO_COMPLEX"}
    # A turn: addMessages and the context it returns count two.
    turn = """mutation($m: [MessageInput!]!) { addMessages(userId: "alice", sessionId: "s", messages: $m) {
      ... on AddMessagesResult { context { prompt } } } }"""
    assert "addMessages" in ok(gql(turn, {"m": [msg("Any dinner idea?", "2024-05-01T10:00:00Z")]}))
    settings.MAX_QUERY_COST = 1
    assert only_error(gql(turn, {"m": [msg("Any dinner idea?", "2024-05-01T10:00:00Z")]}))["extensions"] == {
        "code": "QUERY_TOO_COMPLEX"
    }


def test_export_user_is_answered_once_per_request(gql):
    EndUser.objects.create(external_id="alice")
    refused = only_error(gql('query { a: exportUser(userId: "alice") b: exportUser(userId: "alice") }'))
    assert refused["extensions"] == {"code": "QUERY_TOO_COMPLEX"}
    assert "exportUser may be asked for once per request" in refused["message"]
    assert "manage.py export_user" in refused["message"]


def test_a_document_of_too_many_tokens_is_refused_before_it_is_parsed_whole(gql, settings):
    settings.MAX_QUERY_TOKENS = 1000
    refused = only_error(gql("{" + " __typename" * 200_000 + " }"))
    assert refused["extensions"] == {"code": "QUERY_TOO_COMPLEX"}
    assert "more than 1000 tokens (MAX_QUERY_TOKENS)" in refused["message"]
    # Without an operation name too: the view reads the document's operations first.
    assert only_error(gql("query A { __typename } " * 400))["extensions"] == {"code": "QUERY_TOO_COMPLEX"}


def test_an_export_over_its_limit_is_refused_with_a_code_and_the_command(gql, add_messages, settings):
    add_messages("alice", "s1", [msg("I ate ramen in Osaka with my sister. " * 20, "2024-05-01T10:00:00Z")])
    document = 'query { exportUser(userId: "alice") }'
    assert ok(gql(document))["exportUser"]["user"]["id"] == "alice"
    settings.EXPORT_MAX_BYTES = 500
    body = gql(document)
    [error] = body["errors"]
    assert error["extensions"] == {"code": "EXPORT_TOO_LARGE"}
    assert "manage.py export_user 'alice' --out FILE" in error["message"]


def test_a_scoped_key_export_names_no_other_key(gql, make_api_key):
    from memories.services.api_keys import api_key_create

    _, backend = api_key_create(name="billing-backend-secret", all_users=True)
    scoped = make_api_key("alice")
    added = ok(gql(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice likes tea."}, key=backend))["addKnowledge"]
    ok(gql(UPDATE_KNOWLEDGE, {"id": added["id"], "userId": "alice", "content": "Alice likes green tea."}, key=scoped))

    document = 'query { exportUser(userId: "alice") }'
    as_scoped = ok(gql(document, key=scoped))["exportUser"]
    reasons = [change["reason"] for change in as_scoped["knowledge"][0]["history"]]
    assert "billing-backend-secret" not in str(as_scoped)
    assert reasons[0] == "another API key"
    assert reasons[1].startswith("api key test (#")  # the scoped key's own change
    as_backend = ok(gql(document, key=backend))["exportUser"]
    assert as_backend["knowledge"][0]["history"][0]["reason"].startswith("api key billing-backend-secret")


def test_a_disallowed_host_is_answered_json():
    response = Client().get("/graphql/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["errors"][0]["extensions"] == {"code": "BAD_REQUEST"}
    assert "ALLOWED_HOSTS" in response.json()["errors"][0]["message"]


def test_search_reads_at_most_the_message_limit_of_a_longer_stored_turn(
    add_messages, search, settings, hashing_embedder
):
    add_messages("alice", "s1", [msg("I ate ramen in Osaka.", "2024-05-01T10:00:00Z")])
    # A turn stored before the limit was lowered (or around the API): longer than MAX_MESSAGE_CHARS.
    Message.objects.filter(session=Session.objects.get()).update(content="I ate ramen in Osaka. " * 50)
    settings.MAX_MESSAGE_CHARS = 100
    hits = search(userId="alice", query="ramen in Osaka")["hits"]
    assert hits
    assert all(len(turn["content"]) <= 100 for hit in hits for turn in hit["turns"])
    assert all(len(hit["content"]) <= 100 for hit in hits)
