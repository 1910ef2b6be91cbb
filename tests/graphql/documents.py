"""The GraphQL documents and small helpers the operation tests in this folder share."""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Q
from django.http import HttpResponse
from django.test import Client

from memories.models import Diary, Knowledge, Message, Session, Summary


def ok(body: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` of a response that has no errors."""
    assert "errors" not in body, body
    return body["data"]


def msg(content: str, at: str, role: str = "user", **fields: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "createdAt": at, **fields}


def only_error(body: dict[str, Any]) -> dict[str, Any]:
    """The single error of a response without data, without its source locations."""
    assert body["data"] is None, body
    [error] = body["errors"]
    return {k: v for k, v in error.items() if k != "locations"}


HISTORY = """
query History($userId: String!, $sessionId: String, $channel: String, $limit: Int, $offset: Int) {
  history(userId: $userId, sessionId: $sessionId, channel: $channel, pagination: {limit: $limit, offset: $offset}) {
    results { content }
    totalCount pageInfo { limit offset }
  }
}
"""


HISTORY_ITEMS = """
query History($userId: String!) {
  history(userId: $userId) { results { id role content channel metadata createdAt sessionId externalId } }
}
"""


SESSIONS = """
query Sessions($userId: String!) {
  sessions(userId: $userId) {
    results { sessionId userId channel firstMessageAt lastMessageAt hasSummary summaryIsCurrent }
    totalCount
  }
}
"""


SUMMARIES = """
query Summaries($userId: String!, $sessionId: String, $limit: Int, $offset: Int) {
  summaries(userId: $userId, sessionId: $sessionId, pagination: {limit: $limit, offset: $offset}) {
    results { sessionId content mode coversFrom coversUntil messageCount }
    totalCount
  }
}
"""


DELETE_HISTORY = """
mutation DeleteHistory($userId: String!, $sessionId: String, $channel: String) {
  deleteHistory(userId: $userId, sessionId: $sessionId, channel: $channel) {
    __typename
    ... on DeleteHistoryResult { deletedMessages deletedSessions deletedSummaries resummarizedSessionIds }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""


CREATE_SUMMARIES = """
mutation CreateSummaries($userId: String!, $sessionId: String, $overwrite: Boolean! = false) {
  createSummaries(userId: $userId, sessionId: $sessionId, overwrite: $overwrite) {
    __typename
    ... on QueuedSummariesResult { queuedSessionIds }
  }
}
"""


CREATE_SUMMARIES_UP_TO = """
mutation($userId: String!, $maxCount: Int, $overwrite: Boolean! = false) {
  createSummaries(userId: $userId, maxCount: $maxCount, overwrite: $overwrite) {
    ... on QueuedSummariesResult { queuedSessionIds }
    ... on OperationInfo { messages { field message } }
  }
}
"""


DELETE_SUMMARIES = """
mutation DeleteSummaries($userId: String!, $sessionId: String) {
  deleteSummaries(userId: $userId, sessionId: $sessionId) {
    __typename
    ... on DeleteSummariesResult { deletedSummaries }
  }
}
"""


KNOWLEDGE = """
query Knowledge($userId: String, $shared: Boolean! = false) {
  knowledge(userId: $userId, shared: $shared) { results { content userId embeddingIsCurrent } totalCount }
}
"""


KNOWLEDGE_RESULT = """
    __typename
    ... on Knowledge { id content userId embeddingIsCurrent }
    ... on OperationInfo { messages { kind field message } }
"""


ADD_KNOWLEDGE = f"""
mutation AddKnowledge($userId: String, $content: String!) {{
  addKnowledge(userId: $userId, content: $content) {{ {KNOWLEDGE_RESULT} }}
}}
"""


UPDATE_KNOWLEDGE = f"""
mutation UpdateKnowledge($id: ID!, $userId: String, $content: String!) {{
  updateKnowledge(id: $id, userId: $userId, content: $content) {{ {KNOWLEDGE_RESULT} }}
}}
"""


DELETE_KNOWLEDGE = """
mutation DeleteKnowledge($id: ID!, $userId: String) {
  deleteKnowledge(id: $id, userId: $userId) {
    __typename
    ... on DeleteKnowledgeResult { deletedId }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""


UPSERT_DIARY = """
mutation UpsertDiary($userId: String!, $diaryDate: Date!, $content: String!, $metadata: JSON) {
  upsertDiary(userId: $userId, diaryDate: $diaryDate, content: $content, metadata: $metadata) {
    __typename
    ... on Diary { id diaryDate content metadata userId }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""


DIARIES = """
query Diaries($userId: String!, $diaryDate: Date, $since: Date, $until: Date, $limit: Int) {
  diaries(userId: $userId, diaryDate: $diaryDate, since: $since, until: $until, pagination: {limit: $limit}) {
    results { diaryDate content userId }
    totalCount
  }
}
"""


DELETE_DIARY = """
mutation DeleteDiary($userId: String!, $diaryDate: Date!) {
  deleteDiary(userId: $userId, diaryDate: $diaryDate) { __typename ... on DeleteDiaryResult { deleted } }
}
"""


FORGET_USER = """
mutation ForgetUser($userId: String!) {
  forgetUser(userId: $userId) {
    __typename
    ... on ForgetUserResult { messages sessions summaries knowledge diaries }
  }
}
"""


TOTALS = """
query Totals($userId: String!) {
  history(userId: $userId) { totalCount }
  sessions(userId: $userId) { totalCount }
  summaries(userId: $userId) { totalCount }
  knowledge(userId: $userId) { totalCount }
  diaries(userId: $userId) { totalCount }
}
"""


# Each list field, with the arguments it needs besides limit/offset.
LIST_FIELDS = {
    "history": 'history(userId: "alice", pagination: {limit: $limit, offset: $offset})',
    "sessions": 'sessions(userId: "alice", pagination: {limit: $limit, offset: $offset})',
    "summaries": 'summaries(userId: "alice", pagination: {limit: $limit, offset: $offset})',
    "knowledge": 'knowledge(userId: "alice", shared: true, pagination: {limit: $limit, offset: $offset})',
    "diaries": 'diaries(userId: "alice", pagination: {limit: $limit, offset: $offset})',
    "entities": 'entities(userId: "alice", pagination: {limit: $limit, offset: $offset})',
}


def list_query(field: str) -> str:
    return (
        f"query L($limit: Int!, $offset: Int!) {{ {LIST_FIELDS[field]} {{ totalCount pageInfo {{ limit offset }} }} }}"
    )


def totals(gql_ok, user_id: str) -> dict[str, int]:
    return {name: page["totalCount"] for name, page in gql_ok(TOTALS, {"userId": user_id}).items()}


# --- a conversation, and a chat reply that raises no facts ------------------------------------

NO_FACTS = json.dumps({"facts": []})


def say(speaker: str, content: str, at: str, role: str | None = None) -> dict:
    """A ``MessageInput`` said by ``speaker`` at ``at`` (ISO 8601); "Bot" speaks as the assistant."""
    role = role or ("assistant" if speaker == "Bot" else "user")
    return {"role": role, "content": content, "createdAt": at, "metadata": {"speaker": speaker}}


MIA_MESSAGES = [
    say("Mia", "My favourite food is sushi, especially salmon nigiri.", "2024-05-01T09:00:00Z"),
    say("Bot", "Sushi is a great choice!", "2024-05-01T09:00:10Z"),
    say("Mia", "I also adopted a cat named Miso last week.", "2024-05-01T09:00:20Z"),
]


def summary_or_facts(summary: str):
    """A chat reply: ``summary`` to a summary request, no facts to a fact extraction."""
    return lambda body: NO_FACTS if "response_format" in body else summary


# History as the scoping tests read it.
SCOPED_HISTORY = "query H($userId: String!) { history(userId: $userId) { results { content sessionId } totalCount } }"


def post(client: Client, query: str, variables: dict[str, Any] | None = None, **headers: Any) -> HttpResponse:
    return client.post(
        "/graphql/",
        data=json.dumps({"query": query, "variables": variables or {}}),
        content_type="application/json",
        **headers,
    )


def bearer(key: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


def alice_state() -> dict[str, list[tuple]]:
    """Every row of alice's (and the shared knowledge), to compare before and after a request."""
    alice = Q(user__external_id="alice")
    return {
        "messages": list(Message.objects.filter(alice).order_by("pk").values_list("pk", "content", "created_at")),
        "sessions": list(
            Session.objects.filter(alice).order_by("pk").values_list("pk", "external_id", "last_message_at")
        ),
        "summaries": list(Summary.objects.filter(alice).order_by("pk").values_list("pk", "content", "updated_at")),
        "knowledge": list(
            Knowledge.objects.filter(alice | Q(user__isnull=True))
            .order_by("pk")
            .values_list("pk", "content", "updated_at", "embedding_model")
        ),
        "diaries": list(Diary.objects.filter(alice).order_by("pk").values_list("pk", "content", "updated_at")),
    }


def only_forbidden(body: dict[str, Any], field: str) -> str:
    """The message of the single FORBIDDEN error of a response without data."""
    assert body["data"] is None, body
    [error] = body["errors"]
    assert (error["path"], error["extensions"]) == ([field], {"code": "FORBIDDEN"})
    return error["message"]
