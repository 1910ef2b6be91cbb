"""``context`` and ``addMessages { context }`` at their edges: batches, backfilled turns, explicit queries,
end users with no rows yet, unicode and equal times."""

from __future__ import annotations

import pytest

from tests.graphql.documents import msg
from tests.search.test_context import CONTEXT

pytestmark = pytest.mark.django_db

ADD_SHARED_KNOWLEDGE = "mutation($c: String!) { addKnowledge(content: $c) { ... on Knowledge { id } } }"

ADD_WITH_CONTEXT = """
mutation Turn($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $windowTurns: Int) {
  addMessages(userId: $userId, sessionId: $sessionId, messages: $messages) {
    ... on AddMessagesResult {
      messages { id }
      context(windowTurns: $windowTurns) {
        query window { id content } memories { kind id content turns { id content } }
      }
    }
  }
}
"""


def context(gql, **input_fields):
    body = gql(CONTEXT, {"input": input_fields})
    assert "errors" not in body, body
    return body["data"]["context"]


def add_with_context(gql, session_id, messages, window_turns):
    body = gql(
        ADD_WITH_CONTEXT,
        {"userId": "alice", "sessionId": session_id, "messages": messages, "windowTurns": window_turns},
    )
    assert "errors" not in body, body
    return body["data"]["addMessages"]


def shown_message_ids(result):
    """The ids of every turn the memories show: the message hits, the turns around them, the turns facts cite."""
    return {t["id"] for m in result["memories"] for t in m["turns"]} | {
        m["id"] for m in result["memories"] if m["kind"] == "MESSAGE"
    }


def said(result):
    """What the memories say: their contents and the turns they show (a fact shows the turns it was raised from)."""
    return {m["content"] for m in result["memories"]} | {t["content"] for m in result["memories"] for t in m["turns"]}


def test_add_messages_context_never_shows_a_message_of_the_batch_it_stored(add_messages, gql):
    # A bot stores its last reply with the user's next message; only the newest turn is in the window.
    add_messages("alice", "s", [msg("I moved to Lisbon last year.", "2024-05-01T10:00:00Z")])
    added = add_with_context(
        gql,
        "s",
        [
            msg("Lisbon is a lovely city to live in.", "2024-05-01T10:01:00Z", role="assistant"),
            msg("Which city do I live in, Lisbon?", "2024-05-01T10:02:00Z"),
        ],
        window_turns=1,
    )
    result = added["context"]
    assert result["query"] == "Which city do I live in, Lisbon?"
    assert [m["content"] for m in result["memories"] if m["kind"] == "MESSAGE"] == ["I moved to Lisbon last year."]
    assert not {m["id"] for m in added["messages"]} & shown_message_ids(result)


def test_add_messages_context_asks_the_user_message_it_stored_even_when_said_before_the_last_turn(add_messages, gql):
    # The user's previous turn came from a device whose clock runs ahead: the new question is dated before it.
    add_messages("alice", "old", [msg("I work as a nurse at the city hospital.", "2024-04-01T10:00:00Z")])
    add_messages("alice", "s", [msg("What a nice day.", "2024-05-01T10:03:00Z")])
    add_messages("alice", "s", [msg("It is sunny here.", "2024-05-01T10:00:30Z", role="assistant")])
    result = add_with_context(gql, "s", [msg("Where do I work?", "2024-05-01T10:01:00Z")], window_turns=5)["context"]
    assert result["query"] == "Where do I work?"
    assert "I work as a nurse at the city hospital." in said(result)


def test_add_messages_context_of_a_batch_of_assistant_turns_asks_the_latest_user_message(add_messages, gql):
    add_messages("alice", "s", [msg("Where do I work?", "2024-05-01T10:00:00Z")])
    result = add_with_context(
        gql, "s", [msg("Let me check.", "2024-05-01T10:01:00Z", role="assistant")], window_turns=5
    )["context"]
    assert result["query"] == "Where do I work?"


def test_a_given_query_leaves_out_the_turn_of_the_session_that_says_it(add_messages, gql):
    # The client stored the message, then asks for the context of it with no window of its own.
    add_messages("alice", "old", [msg("My cat Miso is orange.", "2024-04-01T10:00:00Z")])
    add_messages("alice", "s", [msg("What colour is my cat Miso?", "2024-05-01T10:00:00Z")])
    result = context(gql, userId="alice", sessionId="s", windowTurns=0, query="What colour is my cat Miso?")
    assert "My cat Miso is orange." in said(result)
    assert "What colour is my cat Miso?" not in said(result)


def test_an_end_user_with_no_rows_yet_gets_shared_knowledge(gql):
    gql(ADD_SHARED_KNOWLEDGE, {"c": "The support desk opens at 9:00 JST on weekdays."})
    query = "When does the support desk open?"
    shared = context(gql, userId="newcomer", sessionId="first", query=query, includeShared=True)
    assert [m["content"] for m in shared["memories"]] == ["The support desk opens at 9:00 JST on weekdays."]
    assert "The support desk opens" in shared["prompt"]
    assert context(gql, userId="newcomer", sessionId="first", query=query)["memories"] == []


def test_an_unknown_session_kept_to_itself_has_nothing(add_messages, gql):
    add_messages("alice", "old", [msg("My cat Miso is orange.", "2024-04-01T10:00:00Z")])
    result = context(gql, userId="alice", sessionId="nope", query="What colour is Miso?", includeOtherSessions=False)
    assert (result["window"], result["memories"], result["prompt"]) == ([], [], "")


def test_emoji_turns_said_at_the_same_time_keep_the_order_they_were_sent_in(add_messages, gql):
    add_messages(
        "alice",
        "s",
        [
            msg("🐱🐱", "2024-05-01T10:00:00Z"),
            msg("ok 👍", "2024-05-01T10:00:00Z", role="assistant"),
            msg("🐶", "2024-05-01T10:00:00Z"),
        ],
    )
    result = context(gql, userId="alice", sessionId="s", windowTurns=2)
    assert [t["content"] for t in result["window"]] == ["ok 👍", "🐶"]
    assert result["query"] == "🐶"
    assert result["prompt"].endswith("[2024-05-01 10:00 UTC] user: 🐶")


def test_a_last_turn_longer_than_a_query_still_gets_a_context(add_messages, gql):
    add_messages("alice", "old", [msg("My cat Miso is orange.", "2024-04-01T10:00:00Z")])
    long_turn = "Tell me about my cat Miso. " + "And more. " * 3000
    add_messages("alice", "s", [msg(long_turn, "2024-05-01T10:00:00Z")])
    result = context(gql, userId="alice", sessionId="s", windowTurns=1)
    assert result["query"] == long_turn
    assert "My cat Miso is orange." in said(result)


@pytest.mark.parametrize(
    ("input_fields", "field"),
    [({"sessionId": "s\ud800"}, "sessionId"), ({"query": "Where \udc00 do I work?"}, "query")],
    ids=["sessionId", "query"],
)
def test_a_lone_surrogate_is_refused_naming_its_field(input_fields, field, gql):
    result = context(gql, **{"userId": "alice", "sessionId": "s", **input_fields})
    assert result == {
        "__typename": "OperationInfo",
        "messages": [{"field": field, "message": f"{field} must not contain a lone surrogate (U+D800-U+DFFF)."}],
    }
