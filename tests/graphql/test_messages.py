"""addMessages, history and summaries over HTTP."""

from __future__ import annotations

import pytest

from memories.graphql.inputs import MessageInput
from memories.models import Message, Session

pytestmark = pytest.mark.django_db

HISTORY = """
query H($userId: String!, $sessionId: String, $channel: String, $since: DateTime, $until: DateTime,
        $limit: Int! = 100, $offset: Int! = 0) {
  history(userId: $userId, sessionId: $sessionId, channel: $channel, since: $since, until: $until,
          pagination: {limit: $limit, offset: $offset}) {
    results { content role channel sessionId createdAt }
  }
}
"""

SUMMARIES = """
query S($userId: String!, $sessionId: String) {
  summaries(userId: $userId, sessionId: $sessionId) {
    results { sessionId content mode messageCount coversFrom coversUntil }
  }
}
"""


def test_add_messages_stores_them_with_conversation_time_and_metadata(add_messages):
    payload = add_messages(
        "alice",
        "s1",
        [
            {
                "role": "user",
                "content": "I moved to Osaka.",
                "createdAt": "2024-05-01T09:00:00+09:00",
                "metadata": {"speaker": "Alice"},
            },
            {"role": "assistant", "content": "How do you like it?", "createdAt": "2024-05-01T09:01:00+09:00"},
        ],
        channel="slack",
    )
    assert payload["__typename"] == "AddMessagesResult"
    assert payload["session"] == {
        "sessionId": "s1",
        "userId": "alice",
        "channel": "slack",
        "firstMessageAt": "2024-05-01T00:00:00+00:00",
        "lastMessageAt": "2024-05-01T00:01:00+00:00",
    }
    assert [(m["role"], m["content"], m["metadata"]) for m in payload["messages"]] == [
        ("user", "I moved to Osaka.", {"speaker": "Alice"}),
        ("assistant", "How do you like it?", {}),
    ]
    # Embedded by the (sync) worker after commit, not in the request.
    assert Message.objects.filter(embedding__isnull=False, embedding_model="all-MiniLM-L6-v2").count() == 2


def test_created_at_defaults_to_now(add_messages):
    payload = add_messages("alice", "s1", [{"role": "user", "content": "hello there"}])
    assert payload["messages"][0]["createdAt"] is not None


def test_invalid_input_comes_back_as_operation_info_naming_the_field(add_messages):
    payload = add_messages(
        "alice",
        "s1",
        [
            {"role": "robot", "content": "hi"},
            {"role": "user", "content": "   "},
            {"role": "user", "content": "ok", "createdAt": "2024-05-01T09:00:00"},
        ],
    )
    assert payload["__typename"] == "OperationInfo"
    fields = {m["field"]: m["message"] for m in payload["messages"]}
    assert set(fields) == {"messages.0.role", "messages.1.content", "messages.2.createdAt"}
    assert "user, assistant, system" in fields["messages.0.role"]
    assert Message.objects.count() == 0  # nothing half-stored


def test_resending_messages_with_external_ids_stores_nothing_twice(add_messages):
    messages = [
        {"role": "user", "content": "one", "externalId": "m1"},
        {"role": "user", "content": "two", "externalId": "m2"},
    ]
    add_messages("alice", "s1", messages)
    again = add_messages("alice", "s1", [*messages, {"role": "user", "content": "three", "externalId": "m3"}])
    assert again["skipped"] == 2
    assert [m["content"] for m in again["messages"]] == ["three"]
    assert Message.objects.count() == 3


def test_history_is_ascending_by_conversation_time_and_filtered(add_messages, gql):
    add_messages(
        "alice", "s2", [{"role": "user", "content": "later", "createdAt": "2024-05-03T10:00:00Z"}], channel="web"
    )
    add_messages(
        "alice", "s1", [{"role": "user", "content": "earlier", "createdAt": "2024-05-01T10:00:00Z"}], channel="slack"
    )
    add_messages("bob", "s1", [{"role": "user", "content": "bob's", "createdAt": "2024-05-02T10:00:00Z"}])

    def history(**variables):
        body = gql(HISTORY, {"userId": "alice", **variables})
        assert "errors" not in body, body
        return [m["content"] for m in body["data"]["history"]["results"]]

    assert history() == ["earlier", "later"]
    assert history(sessionId="s1") == ["earlier"]
    assert history(channel="web") == ["later"]
    assert history(since="2024-05-02T00:00:00Z") == ["later"]
    assert history(until="2024-05-03T10:00:00Z") == ["earlier"]  # until is exclusive
    assert history(limit=1, offset=1) == ["later"]


def test_same_session_id_of_two_users_never_mixes(add_messages, gql):
    add_messages("alice", "shared-id", [{"role": "user", "content": "alice secret"}])
    add_messages("bob", "shared-id", [{"role": "user", "content": "bob secret"}])
    body = gql(HISTORY, {"userId": "bob", "sessionId": "shared-id"})
    assert [m["content"] for m in body["data"]["history"]["results"]] == ["bob secret"]
    assert Session.objects.filter(external_id="shared-id").count() == 2


@pytest.mark.parametrize("rows", [3, 30])
def test_history_query_count_does_not_grow_with_rows(rows, add_messages, gql, django_assert_num_queries):
    add_messages("alice", "s1", [{"role": "user", "content": f"message {i}"} for i in range(rows)])
    # Two hold maintenance off while the request runs (memories.maintenance), one authenticates the key
    # (with its users), one loads the page (session joined).
    with django_assert_num_queries(4):
        body = gql(HISTORY, {"userId": "alice"})
    assert len(body["data"]["history"]["results"]) == rows


def test_summaries_of_a_user(add_messages, gql):
    add_messages(
        "alice", "s1", [{"role": "user", "content": "I adopted a cat named Miso.", "createdAt": "2024-05-01T10:00:00Z"}]
    )
    # A new session queues the summary of the previous one.
    add_messages("alice", "s2", [{"role": "user", "content": "Good morning.", "createdAt": "2024-05-02T10:00:00Z"}])
    body = gql(SUMMARIES, {"userId": "alice"})
    assert body["data"]["summaries"]["results"] == [
        {
            "sessionId": "s1",
            "content": "user: I adopted a cat named Miso.",
            "mode": "extractive",
            "messageCount": 1,
            "coversFrom": "2024-05-01T10:00:00+00:00",
            "coversUntil": "2024-05-01T10:00:00+00:00",
        }
    ]
    assert gql(SUMMARIES, {"userId": "bob"})["data"]["summaries"]["results"] == []


def test_stored_rows_hold_every_field_in_the_order_sent(add_messages):
    payload = add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "first", "externalId": "a", "metadata": {"speaker": "Alice", "n": [1, 2]}},
            {"role": "assistant", "content": "second", "createdAt": "2024-05-01T09:00:00+09:00"},
            {"role": "system", "content": "third", "externalId": "c"},
        ],
        channel="slack",
    )
    rows = list(Message.objects.order_by("pk"))
    assert [int(m["id"]) for m in payload["messages"]] == [row.pk for row in rows]
    session = Session.objects.get()
    assert [(r.role, r.content, r.external_id, r.metadata, r.channel) for r in rows] == [
        ("user", "first", "a", {"speaker": "Alice", "n": [1, 2]}, "slack"),
        ("assistant", "second", "", {}, "slack"),
        ("system", "third", "c", {}, "slack"),
    ]
    assert all(r.session_id == session.pk and r.user_id == session.user_id for r in rows)
    assert rows[1].created_at.isoformat() == "2024-05-01T00:00:00+00:00"
    assert rows[0].created_at == rows[2].created_at == rows[0].received_at == rows[1].received_at
    # The full-text column is generated from the content and the speaker's name.
    assert Message.objects.filter(search_vector="alice").get().content == "first"


def test_new_messages_have_no_vector_until_the_worker_embeds_them():
    from memories.services.messages import MessageIn, messages_add

    # Without the commit the embedding task is not run.
    added = messages_add(
        user_external_id="alice", session_external_id="s1", messages=[MessageIn(role="user", content="hi")]
    )
    row = Message.objects.get()
    assert row.pk == added.messages[0].pk
    assert added.messages[0]._state.adding is False
    assert (row.embedding, row.embedding_model) == (None, "")


def test_add_messages_query_count(django_assert_num_queries):
    from memories.services.messages import MessageIn, messages_add

    def add(user: str, session: str, n: int) -> None:
        messages_add(
            user_external_id=user,
            session_external_id=session,
            messages=[MessageIn(role="user", content=f"message {i}") for i in range(n)],
        )

    # In the test's transaction: savepoint and release around it; the end user (select, savepoint,
    # insert, release) and its row lock; the session (the same four); the messages in one insert; the
    # session's times; whether the session is due a rolling summary. A new user has no previous session.
    with django_assert_num_queries(14):
        add("alice", "s1", 100)
    # A known user's new session: the user in one select and its lock, the session as above, the
    # insert, the times, the rolling-summary check, and the user's previous session (to summarise).
    with django_assert_num_queries(12):
        add("alice", "s2", 1)
    # More messages in that session.
    with django_assert_num_queries(8):
        add("alice", "s2", 10)


def test_any_text_is_stored_as_sent(add_messages):
    texts = ["NULL", "null", 'a "quoted" {brace}, comma\\backslash', "line\nbreak\ttab", "日本語 🎉", " ' "]
    add_messages(
        "alice",
        "s1",
        [{"role": "user", "content": t, "externalId": t, "metadata": {"t": t}} for t in texts],
    )
    rows = Message.objects.order_by("pk")
    assert [(r.content, r.external_id, r.metadata) for r in rows] == [(t, t, {"t": t}) for t in texts]


def test_strawberry_builds_each_message_input_through_its_hook(add_messages, monkeypatch):
    # ``memories.graphql.inputs`` builds MessageInput itself (faster than Strawberry's field by field on a
    # large call): this fails when a Strawberry release stops calling that hook.
    definition = MessageInput.__strawberry_definition__
    hook, seen = definition.from_input, []
    monkeypatch.setattr(
        definition, "from_input", lambda cls, value, context: seen.append(value) or hook(cls, value, context)
    )
    add_messages("alice", "s1", [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}])
    assert [value["content"] for value in seen] == ["one", "two"]
    assert list(Message.objects.order_by("pk").values_list("content", flat=True)) == ["one", "two"]
