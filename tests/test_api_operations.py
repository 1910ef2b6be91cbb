"""Every GraphQL operation over HTTP with an all-users key: the data each one returns, and the limits.

Permissions are in ``test_api_permissions.py``; the schema and query counts in ``test_api_schema.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from memories.llm import Answer, EmbeddingBatch, Usage
from memories.llm.local import LocalEmbedder
from memories.models import Diary, EndUser, Knowledge, Message, Session, Summary

pytestmark = pytest.mark.django_db


# --- helpers ---------------------------------------------------------------------------


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
  history(userId: $userId, sessionId: $sessionId, channel: $channel, limit: $limit, offset: $offset) {
    items { content }
    hasNextPage totalCount limit offset
  }
}
"""

HISTORY_ITEMS = """
query History($userId: String!) {
  history(userId: $userId) { items { id role content channel metadata createdAt sessionId externalId } }
}
"""

SESSIONS = """
query Sessions($userId: String!) {
  sessions(userId: $userId) {
    items { sessionId userId channel firstMessageAt lastMessageAt hasSummary summaryIsCurrent }
    totalCount
  }
}
"""

SUMMARIES = """
query Summaries($userId: String!, $sessionId: String, $limit: Int, $offset: Int) {
  summaries(userId: $userId, sessionId: $sessionId, limit: $limit, offset: $offset) {
    items { sessionId content mode coversFrom coversUntil messageCount }
    hasNextPage totalCount
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
  knowledge(userId: $userId, shared: $shared) { items { content userId embeddingIsCurrent } totalCount }
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
  diaries(userId: $userId, diaryDate: $diaryDate, since: $since, until: $until, limit: $limit) {
    items { diaryDate content userId }
    hasNextPage
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
    "history": 'history(userId: "alice", limit: $limit, offset: $offset)',
    "sessions": 'sessions(userId: "alice", limit: $limit, offset: $offset)',
    "summaries": 'summaries(userId: "alice", limit: $limit, offset: $offset)',
    "knowledge": 'knowledge(userId: "alice", shared: true, limit: $limit, offset: $offset)',
    "diaries": 'diaries(userId: "alice", limit: $limit, offset: $offset)',
}


def list_query(field: str) -> str:
    return f"query L($limit: Int!, $offset: Int!) {{ {LIST_FIELDS[field]} {{ totalCount limit offset }} }}"


@pytest.fixture
def gql_ok(gql):
    """``gql`` that asserts there are no errors and returns ``data``."""

    def run(query: str, variables: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        return ok(gql(query, variables, **kwargs))

    return run


@pytest.fixture
def summarize(gql_ok):
    """Summarise every session of a user (``createSummaries``; the worker runs in the request)."""

    def run(user_id: str) -> list[str]:
        return gql_ok(CREATE_SUMMARIES, {"userId": user_id})["createSummaries"]["queuedSessionIds"]

    return run


def totals(gql_ok, user_id: str) -> dict[str, int]:
    return {name: page["totalCount"] for name, page in gql_ok(TOTALS, {"userId": user_id}).items()}


# --- history ---------------------------------------------------------------------------


def test_history_pages(add_messages, gql_ok):
    add_messages("alice", "s1", [msg(f"message {i}", f"2024-05-01T10:0{i}:00Z") for i in range(5)])

    def page(**variables: Any) -> dict[str, Any]:
        return gql_ok(HISTORY, {"userId": "alice", **variables})["history"]

    def items(*numbers: int) -> list[dict[str, str]]:
        return [{"content": f"message {i}"} for i in numbers]

    assert page(limit=2) == {"items": items(0, 1), "hasNextPage": True, "totalCount": 5, "limit": 2, "offset": 0}
    assert page(limit=2, offset=2) == {
        "items": items(2, 3),
        "hasNextPage": True,
        "totalCount": 5,
        "limit": 2,
        "offset": 2,
    }
    assert page(limit=2, offset=4) == {
        "items": items(4),
        "hasNextPage": False,
        "totalCount": 5,
        "limit": 2,
        "offset": 4,
    }
    # A page that ends exactly at the last row has no next page.
    assert page(limit=3, offset=2) == {
        "items": items(2, 3, 4),
        "hasNextPage": False,
        "totalCount": 5,
        "limit": 3,
        "offset": 2,
    }
    assert page() == {"items": items(0, 1, 2, 3, 4), "hasNextPage": False, "totalCount": 5, "limit": 100, "offset": 0}
    for offset in (5, 50):
        assert page(offset=offset) == {
            "items": [],
            "hasNextPage": False,
            "totalCount": 5,
            "limit": 100,
            "offset": offset,
        }


def test_history_items_carry_every_field(add_messages, gql_ok):
    added = add_messages(
        "alice",
        "s1",
        [msg("I moved to Osaka.", "2024-05-01T09:00:00+09:00", metadata={"speaker": "Alice"}, externalId="m-1")],
        channel="slack",
    )
    assert gql_ok(HISTORY_ITEMS, {"userId": "alice"})["history"]["items"] == [
        {
            "id": added["messages"][0]["id"],
            "role": "user",
            "content": "I moved to Osaka.",
            "channel": "slack",
            "metadata": {"speaker": "Alice"},
            "createdAt": "2024-05-01T00:00:00+00:00",
            "sessionId": "s1",
            "externalId": "m-1",
        }
    ]


@pytest.mark.parametrize("field", list(LIST_FIELDS))
def test_every_list_accepts_a_page_of_max_page_size(field, gql_ok, settings):
    page = gql_ok(list_query(field), {"limit": settings.MAX_PAGE_SIZE, "offset": 0})[field]
    assert page == {"totalCount": 0, "limit": settings.MAX_PAGE_SIZE, "offset": 0}


@pytest.mark.parametrize("field", list(LIST_FIELDS))
@pytest.mark.parametrize(
    ("limit", "offset", "message"),
    [
        (0, 0, "limit: limit must be between 1 and 1000 (MAX_PAGE_SIZE)."),
        (1001, 0, "limit: limit must be between 1 and 1000 (MAX_PAGE_SIZE)."),
        (-1, 0, "limit: limit must be between 1 and 1000 (MAX_PAGE_SIZE)."),
        (10, -1, "offset: offset must not be negative."),
    ],
)
def test_every_list_refuses_a_bad_page_naming_the_limit(field, limit, offset, message, gql, settings):
    assert settings.MAX_PAGE_SIZE == 1000
    body = gql(list_query(field), {"limit": limit, "offset": offset})
    assert only_error(body) == {"message": message, "path": [field], "extensions": {"code": "BAD_USER_INPUT"}}


def test_a_list_without_limit_works_when_max_page_size_is_below_the_default(add_messages, gql, settings):
    add_messages("alice", "s1", [msg("hello there", "2024-05-01T10:00:00Z")])
    settings.MAX_PAGE_SIZE = 50
    page = ok(gql('{ history(userId: "alice") { items { content } limit } }'))["history"]
    assert page == {"items": [{"content": "hello there"}], "limit": 50}


# --- sessions and summaries ------------------------------------------------------------


def test_sessions_report_channel_times_and_summary_state(add_messages, gql_ok):
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
        channel="web",
    )
    # The first messages of s2 queue the summary of s1.
    add_messages("alice", "s2", [msg("Good morning to you.", "2024-05-02T08:00:00Z")], channel="slack")
    add_messages("bob", "s1", [msg("Bob was here.", "2024-05-01T09:00:00Z")])

    s1 = {
        "sessionId": "s1",
        "userId": "alice",
        "channel": "web",
        "firstMessageAt": "2024-05-01T10:00:00+00:00",
        "lastMessageAt": "2024-05-01T10:05:00+00:00",
        "hasSummary": True,
        "summaryIsCurrent": True,
    }
    s2 = {
        "sessionId": "s2",
        "userId": "alice",
        "channel": "slack",
        "firstMessageAt": "2024-05-02T08:00:00+00:00",
        "lastMessageAt": "2024-05-02T08:00:00+00:00",
        "hasSummary": False,
        "summaryIsCurrent": False,
    }
    assert gql_ok(SESSIONS, {"userId": "alice"})["sessions"] == {"items": [s1, s2], "totalCount": 2}

    # s1 is resumed: its summary is now behind its newest message.
    add_messages("alice", "s1", [msg("Miso caught a mouse today.", "2024-05-03T10:00:00Z")], channel="web")
    resumed = {**s1, "lastMessageAt": "2024-05-03T10:00:00+00:00", "summaryIsCurrent": False}
    assert gql_ok(SESSIONS, {"userId": "alice"})["sessions"] == {"items": [resumed, s2], "totalCount": 2}


def test_summaries_list_filter_and_page(add_messages, gql_ok, summarize):
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
    )
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")])
    assert summarize("alice") == ["s2"]  # s1 was summarised when s2 began

    s1 = {
        "sessionId": "s1",
        "content": "user: I adopted a cat named Miso. assistant: What a lovely name for a cat.",
        "mode": "extractive",
        "coversFrom": "2024-05-01T10:00:00+00:00",
        "coversUntil": "2024-05-01T10:05:00+00:00",
        "messageCount": 2,
    }
    s2 = {
        "sessionId": "s2",
        "content": "user: I started learning the cello.",
        "mode": "extractive",
        "coversFrom": "2024-05-02T08:00:00+00:00",
        "coversUntil": "2024-05-02T08:00:00+00:00",
        "messageCount": 1,
    }
    assert gql_ok(SUMMARIES, {"userId": "alice"})["summaries"] == {
        "items": [s1, s2],
        "hasNextPage": False,
        "totalCount": 2,
    }
    assert gql_ok(SUMMARIES, {"userId": "alice", "sessionId": "s2"})["summaries"] == {
        "items": [s2],
        "hasNextPage": False,
        "totalCount": 1,
    }
    assert gql_ok(SUMMARIES, {"userId": "alice", "limit": 1})["summaries"] == {
        "items": [s1],
        "hasNextPage": True,
        "totalCount": 2,
    }
    assert gql_ok(SUMMARIES, {"userId": "bob"})["summaries"] == {"items": [], "hasNextPage": False, "totalCount": 0}


def test_create_summaries_queues_missing_or_stale_ones_and_all_with_overwrite(add_messages, gql_ok):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")])
    add_messages("alice", "s3", [msg("Nothing much happened today.", "2024-05-03T08:00:00Z")])
    # s1 and s2 were summarised when the next session began; s3 has no summary yet.
    summaries = Summary.objects.filter(user__external_id="alice")
    assert sorted(summaries.values_list("session__external_id", flat=True)) == ["s1", "s2"]
    first_written = dict(summaries.values_list("session__external_id", "updated_at"))

    def create(**variables: Any) -> list[str]:
        return gql_ok(CREATE_SUMMARIES, {"userId": "alice", **variables})["createSummaries"]["queuedSessionIds"]

    assert create() == ["s3"]  # current ones are skipped
    assert create() == []
    # A resumed session's summary is behind: queued again.
    add_messages("alice", "s1", [msg("Miso caught a mouse today.", "2024-05-04T10:00:00Z")])
    assert create(sessionId="s2") == []
    assert create() == ["s1"]
    assert Summary.objects.get(session__external_id="s1").message_count == 2

    rewritten = dict(summaries.values_list("session__external_id", "updated_at"))
    assert create(overwrite=True) == ["s1", "s2", "s3"]  # in conversation order
    after = dict(summaries.values_list("session__external_id", "updated_at"))
    assert all(after[s] > rewritten[s] for s in ("s1", "s2", "s3"))
    assert after["s2"] > first_written["s2"]
    assert create(overwrite=True, sessionId="s2") == ["s2"]
    assert create(userId="nobody") == []


def test_delete_summaries_all_or_one_session(add_messages, gql_ok, summarize):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")])
    add_messages("bob", "s1", [msg("Bob adopted a dog.", "2024-05-01T10:00:00Z")])
    summarize("alice")
    summarize("bob")

    def delete(**variables: Any) -> dict[str, Any]:
        return gql_ok(DELETE_SUMMARIES, {"userId": "alice", **variables})["deleteSummaries"]

    assert delete(sessionId="s1") == {"__typename": "DeleteSummariesResult", "deletedSummaries": 1}
    remaining = gql_ok(SUMMARIES, {"userId": "alice"})["summaries"]["items"]
    assert [s["sessionId"] for s in remaining] == ["s2"]
    assert delete(sessionId="s1") == {"__typename": "DeleteSummariesResult", "deletedSummaries": 0}
    assert delete() == {"__typename": "DeleteSummariesResult", "deletedSummaries": 1}
    assert totals(gql_ok, "alice") == {"history": 2, "sessions": 2, "summaries": 0, "knowledge": 0, "diaries": 0}
    sessions = gql_ok(SESSIONS, {"userId": "alice"})["sessions"]["items"]
    assert [(s["hasSummary"], s["summaryIsCurrent"]) for s in sessions] == [(False, False), (False, False)]
    assert totals(gql_ok, "bob")["summaries"] == 1


# --- deleteHistory ---------------------------------------------------------------------


@pytest.fixture
def alice_and_bob(add_messages, summarize):
    """alice: s1 (web, 2 messages) and s2 (slack, 1 message), both summarised; bob: s1."""
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
        channel="web",
    )
    add_messages("alice", "s2", [msg("My locker code is 4471, in the gym basement.", "2024-05-02T08:00:00Z")], "slack")
    add_messages("bob", "s1", [msg("Bob adopted a dog named Rex.", "2024-05-01T10:00:00Z")])
    summarize("alice")
    summarize("bob")


def test_delete_all_history(alice_and_bob, gql_ok, search):
    result = gql_ok(DELETE_HISTORY, {"userId": "alice"})["deleteHistory"]
    assert result == {
        "__typename": "DeleteHistoryResult",
        "deletedMessages": 3,
        "deletedSessions": 2,
        "deletedSummaries": 2,
        "resummarizedSessionIds": [],
    }
    assert totals(gql_ok, "alice") == {"history": 0, "sessions": 0, "summaries": 0, "knowledge": 0, "diaries": 0}
    assert totals(gql_ok, "bob") == {"history": 1, "sessions": 1, "summaries": 1, "knowledge": 0, "diaries": 0}
    found = search(userId="alice", query="What is my locker code?")
    assert (found["found"], found["answer"], found["hits"]) == (False, "Not found in memory.", [])


def test_delete_one_sessions_history(alice_and_bob, gql_ok, search):
    result = gql_ok(DELETE_HISTORY, {"userId": "alice", "sessionId": "s2"})["deleteHistory"]
    assert result == {
        "__typename": "DeleteHistoryResult",
        "deletedMessages": 1,
        "deletedSessions": 1,
        "deletedSummaries": 1,
        "resummarizedSessionIds": [],
    }
    assert [s["sessionId"] for s in gql_ok(SESSIONS, {"userId": "alice"})["sessions"]["items"]] == ["s1"]
    assert [s["sessionId"] for s in gql_ok(SUMMARIES, {"userId": "alice"})["summaries"]["items"]] == ["s1"]
    found = search(userId="alice", query="What is my locker code?", includeRetrievedData=True)
    assert "4471" not in json.dumps(found)
    assert totals(gql_ok, "bob") == {"history": 1, "sessions": 1, "summaries": 1, "knowledge": 0, "diaries": 0}


def test_delete_one_channels_history_resummarizes_the_sessions_that_keep_messages(add_messages, gql_ok, search):
    # One session spoken in two channels: the slack message goes, the web messages stay.
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
        channel="web",
    )
    add_messages("alice", "s1", [msg("My locker code is 4471, in the gym basement.", "2024-05-01T10:10:00Z")], "slack")
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")], channel="web")
    [before] = gql_ok(SUMMARIES, {"userId": "alice", "sessionId": "s1"})["summaries"]["items"]
    assert "4471" in before["content"]

    result = gql_ok(DELETE_HISTORY, {"userId": "alice", "channel": "slack"})["deleteHistory"]
    assert result == {
        "__typename": "DeleteHistoryResult",
        "deletedMessages": 1,
        "deletedSessions": 0,
        "deletedSummaries": 1,
        "resummarizedSessionIds": ["s1"],
    }
    assert gql_ok(SUMMARIES, {"userId": "alice", "sessionId": "s1"})["summaries"]["items"] == [
        {
            "sessionId": "s1",
            "content": "user: I adopted a cat named Miso. assistant: What a lovely name for a cat.",
            "mode": "extractive",
            "coversFrom": "2024-05-01T10:00:00+00:00",
            "coversUntil": "2024-05-01T10:05:00+00:00",
            "messageCount": 2,
        }
    ]
    [session, _] = gql_ok(SESSIONS, {"userId": "alice"})["sessions"]["items"]
    assert (session["lastMessageAt"], session["hasSummary"], session["summaryIsCurrent"]) == (
        "2024-05-01T10:05:00+00:00",
        True,
        True,
    )
    found = search(userId="alice", query="What is my locker code?", includeRetrievedData=True)
    assert "4471" not in json.dumps(found)
    assert "locker" not in json.dumps(found)


def test_delete_history_with_an_empty_session_id_deletes_nothing(add_messages, gql):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    gql(DELETE_HISTORY, {"userId": "alice", "sessionId": ""})
    assert Message.objects.filter(user__external_id="alice").count() == 1


def test_deleting_history_deletes_the_facts_raised_from_it_audit_trail_and_all(add_messages, gql_ok):
    add_messages("alice", "s1", [msg("My locker code is 4471.", "2024-05-01T10:00:00Z")])
    add_messages("alice", "s2", [msg("I play the cello.", "2024-05-02T10:00:00Z")])
    user = EndUser.objects.get(external_id="alice")
    s1, s2 = Session.objects.get(external_id="s1"), Session.objects.get(external_id="s2")
    cited = Knowledge.objects.create(user=user, content="Locker code 4471 (cited).", source_session=s1)
    cited.source_messages.set(s1.messages.all())
    # A chat model may cite no message: such a fact may come from any of its session's.
    uncited = Knowledge.objects.create(user=user, content="Locker code 4471 (uncited).", source_session=s1)
    other_session = Knowledge.objects.create(user=user, content="Plays the cello.", source_session=s2)
    added = Knowledge.objects.create(user=user, content="Allergic to peanuts.")

    gql_ok(DELETE_HISTORY, {"userId": "alice", "sessionId": "s1"})

    assert set(Knowledge.objects.filter(user=user).values_list("pk", flat=True)) == {other_session.pk, added.pk}
    assert not Knowledge.history.filter(id__in=[cited.pk, uncited.pk]).exists()
    assert Knowledge.history.filter(id=added.pk).exists()


# --- knowledge -------------------------------------------------------------------------


def test_knowledge_of_a_user_shared_or_both(gql_ok):
    alice = EndUser.objects.create(external_id="alice")
    bob = EndUser.objects.create(external_id="bob")
    # Created oldest first: lists are newest change first.
    Knowledge.objects.create(user=alice, content="Alice is allergic to peanuts.")
    Knowledge.objects.create(user=None, content="The support desk opens at 9am.")
    Knowledge.objects.create(user=bob, content="Bob is vegetarian.")
    Knowledge.objects.create(user=alice, content="Alice plays the cello.")

    def knowledge(**variables: Any) -> list[tuple[str, str | None]]:
        page = gql_ok(KNOWLEDGE, variables)["knowledge"]
        assert page["totalCount"] == len(page["items"])
        return [(k["content"], k["userId"]) for k in page["items"]]

    assert knowledge(userId="alice") == [
        ("Alice plays the cello.", "alice"),
        ("Alice is allergic to peanuts.", "alice"),
    ]
    assert knowledge(shared=True) == [("The support desk opens at 9am.", None)]
    assert knowledge() == [("The support desk opens at 9am.", None)]  # no user: shared
    assert knowledge(userId="alice", shared=True) == [
        ("Alice plays the cello.", "alice"),
        ("The support desk opens at 9am.", None),
        ("Alice is allergic to peanuts.", "alice"),
    ]
    assert knowledge(userId="nobody") == []


@pytest.mark.parametrize("user_id", ["alice", None])
def test_add_knowledge_for_a_user_or_shared(user_id, gql_ok):
    added = gql_ok(ADD_KNOWLEDGE, {"userId": user_id, "content": "  Allergic to peanuts.  "})["addKnowledge"]
    knowledge = Knowledge.objects.get()
    # Stored trimmed; embedded by the worker after the request.
    assert added == {
        "__typename": "Knowledge",
        "id": str(knowledge.pk),
        "content": "Allergic to peanuts.",
        "userId": user_id,
        "embeddingIsCurrent": False,
    }
    assert knowledge.embedding is not None
    listed = gql_ok(KNOWLEDGE, {"userId": user_id, "shared": user_id is None})["knowledge"]["items"]
    assert listed == [{"content": "Allergic to peanuts.", "userId": user_id, "embeddingIsCurrent": True}]


def test_add_knowledge_refuses_empty_content(gql_ok):
    added = gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "   "})["addKnowledge"]
    assert added == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "content", "message": "content must not be empty."}],
    }
    assert not Knowledge.objects.exists()


def test_update_knowledge_embeds_the_new_text(gql_ok, search):
    added = gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice is allergic to peanuts."})["addKnowledge"]
    old_vector = list(Knowledge.objects.get().embedding)
    assert search(userId="alice", query="What is Alice allergic to?")["hits"][0]["content"] == (
        "Alice is allergic to peanuts."
    )

    updated = gql_ok(
        UPDATE_KNOWLEDGE, {"id": added["id"], "userId": "alice", "content": "Alice plays the cello in an orchestra."}
    )["updateKnowledge"]
    assert updated == {
        "__typename": "Knowledge",
        "id": added["id"],
        "content": "Alice plays the cello in an orchestra.",
        "userId": "alice",
        "embeddingIsCurrent": False,
    }
    knowledge = Knowledge.objects.get()
    assert list(knowledge.embedding) != old_vector
    assert gql_ok(KNOWLEDGE, {"userId": "alice"})["knowledge"]["items"] == [
        {"content": "Alice plays the cello in an orchestra.", "userId": "alice", "embeddingIsCurrent": True}
    ]
    for query in ("Which instrument does Alice play?", "What is Alice allergic to?"):
        hits = search(userId="alice", query=query, includeRetrievedData=True)
        assert [(h["kind"], h["content"]) for h in hits["hits"]] == [
            ("KNOWLEDGE", "Alice plays the cello in an orchestra.")
        ]
        assert "peanuts" not in json.dumps(hits)


def test_update_knowledge_of_another_owner_or_unknown_id_is_not_found(gql_ok):
    alice = Knowledge.objects.create(user=EndUser.objects.create(external_id="alice"), content="Alice fact.")
    shared = Knowledge.objects.create(user=None, content="Shared fact.")
    for knowledge_id, user_id in [(alice.pk, "bob"), (alice.pk, None), (shared.pk, "alice"), (999_999, "alice")]:
        result = gql_ok(UPDATE_KNOWLEDGE, {"id": str(knowledge_id), "userId": user_id, "content": "Changed."})
        what = "shared knowledge" if user_id is None else f"knowledge of user {user_id!r}"
        assert result["updateKnowledge"] == {
            "__typename": "OperationInfo",
            "messages": [{"kind": "ERROR", "field": None, "message": f"No {what} with id {knowledge_id}."}],
        }
    assert sorted(Knowledge.objects.values_list("content", flat=True)) == ["Alice fact.", "Shared fact."]


def test_delete_knowledge(gql_ok):
    alice = Knowledge.objects.create(user=EndUser.objects.create(external_id="alice"), content="Alice fact.")
    shared = Knowledge.objects.create(user=None, content="Shared fact.")

    def not_found(knowledge_id: int, user_id: str | None) -> dict[str, Any]:
        what = "shared knowledge" if user_id is None else f"knowledge of user {user_id!r}"
        message = f"No {what} with id {knowledge_id}."
        return {"__typename": "OperationInfo", "messages": [{"kind": "ERROR", "field": None, "message": message}]}

    def delete(knowledge_id: object, user_id: str | None) -> dict[str, Any]:
        return gql_ok(DELETE_KNOWLEDGE, {"id": str(knowledge_id), "userId": user_id})["deleteKnowledge"]

    # Another owner's id, or a shared one named as a user's: not found, and nothing deleted.
    assert delete(alice.pk, "bob") == not_found(alice.pk, "bob")
    assert delete(alice.pk, None) == not_found(alice.pk, None)
    assert delete(shared.pk, "alice") == not_found(shared.pk, "alice")
    assert delete("not-a-number", "alice") == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "id", "message": "'not-a-number' is not a knowledge id."}],
    }
    assert Knowledge.objects.count() == 2

    assert delete(alice.pk, "alice") == {"__typename": "DeleteKnowledgeResult", "deletedId": str(alice.pk)}
    assert delete(alice.pk, "alice") == not_found(alice.pk, "alice")
    assert delete(shared.pk, None) == {"__typename": "DeleteKnowledgeResult", "deletedId": str(shared.pk)}
    assert not Knowledge.objects.exists()


# --- diaries ---------------------------------------------------------------------------


def test_upsert_diary_creates_then_replaces_the_days_entry(gql_ok):
    variables = {"userId": "alice", "diaryDate": "2024-05-01", "content": "Went to Osaka."}
    created = gql_ok(UPSERT_DIARY, {**variables, "metadata": {"mood": "good"}})["upsertDiary"]
    diary = Diary.objects.get()
    assert created == {
        "__typename": "Diary",
        "id": str(diary.pk),
        "diaryDate": "2024-05-01",
        "content": "Went to Osaka.",
        "metadata": {"mood": "good"},
        "userId": "alice",
    }
    first_vector = list(diary.embedding)

    replaced = gql_ok(UPSERT_DIARY, {**variables, "content": "Went to Kyoto instead."})["upsertDiary"]
    assert replaced == {**created, "content": "Went to Kyoto instead."}  # same row; metadata kept
    diary = Diary.objects.get()
    assert diary.embedding_model == "all-MiniLM-L6-v2"
    assert list(diary.embedding) != first_vector

    invalid = gql_ok(UPSERT_DIARY, {**variables, "content": " "})["upsertDiary"]
    assert invalid == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "content", "message": "content must not be empty."}],
    }
    not_an_object = gql_ok(UPSERT_DIARY, {**variables, "metadata": ["mood", "good"]})["upsertDiary"]
    assert not_an_object == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "metadata", "message": "metadata must be a JSON object."}],
    }
    assert Diary.objects.values_list("content", "metadata").get() == ("Went to Kyoto instead.", {"mood": "good"})


@pytest.fixture
def diaries_of_alice(db):
    alice = EndUser.objects.create(external_id="alice")
    for day in ("2024-04-30", "2024-05-01", "2024-05-02", "2024-05-03"):
        Diary.objects.create(user=alice, diary_date=day, content=f"Alice on {day}.")
    Diary.objects.create(user=EndUser.objects.create(external_id="bob"), diary_date="2024-05-01", content="Bob.")


def test_diaries_by_date_or_inclusive_range(diaries_of_alice, gql_ok):
    def diaries(**variables: Any) -> list[str]:
        page = gql_ok(DIARIES, {"userId": "alice", **variables})["diaries"]
        assert all(d["userId"] == "alice" and d["content"] == f"Alice on {d['diaryDate']}." for d in page["items"])
        return [d["diaryDate"] for d in page["items"]]

    assert diaries() == ["2024-05-03", "2024-05-02", "2024-05-01", "2024-04-30"]  # newest first
    assert diaries(diaryDate="2024-05-01") == ["2024-05-01"]
    assert diaries(diaryDate="2024-06-01") == []
    assert diaries(since="2024-05-01", until="2024-05-02") == ["2024-05-02", "2024-05-01"]  # both ends included
    assert diaries(since="2024-05-02") == ["2024-05-03", "2024-05-02"]
    assert diaries(until="2024-05-01") == ["2024-05-01", "2024-04-30"]
    assert diaries(since="2024-05-02", until="2024-05-02") == ["2024-05-02"]
    page = gql_ok(DIARIES, {"userId": "alice", "limit": 2})["diaries"]
    assert ([d["diaryDate"] for d in page["items"]], page["hasNextPage"]) == (["2024-05-03", "2024-05-02"], True)


def test_delete_diary(diaries_of_alice, gql_ok):
    def delete(day: str) -> dict[str, Any]:
        return gql_ok(DELETE_DIARY, {"userId": "alice", "diaryDate": day})["deleteDiary"]

    assert delete("2024-05-01") == {"__typename": "DeleteDiaryResult", "deleted": True}
    assert delete("2024-05-01") == {"__typename": "DeleteDiaryResult", "deleted": False}
    assert delete("2024-06-01") == {"__typename": "DeleteDiaryResult", "deleted": False}
    remaining = Diary.objects.filter(user__external_id="alice").order_by("diary_date")
    assert [d.isoformat() for d in remaining.values_list("diary_date", flat=True)] == [
        "2024-04-30",
        "2024-05-02",
        "2024-05-03",
    ]
    assert Diary.objects.filter(user__external_id="bob", diary_date="2024-05-01").exists()


# --- forgetUser ------------------------------------------------------------------------


def test_forget_user_removes_everything_of_that_user_only(add_messages, gql_ok, summarize, search):
    for user_id in ("alice", "bob"):
        add_messages(user_id, "s1", [msg(f"{user_id} adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
        add_messages(user_id, "s2", [msg(f"{user_id} plays the cello.", "2024-05-02T10:00:00Z")])
        gql_ok(ADD_KNOWLEDGE, {"userId": user_id, "content": f"{user_id} is allergic to peanuts."})
        gql_ok(UPSERT_DIARY, {"userId": user_id, "diaryDate": "2024-05-01", "content": f"{user_id} went to Osaka."})
    summarize("bob")
    everything = {"history": 2, "sessions": 2, "summaries": 1, "knowledge": 1, "diaries": 1}
    assert totals(gql_ok, "alice") == everything
    bob_before = totals(gql_ok, "bob")
    # Facts raised from summarised sessions (candidates awaiting review) are the user's too.
    knowledge_rows = Knowledge.objects.filter(user__external_id="alice").count()
    alice_pk = EndUser.objects.get(external_id="alice").pk

    assert gql_ok(FORGET_USER, {"userId": "alice"})["forgetUser"] == {
        "__typename": "ForgetUserResult",
        "messages": 2,
        "sessions": 2,
        "summaries": 1,
        "knowledge": knowledge_rows,
        "diaries": 1,
    }
    assert totals(gql_ok, "alice") == {"history": 0, "sessions": 0, "summaries": 0, "knowledge": 0, "diaries": 0}
    found = search(userId="alice", query="What does alice play? Where did alice go?")
    assert (found["found"], found["hits"]) == (False, [])
    for model in (Message, Session, Summary, Knowledge, Diary):
        assert not model.objects.filter(user__external_id="alice").exists(), model
    # Nor in the knowledge's audit trail, which records each deleted row with its text.
    assert not Knowledge.history.filter(user_id=alice_pk).exists()
    assert Knowledge.history.filter(content__contains="bob").exists()

    assert bob_before == {**everything, "summaries": 2}
    assert totals(gql_ok, "bob") == bob_before
    bob = search(userId="bob", query="Which instrument does bob play?")
    assert {h["userId"] for h in bob["hits"]} == {"bob"}
    assert gql_ok(FORGET_USER, {"userId": "alice"})["forgetUser"] == {
        "__typename": "ForgetUserResult",
        "messages": 0,
        "sessions": 0,
        "summaries": 0,
        "knowledge": 0,
        "diaries": 0,
    }


# --- search ----------------------------------------------------------------------------


def summary_and_diary_hits(result: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The hits other than messages (summaries, knowledge, diaries) as (kind, session id or diary time), sorted."""
    return sorted(
        (h["kind"], h["sessionId"] or h["conversationTime"]) for h in result["hits"] if h["kind"] != "MESSAGE"
    )


@pytest.fixture
def alice_in_two_channels(add_messages, gql_ok, summarize):
    """alice: s1 on slack and s2 on web (both summarised), a diary entry and a fact."""
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")], channel="slack")
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T10:00:00Z")], channel="web")
    summarize("alice")
    gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-02", "content": "Cello lesson in the morning."})
    gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice owns a cat and a cello."})


def test_search_by_channel_leaves_out_other_channels_diaries_and_knowledge(alice_in_two_channels, search):
    query = "What about my cat and my cello?"
    everything = search(userId="alice", query=query, topK=10)
    assert summary_and_diary_hits(everything) == [
        ("DIARY", "2024-05-02T00:00:00+00:00"),
        ("KNOWLEDGE", None),
        ("SUMMARY", "s1"),
        ("SUMMARY", "s2"),
    ]
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="web")) == [("SUMMARY", "s2")]
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="slack")) == [("SUMMARY", "s1")]
    assert search(userId="alice", query=query, topK=10, channel="")["hits"] == everything["hits"]  # "" = no filter


def test_search_by_channel_finds_the_summary_of_a_session_spoken_in_several(add_messages, summarize, search):
    # The session is marked with its first channel (slack); its later messages came from the web.
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")], channel="slack")
    add_messages("alice", "s1", [msg("Miso likes tuna.", "2024-05-01T10:05:00Z")], channel="web")
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T10:00:00Z")], channel="slack")
    summarize("alice")
    query = "What about my cat and my cello?"
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="web")) == [("SUMMARY", "s1")]
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="slack")) == [
        ("SUMMARY", "s1"),
        ("SUMMARY", "s2"),
    ]
    assert search(userId="alice", query=query, topK=10, channel="email")["hits"] == []


@pytest.fixture
def alice_around_a_window(add_messages, gql_ok, summarize):
    """One single-message session at each edge of the local (UTC+9) days 2024-05-02..2024-05-03."""
    times = {
        "day-before-23-59": "2024-05-01T23:59:00+09:00",
        "since-00-00": "2024-05-02T00:00:00+09:00",
        "until-23-30": "2024-05-03T23:30:00+09:00",
        "day-after-00-00": "2024-05-04T00:00:00+09:00",
    }
    for session_id, at in times.items():
        add_messages("alice", session_id, [msg(f"Notes of session {session_id} about the garden.", at)])
    summarize("alice")
    for day in ("2024-05-01", "2024-05-02", "2024-05-03", "2024-05-04"):
        gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": day, "content": f"Garden work on {day}."})
    gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice grows tomatoes in her garden."})


def test_search_time_window_runs_from_local_midnight_to_the_midnight_after_until(alice_around_a_window, search):
    def garden(**window: Any) -> list[tuple[str, str | None]]:
        return summary_and_diary_hits(
            search(userId="alice", query="What happened in the garden?", topK=20, utcOffsetHours=9, **window)
        )

    # 23:59 local the day before `since` and 00:00 local the day after `until` are outside; knowledge too.
    assert garden(since="2024-05-02", until="2024-05-03") == [
        ("DIARY", "2024-05-02T00:00:00+00:00"),
        ("DIARY", "2024-05-03T00:00:00+00:00"),
        ("SUMMARY", "since-00-00"),
        ("SUMMARY", "until-23-30"),
    ]
    assert garden(since="2024-05-03") == [
        ("DIARY", "2024-05-03T00:00:00+00:00"),
        ("DIARY", "2024-05-04T00:00:00+00:00"),
        ("SUMMARY", "day-after-00-00"),
        ("SUMMARY", "until-23-30"),
    ]
    assert garden(until="2024-05-01") == [
        ("DIARY", "2024-05-01T00:00:00+00:00"),
        ("SUMMARY", "day-before-23-59"),
    ]


@pytest.mark.parametrize(
    ("day", "utc_offset_hours", "found"),
    [("2024-05-02", 9, True), ("2024-05-02", 0, False), ("2024-05-01", 0, True), ("2024-05-01", 9, False)],
)
def test_search_local_day_depends_on_the_utc_offset(day, utc_offset_hours, found, add_messages, summarize, search):
    # 20:00 UTC on 1 May is 05:00 on 2 May at UTC+9.
    add_messages("alice", "evening", [msg("We watched fireworks by the river.", "2024-05-01T20:00:00Z")])
    summarize("alice")
    result = search(userId="alice", query="What did we watch?", since=day, until=day, utcOffsetHours=utc_offset_hours)
    assert summary_and_diary_hits(result) == ([("SUMMARY", "evening")] if found else [])


def test_search_refuses_a_bad_window(search):
    result = search(userId="alice", query="anything", since="2024-05-02", until="2024-05-01", utcOffsetHours=15)
    assert result == {
        "__typename": "OperationInfo",
        "messages": [
            {"kind": "VALIDATION", "field": "utcOffsetHours", "message": "utcOffsetHours must be between -14 and 14."},
            {"kind": "VALIDATION", "field": "until", "message": "until must not be before since."},
        ],
    }


@pytest.mark.parametrize("window", [{"channel": "web"}, {"since": "2024-05-02"}, {"until": "2024-05-02"}])
def test_search_filters_apply_to_messages_too(window, add_messages, search):
    # One session, no summary yet: the hits are messages, and the filter keeps one of them.
    add_messages("alice", "s1", [msg("My locker code is 4471, in the gym basement.", "2024-05-01T10:00:00Z")], "slack")
    add_messages("alice", "s1", [msg("My bike lock code is 1234.", "2024-05-03T10:00:00Z")], channel="web")
    expected = {"channel": "My bike lock code is 1234.", "since": "My bike lock code is 1234."}
    expected["until"] = "My locker code is 4471, in the gym basement."
    result = search(userId="alice", query="What is my locker code?", **window)
    assert [h["content"] for h in result["hits"]] == [expected[next(iter(window))]]


def test_search_with_include_shared_and_a_filter_leaves_knowledge_out(add_messages, gql_ok, summarize, search):
    add_messages("alice", "s1", [msg("The support desk was closed this morning.", "2024-05-01T10:00:00Z")])
    summarize("alice")
    gql_ok(ADD_KNOWLEDGE, {"content": "The support desk opens at 9am on weekdays."})
    gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice calls the support desk often."})
    query = "When does the support desk open?"
    shared = search(userId="alice", query=query, includeShared=True)
    assert sorted((h["kind"], h["userId"]) for h in shared["hits"]) == [
        ("KNOWLEDGE", ""),
        ("KNOWLEDGE", "alice"),
        ("MESSAGE", "alice"),
        ("SUMMARY", "alice"),
    ]
    filtered = search(userId="alice", query=query, includeShared=True, since="2024-05-01")
    assert sorted((h["kind"], h["userId"]) for h in filtered["hits"]) == [("MESSAGE", "alice"), ("SUMMARY", "alice")]


def test_search_several_users_by_user_id_and_user_ids(add_messages, summarize, search):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    add_messages("bob", "s1", [msg("I adopted a dog named Rex.", "2024-05-01T11:00:00Z")])
    add_messages("carol", "s1", [msg("I adopted a parrot named Kiwi.", "2024-05-01T12:00:00Z")])
    for user_id in ("alice", "bob", "carol"):
        summarize(user_id)
    query = "Which pet did I adopt?"

    both = search(userId="alice", userIds=["bob"], query=query, includeRetrievedData=True)
    assert sorted((h["userId"], h["kind"], h["content"]) for h in both["hits"]) == [
        ("alice", "MESSAGE", "I adopted a cat named Miso."),
        ("alice", "SUMMARY", "user: I adopted a cat named Miso."),
        ("bob", "MESSAGE", "I adopted a dog named Rex."),
        ("bob", "SUMMARY", "user: I adopted a dog named Rex."),
    ]
    assert "[summary | session s1 | user alice | from 2024-05-01 10:00 UTC]" in both["retrievedData"]
    assert "[message | session s1 | user bob | 2024-05-01 11:00 UTC]" in both["retrievedData"]
    assert "Kiwi" not in json.dumps(both)

    one = search(userIds=["alice", "alice"], query=query, includeRetrievedData=True)
    assert {h["userId"] for h in one["hits"]} == {"alice"}
    assert len(one["hits"]) == 2
    assert "[summary | session s1 | from 2024-05-01 10:00 UTC]" in one["retrievedData"]
    assert "| user " not in one["retrievedData"]  # one user: not named


class ReportingEmbedder:
    """The local embedder, reporting 7 tokens a text as a hosted backend reports its usage."""

    def __init__(self) -> None:
        self.inner = LocalEmbedder.from_settings()
        self.model_name = self.inner.model_name

    def embed(self, texts: list[str]) -> EmbeddingBatch:
        return EmbeddingBatch(vectors=self.inner.embed(texts).vectors, usage=Usage(embedding_tokens=7 * len(texts)))


class ReportingChatModel:
    """An LLM that cites the first block it is given and reports its token usage."""

    mode = "generated"
    model_name = "reporting"
    sufficient = True

    def answer(self, *, question: str, blocks: list[str], **kwargs: Any) -> Answer:
        usage = Usage(prompt_tokens=100, completion_tokens=10)
        return Answer(text="As [1] says.", mode=self.mode, usage=usage, sufficient=self.sufficient)


class DoubtingChatModel(ReportingChatModel):
    """An LLM that finds the retrieved data never enough."""

    sufficient = False


@pytest.mark.parametrize("has_memory", [True, False])
@pytest.mark.parametrize(
    ("chat", "usage"),
    [
        # Offline, the answer quotes hits: only the query's embedding costs tokens.
        ("local", {"promptTokens": None, "completionTokens": None, "embeddingTokens": 7}),
        # An LLM answers once from all the sources ranked together.
        (
            "tests.test_api_operations.ReportingChatModel",
            {"promptTokens": 100, "completionTokens": 10, "embeddingTokens": 7},
        ),
    ],
)
def test_search_embeds_the_query_once_and_answers_once(
    has_memory, chat, usage, add_messages, summarize, search, settings
):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    if has_memory:
        summarize("alice")
    settings.EMBEDDING_BACKEND = "tests.test_api_operations.ReportingEmbedder"
    settings.CHAT_BACKEND = chat
    result = search(userId="alice", query="Which pet did I adopt?")
    assert result["usage"] == usage
    assert result["found"] is True
    assert "Miso" in result["hits"][0]["content"]
    assert result["hits"][0]["cited"] is True


def test_an_llm_that_finds_the_data_not_enough_answers_not_found(add_messages, search, settings):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    settings.CHAT_BACKEND = "tests.test_api_operations.DoubtingChatModel"
    result = search(userId="alice", query="Which pet did I adopt?")
    assert (result["found"], result["answer"], result["answerMode"]) == (False, "Not found in memory.", "generated")
    assert result["usage"]["completionTokens"] == 10


def test_search_usage_is_null_when_the_backend_reports_none(add_messages, search):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    result = search(userId="alice", query="Which pet did I adopt?")
    assert result["usage"] == {"promptTokens": None, "completionTokens": None, "embeddingTokens": None}


# --- limits ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "limit", "at_limit", "over_limit", "field", "message"),
    [
        (
            "MAX_MESSAGES_PER_CALL",
            2,
            [msg("one", "2024-05-01T10:00:00Z")] * 2,
            [msg("one", "2024-05-01T10:00:00Z")] * 3,
            "messages",
            "At most 2 messages per call (MAX_MESSAGES_PER_CALL).",
        ),
        (
            "MAX_MESSAGE_CHARS",
            10,
            [msg("x" * 10, "2024-05-01T10:00:00Z")],
            [msg("x" * 11, "2024-05-01T10:00:00Z")],
            "messages.0.content",
            "content is longer than 10 characters (MAX_MESSAGE_CHARS).",
        ),
        (
            "MAX_METADATA_BYTES",
            20,
            [msg("hi", "2024-05-01T10:00:00Z", metadata={"k": "x" * 11})],  # {"k": "xxxxxxxxxxx"}: 20 bytes
            [msg("hi", "2024-05-01T10:00:00Z", metadata={"k": "x" * 12})],
            "messages.0.metadata",
            "metadata is larger than 20 bytes as JSON (MAX_METADATA_BYTES).",
        ),
    ],
)
def test_add_messages_limits_are_refused_naming_the_limit(
    setting, limit, at_limit, over_limit, field, message, add_messages, settings
):
    setattr(settings, setting, limit)
    refused = add_messages("alice", "s1", over_limit)
    assert refused == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": field, "message": message}],
    }
    assert not Message.objects.exists()
    accepted = add_messages("alice", "s1", at_limit)
    assert accepted["__typename"] == "AddMessagesResult"
    assert Message.objects.count() == len(at_limit)


def test_query_depth_is_limited(gql, settings):
    settings.MAX_QUERY_DEPTH = 1
    assert ok(gql('{ history(userId: "alice") { totalCount } }')) == {"history": {"totalCount": 0}}
    body = gql('query Deep { history(userId: "alice") { items { content } } }')
    assert body["data"] is None
    assert [e["message"] for e in body["errors"]] == ["'Deep' exceeds maximum operation depth of 1"]


def test_aliases_are_limited(gql, settings):
    allowed = " ".join(f"a{i}: __typename" for i in range(settings.MAX_ALIASES))
    assert ok(gql(f"{{ {allowed} }}")) == {f"a{i}": "Query" for i in range(settings.MAX_ALIASES)}
    body = gql(f"{{ {allowed} extra: __typename }}")
    assert body["data"] is None
    assert [e["message"] for e in body["errors"]] == [f"{settings.MAX_ALIASES + 1} aliases found. Allowed: 15"]
