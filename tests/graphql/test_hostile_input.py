"""Hostile and malformed requests over HTTP: every one gets a JSON answer with a 4xx or a stable
error code, never a server error; authorization is checked field by field; knowledge and diary content have
length caps."""

from __future__ import annotations

import io
import json
import logging
import wsgiref.util
from typing import Any

import pytest

from memories.models import Knowledge, Message
from memoryproject.wsgi import application

pytestmark = pytest.mark.django_db


@pytest.fixture
def raw_post(client, trusted_key):
    """POST raw bytes to /graphql/ with an all-users key; returns the response."""

    def post(body: bytes | str, *, content_type: str = "application/json", **extra: Any):
        return client.post(
            "/graphql/", data=body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {trusted_key}", **extra
        )

    return post


def _code(body: dict[str, Any]) -> str:
    return body["errors"][0]["extensions"]["code"]


# --- request bodies --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'"x"', "must be a JSON object"),
        (b"5", "must be a JSON object"),
        (b"null", "must be a JSON object"),
        (b"true", "must be a JSON object"),
        (b'["x"]', "must be a JSON object"),
        (b"\xff\xfe{", "not UTF-8"),
        (b'{"query": "{ __typename }"', "Unable to parse request body as JSON"),
        (b'{"query": "{ __typename }", "variables": {"n": ' + b"1" * 5000 + b"}}", "number"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_a_body_that_is_not_a_json_object_gets_a_json_400(raw_post, body, says):
    response = raw_post(body)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    answer = response.json()
    assert answer["data"] is None
    assert _code(answer) == "BAD_REQUEST"
    assert says in answer["errors"][0]["message"]


def test_two_operations_without_an_operation_name_get_400(raw_post):
    document = 'query A { sessions(userId: "u") { totalCount } } query B { sessions(userId: "v") { totalCount } }'
    response = raw_post(json.dumps({"query": document}))
    assert response.status_code == 400
    assert "operationName" in response.json()["errors"][0]["message"]
    chosen = raw_post(json.dumps({"query": document, "operationName": "B"}))
    assert chosen.status_code == 200
    assert chosen.json() == {"data": {"sessions": {"totalCount": 0}}}


@pytest.mark.django_db(transaction=True)  # the WSGI application closes its connection as a request ends
@pytest.mark.parametrize("size", ["at", "over"])
def test_a_chunked_body_over_the_limit_gets_413_and_one_under_it_is_read(trusted_key, settings, size):
    settings.MAX_REQUEST_BYTES = 4096
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    document = json.dumps({"query": '{ sessions(userId: "u") { totalCount } }'})
    body = document + " " * (4096 - len(document) + (1 if size == "over" else 0))
    # What a de-chunking WSGI server (gunicorn) passes on: no Content-Length, and the input ends.
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/graphql/",
        "CONTENT_TYPE": "application/json",
        "HTTP_AUTHORIZATION": f"Bearer {trusted_key}",
        "wsgi.input": io.BytesIO(body.encode()),
        "wsgi.input_terminated": True,
    }
    wsgiref.util.setup_testing_defaults(environ)
    status: list[str] = []
    answer = json.loads(b"".join(application(environ, lambda s, headers: status.append(s))))
    if size == "over":
        assert status[0].startswith("413 ")
        assert _code(answer) == "PAYLOAD_TOO_LARGE"
    else:
        assert status[0].startswith("200 ")
        assert answer == {"data": {"sessions": {"totalCount": 0}}}


# --- coercion errors -------------------------------------------------------------------------

ADD_AT = """
mutation($at: DateTime) {
  addMessages(userId: "u", sessionId: "s", messages: [{role: "user", content: "hi", createdAt: $at}]) {
    __typename
    ... on OperationInfo { messages { field message } }
  }
}
"""
ADD_WITH_METADATA = """
mutation($metadata: JSON) {
  addMessages(userId: "u", sessionId: "s", messages: [{role: "user", content: "hi", metadata: $metadata}]) {
    __typename
    ... on OperationInfo { messages { field message } }
  }
}
"""
SEARCH_OFFSET = """
query($offset: Float) {
  search(input: {userId: "u", query: "x", utcOffsetHours: $offset}) { __typename }
}
"""
DIARIES_ON = 'query($day: Date) { diaries(userId: "u", diaryDate: $day) { totalCount } }'


@pytest.mark.parametrize(
    ("document", "variables", "named"),
    [
        (ADD_AT, {"at": "not a date"}, "$at"),
        (ADD_AT, {"at": "2024-02-30T10:00:00Z"}, "$at"),
        (ADD_AT, {"at": "2024-01-01T00:00:00+25:00"}, "$at"),
        (ADD_AT, {"at": "0000-01-01T00:00:00Z"}, "$at"),
        (ADD_AT, {"at": "10000-01-01T00:00:00Z"}, "$at"),
        (DIARIES_ON, {"day": "2024-02-30"}, "$day"),
        (DIARIES_ON, {"day": "yesterday"}, "$day"),
    ],
)
def test_an_unparsable_date_is_bad_user_input_naming_the_variable(gql, document, variables, named):
    answer = gql(document, variables)
    assert answer["data"] is None
    assert _code(answer) == "BAD_USER_INPUT"
    assert named in answer["errors"][0]["message"]


@pytest.mark.parametrize(
    ("document", "code", "says"),
    [
        ("{ history(userId: ", "GRAPHQL_PARSE_FAILED", "Syntax Error"),
        ('{ history(userId: "u") { results { nope } } }', "GRAPHQL_VALIDATION_FAILED", "nope"),
        ('{ diaries(userId: "u", diaryDate: "2024-02-30") { totalCount } }', "GRAPHQL_VALIDATION_FAILED", "2024-02-30"),
    ],
)
def test_a_document_that_does_not_parse_or_validate_has_a_code(gql, document, code, says):
    answer = gql(document)
    assert _code(answer) == code
    assert says in answer["errors"][0]["message"]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_number_that_is_not_finite_is_bad_user_input(raw_post, number):
    body = f'{{"query": {json.dumps(SEARCH_OFFSET)}, "variables": {{"offset": {number}}}}}'
    answer = raw_post(body).json()
    assert _code(answer) == "BAD_USER_INPUT"
    assert "$offset" in answer["errors"][0]["message"]


def test_an_integer_literal_over_4300_digits_is_bad_user_input_naming_the_argument(gql):
    answer = gql('{ sessions(userId: "u", pagination: {limit: %s}) { totalCount } }' % ("1" * 5000))
    assert _code(answer) == "BAD_USER_INPUT"
    assert "Int" in answer["errors"][0]["message"]
    assert len(answer["errors"][0]["message"]) <= 500


def test_a_created_at_overflowing_in_utc_is_refused_naming_it_and_stores_nothing(gql):
    answer = gql(ADD_AT, {"at": "9999-12-31T23:00:00-05:00"})
    result = answer["data"]["addMessages"]
    assert result["__typename"] == "OperationInfo"
    assert result["messages"][0]["field"] == "messages.0.createdAt"
    assert "out of range" in result["messages"][0]["message"]
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    "metadata",
    [{"\ud800": "key"}, {"value": "lone \udc00 surrogate"}, {"list": ["ok", "\ud83d"]}],
    ids=["key", "value", "in-a-list"],
)
def test_a_lone_surrogate_in_metadata_is_refused_naming_metadata(raw_post, metadata):
    body = json.dumps({"query": ADD_WITH_METADATA, "variables": {"metadata": metadata}})  # \\ud800 escapes
    answer = raw_post(body).json()
    result = answer["data"]["addMessages"]
    assert result["__typename"] == "OperationInfo"
    assert result["messages"][0]["field"] == "messages.0.metadata"
    assert "surrogate" in result["messages"][0]["message"]
    assert not Message.objects.exists()


def test_an_emoji_in_metadata_is_stored(gql):
    answer = gql(ADD_WITH_METADATA, {"metadata": {"mood": "\U0001f600"}})
    assert answer["data"]["addMessages"]["__typename"] == "AddMessagesResult"
    assert Message.objects.get().metadata == {"mood": "\U0001f600"}


@pytest.mark.parametrize("leaf", ["1", '"\\u0000"', '"\\ud800"'], ids=["number", "nul", "surrogate"])
def test_metadata_nested_500_deep_is_never_a_server_error(raw_post, leaf):
    nested = '{"a":' * 500 + leaf + "}" * 500
    body = f'{{"query": {json.dumps(ADD_WITH_METADATA)}, "variables": {{"metadata": {nested}}}}}'
    response = raw_post(body)
    assert response.status_code == 200
    answer = response.json()
    assert "INTERNAL_ERROR" not in json.dumps(answer)


def test_a_client_error_is_logged_as_one_line_without_a_traceback(gql, caplog):
    with caplog.at_level(logging.INFO):
        gql(ADD_AT, {"at": "2024-02-30T10:00:00Z"})
    records = [r for r in caplog.records if r.name.startswith(("memories", "strawberry"))]
    assert records
    assert all(r.levelno <= logging.WARNING and r.exc_info is None for r in records)
    assert all("\n" not in r.getMessage() for r in records)


def test_a_server_error_is_logged_with_its_traceback(gql, caplog, monkeypatch):
    from memories import selectors

    def broken(**kwargs: object) -> None:
        raise RuntimeError("the database fell over")

    monkeypatch.setattr(selectors, "session_list", broken)
    with caplog.at_level(logging.INFO):
        answer = gql('{ sessions(userId: "u") { totalCount } }')
    assert _code(answer) == "INTERNAL_ERROR"
    assert "fell over" not in json.dumps(answer)
    assert any(r.levelno == logging.ERROR and r.exc_info for r in caplog.records)


# --- authorization, field by field ----------------------------------------------------------

ADD_KNOWLEDGE_TWICE = """
mutation($allowed: String!, $forbidden: String!) {
  first: addKnowledge(userId: $allowed, content: "Bob likes tea.") { __typename ...Refused }
  second: addKnowledge(userId: $forbidden, content: "Alice likes coffee.") { __typename ...Refused }
}
fragment Refused on OperationInfo { messages { kind field message } }
"""
FORBIDDEN_ALICE = {
    "__typename": "OperationInfo",
    "messages": [{"kind": "PERMISSION", "field": "userId", "message": "This API key may not act on user 'alice'."}],
}


@pytest.mark.parametrize("order", ["allowed-first", "forbidden-first"])
def test_a_mutation_document_with_a_forbidden_field_writes_nothing_for_it(gql, make_api_key, order):
    allowed, forbidden = ("bob", "alice") if order == "allowed-first" else ("alice", "bob")
    key = make_api_key("bob")
    answer = gql(ADD_KNOWLEDGE_TWICE, {"allowed": allowed, "forbidden": forbidden}, key=key)
    written = {"__typename": "Knowledge"}
    if order == "allowed-first":
        assert answer == {"data": {"first": written, "second": FORBIDDEN_ALICE}}
        assert list(Knowledge.objects.values_list("user__external_id", "content")) == [("bob", "Bob likes tea.")]
    else:
        assert answer == {"data": {"first": FORBIDDEN_ALICE, "second": written}}
        assert list(Knowledge.objects.values_list("user__external_id", "content")) == [("bob", "Alice likes coffee.")]


def test_a_forbidden_field_behind_a_fragment_or_a_default_is_refused_with_its_coerced_arguments(gql, make_api_key):
    key = make_api_key("bob")
    document = """
    mutation($who: String! = "alice") {
      ok: addKnowledge(userId: "bob", content: "Bob likes tea.") { __typename }
      ... on Mutation {
        addKnowledge(userId: $who, content: "Alice likes coffee.") {
          __typename ... on OperationInfo { messages { kind field message } }
        }
      }
    }
    """
    answer = gql(document, key=key)
    assert answer == {"data": {"ok": {"__typename": "Knowledge"}, "addKnowledge": FORBIDDEN_ALICE}}
    assert list(Knowledge.objects.values_list("user__external_id", flat=True)) == ["bob"]


def test_a_document_of_allowed_fields_runs(gql, make_api_key):
    key = make_api_key("bob")
    answer = gql(ADD_KNOWLEDGE_TWICE, {"allowed": "bob", "forbidden": "bob"}, key=key)
    assert answer == {"data": {"first": {"__typename": "Knowledge"}, "second": {"__typename": "Knowledge"}}}


# --- length caps -----------------------------------------------------------------------------


def test_knowledge_content_over_max_knowledge_chars_is_refused(gql, settings):
    settings.MAX_KNOWLEDGE_CHARS = 100
    document = """
    mutation($content: String!) {
      addKnowledge(userId: "u", content: $content) {
        __typename ... on OperationInfo { messages { field message } }
      }
    }
    """
    refused = gql(document, {"content": "x" * 101})["data"]["addKnowledge"]
    assert refused["messages"] == [
        {"field": "content", "message": "content is longer than 100 characters (MAX_KNOWLEDGE_CHARS)."}
    ]
    assert gql(document, {"content": "x" * 100})["data"]["addKnowledge"]["__typename"] == "Knowledge"


def test_diary_content_over_max_diary_chars_is_refused(gql, settings):
    settings.MAX_DIARY_CHARS = 100
    document = """
    mutation($content: String!) {
      upsertDiary(userId: "u", diaryDate: "2024-05-01", content: $content) {
        __typename ... on OperationInfo { messages { field message } }
      }
    }
    """
    refused = gql(document, {"content": "x" * 101})["data"]["upsertDiary"]
    assert refused["messages"] == [
        {"field": "content", "message": "content is longer than 100 characters (MAX_DIARY_CHARS)."}
    ]
    assert gql(document, {"content": "x" * 100})["data"]["upsertDiary"]["__typename"] == "Diary"


def test_a_document_nested_too_deeply_is_a_client_error(raw_post):
    nested = "{a: " * 500 + "1" + "}" * 500
    document = (
        f'mutation {{ upsertDiary(userId: "u", diaryDate: "2024-05-01", content: "x", metadata: {nested}) {{ id }} }}'
    )
    answer = raw_post(json.dumps({"query": document})).json()
    assert answer["data"] is None
    assert "nested too deeply" in answer["errors"][0]["message"]
    assert "INTERNAL_ERROR" not in json.dumps(answer)
