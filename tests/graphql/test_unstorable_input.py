"""Values the database cannot store, or that would be read ambiguously, are refused alike wherever they
are sent, naming the field; and one request writes a bounded number of log lines whatever it holds."""

from __future__ import annotations

import json
import logging

import pytest

from memories.models import Diary, Message

pytestmark = pytest.mark.django_db

ADD = """
mutation($metadata: JSON, $at: DateTime) {
  addMessages(
    userId: "u", sessionId: "s", messages: [{role: "user", content: "hi", metadata: $metadata, createdAt: $at}]
  ) { __typename ... on OperationInfo { messages { field message } } }
}
"""
UPSERT_DIARY = """
mutation($metadata: JSON) {
  upsertDiary(userId: "u", diaryDate: "2024-05-01", content: "A walk.", metadata: $metadata) {
    __typename
    ... on OperationInfo { messages { field message } }
  }
}
"""
HISTORY = (
    'query($since: DateTime, $until: DateTime) { history(userId: "u", since: $since, until: $until) { totalCount } }'
)

# JSON numbers PostgreSQL's jsonb has no notation for: Python's JSON reader takes the first three
# literally and reads a number past a double's range as Infinity.
NOT_FINITE = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", '{"deep": [1, {"x": NaN}]}']


def _post(raw_post, document: str, metadata: str):
    return raw_post(f'{{"query": {json.dumps(document)}, "variables": {{"metadata": {{"v": {metadata}}}}}}}').json()


@pytest.fixture
def raw_post(client, trusted_key):
    def post(body: str):
        return client.post(
            "/graphql/", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {trusted_key}"
        )

    return post


@pytest.mark.parametrize("number", NOT_FINITE)
@pytest.mark.parametrize(
    ("document", "mutation", "field"),
    [(ADD, "addMessages", "messages.0.metadata"), (UPSERT_DIARY, "upsertDiary", "metadata")],
    ids=["addMessages", "upsertDiary"],
)
def test_a_number_json_cannot_hold_in_metadata_is_a_field_error(raw_post, document, mutation, field, number):
    answer = _post(raw_post, document, number)
    result = answer["data"][mutation]
    assert result["__typename"] == "OperationInfo", answer
    assert result["messages"][0]["field"] == field
    assert "NaN or Infinity" in result["messages"][0]["message"]
    assert not Message.objects.exists()
    assert not Diary.objects.exists()


@pytest.mark.parametrize(
    ("document", "mutation"),
    [
        (
            'mutation { addMessages(userId: "u", sessionId: "s", messages: [{role: "user", content: "hi", %s}])',
            "addMessages",
        ),
        ('mutation { upsertDiary(userId: "u", diaryDate: "2024-05-01", content: "A walk.", %s)', "upsertDiary"),
    ],
    ids=["addMessages", "upsertDiary"],
)
def test_a_number_past_a_doubles_range_written_in_the_document_is_a_field_error(gql, document, mutation):
    selection = " { __typename ... on OperationInfo { messages { field message } } } }"
    result = gql(document % "metadata: {v: 1e999}" + selection)["data"][mutation]
    assert result["__typename"] == "OperationInfo"
    assert "NaN or Infinity" in result["messages"][0]["message"]


@pytest.mark.parametrize("variable", ["since", "until"])
def test_history_refuses_a_naive_date_time_as_add_messages_does(gql, variable):
    refused = gql(ADD, {"at": "2024-05-01T12:00:00"})["data"]["addMessages"]["messages"][0]
    answer = gql(HISTORY, {variable: "2024-05-01T12:00:00"})
    assert answer["data"] is None
    assert answer["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert answer["errors"][0]["message"] == f"{variable}: " + refused["message"].replace("createdAt", variable)
    assert gql(HISTORY, {variable: "2024-05-01T12:00:00+02:00"})["data"]["history"]["totalCount"] == 0


def test_a_document_with_thousands_of_errors_writes_one_log_line(gql, caplog, settings):
    settings.MAX_QUERY_TOKENS = 100_000  # the document is 21,000 tokens: its fragments must reach validation
    fragments = "\n".join(f"fragment f{i} on Query {{ __typename }}" for i in range(3000))
    with caplog.at_level(logging.INFO):
        answer = gql('{ history(userId: "u") { totalCount } }\n' + fragments)
    assert answer["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    lines = [r for r in caplog.records if r.name.startswith(("memories", "strawberry"))]
    assert len(lines) == 1, len(lines)
    assert "more" in lines[0].getMessage()
