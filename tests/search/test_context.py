"""``context`` and ``addMessages { context }``: the recent window, relevant memories, one prompt block."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

CONTEXT = """
query Context($input: ContextInput!) {
  context(input: $input) {
    __typename
    ... on Context {
      query prompt
      window { id role speaker content createdAt }
      memories { kind id score sessionId content text turns { id content } }
      tokens { window memories prompt tokenizer }
    }
    ... on OperationInfo { messages { field message } }
  }
}
"""


def turn(role: str, content: str, at: str, speaker: str) -> dict:
    return {"role": role, "content": content, "createdAt": at, "metadata": {"speaker": speaker}}


@pytest.fixture
def alice_history(add_messages):
    """An earlier session with facts, then a current session of small talk."""
    add_messages(
        "alice",
        "earlier",
        [
            turn("user", "My dog Biscuit is a three-year-old beagle.", "2024-03-02T09:00:00Z", "Alice"),
            turn("assistant", "Beagles are lovely, energetic dogs.", "2024-03-02T09:01:00Z", "Bot"),
            turn("user", "I work as a nurse at the city hospital.", "2024-03-02T09:02:00Z", "Alice"),
        ],
    )
    add_messages(
        "alice",
        "now",
        [
            turn("user", "Good morning!", "2024-04-10T08:00:00Z", "Alice"),
            turn("assistant", "Good morning, how are you?", "2024-04-10T08:00:30Z", "Bot"),
            turn("user", "Fine. I am walking my dog Biscuit in the park.", "2024-04-10T08:01:00Z", "Alice"),
            turn("assistant", "Enjoy the walk!", "2024-04-10T08:01:30Z", "Bot"),
            turn("user", "How old is my dog again?", "2024-04-10T08:02:00Z", "Alice"),
        ],
    )


def context(gql, **input_fields):
    body = gql(CONTEXT, {"input": input_fields})
    assert "errors" not in body, body
    return body["data"]["context"]


def test_the_window_is_the_sessions_last_turns_oldest_first(alice_history, gql):
    result = context(gql, userId="alice", sessionId="now", windowTurns=3)
    assert [t["content"] for t in result["window"]] == [
        "Fine. I am walking my dog Biscuit in the park.",
        "Enjoy the walk!",
        "How old is my dog again?",
    ]


def test_memories_exclude_the_window_and_the_query_message(alice_history, gql):
    result = context(gql, userId="alice", sessionId="now", windowTurns=3)
    assert result["query"] == "How old is my dog again?"
    window_ids = {t["id"] for t in result["window"]}
    messages = [m for m in result["memories"] if m["kind"] == "MESSAGE"]
    shown = {t["id"] for m in messages for t in m["turns"]}
    assert not window_ids & shown
    assert "How old is my dog again?" not in {m["content"] for m in result["memories"]}
    # The fact raised from the earlier turn first, quoting it.
    assert "(from Alice: \u201cMy dog Biscuit is a three-year-old beagle.\u201d)" in result["memories"][0]["text"]
    assert result["memories"][0]["sessionId"] == "earlier"
    assert len(shown) == sum(len(m["turns"]) for m in messages)  # no turn shown twice


def test_the_prompt_has_labelled_dated_sections_and_counted_tokens(alice_history, gql):
    result = context(gql, userId="alice", sessionId="now", windowTurns=2)
    prompt = result["prompt"]
    assert "## Relevant memories" in prompt
    assert "## Recent conversation (session now, oldest first)" in prompt
    assert "three-year-old beagle" in prompt
    assert "[2024-04-10 08:02 UTC] Alice: How old is my dog again?" in prompt
    tokens = result["tokens"]
    assert tokens["tokenizer"].startswith("all-MiniLM-L6-v2 WordPiece")
    assert 0 < tokens["window"] < tokens["prompt"]
    assert 0 < tokens["memories"] < tokens["prompt"]


def test_the_gate_returns_no_memories_for_an_unrelated_query(alice_history, gql):
    result = context(gql, userId="alice", sessionId="now", query="Explain the tax rules for offshore bond funds.")
    assert result["memories"] == []
    assert "Relevant memories" not in result["prompt"]
    assert result["tokens"]["memories"] == 0


def test_the_token_budget_cuts_memories(alice_history, gql):
    roomy = context(gql, userId="alice", sessionId="now", windowTurns=1, query="Tell me about my dog and my job.")
    assert len(roomy["memories"]) >= 1
    tight = context(
        gql, userId="alice", sessionId="now", windowTurns=1, query="Tell me about my dog and my job.", maxTokens=1
    )
    assert tight["memories"] == []


ADD_KNOWLEDGE = (
    "mutation($c: String!, $u: String) { addKnowledge(content: $c, userId: $u) { ... on Knowledge { id } } }"
)
UPSERT_DIARY = """
mutation($u: String!, $c: String!) {
  upsertDiary(userId: $u, diaryDate: "2024-03-02", content: $c) { ... on Diary { id } }
}
"""


def test_only_this_session_when_other_sessions_are_left_out(alice_history, gql):
    # Knowledge and diaries come from every session: left out with the other sessions.
    gql(ADD_KNOWLEDGE, {"c": "Alice's dog Biscuit is a three-year-old beagle.", "u": "alice"})
    gql(UPSERT_DIARY, {"u": "alice", "c": "Alice told me about Biscuit, her three-year-old beagle."})
    gql(ADD_KNOWLEDGE, {"c": "Beagles usually live twelve to fifteen years."})  # shared
    query = "How old is Biscuit the beagle?"

    everything = context(gql, userId="alice", sessionId="now", windowTurns=1, query=query, includeShared=True)
    assert {"KNOWLEDGE", "DIARY"} <= {m["kind"] for m in everything["memories"]}
    assert {m["sessionId"] for m in everything["memories"]} - {None} > {"now"}

    alone = context(gql, userId="alice", sessionId="now", windowTurns=1, query=query, includeOtherSessions=False)
    assert alone["memories"]
    assert {m["sessionId"] for m in alone["memories"]} == {"now"}

    shared = context(
        gql, userId="alice", sessionId="now", windowTurns=1, query=query, includeOtherSessions=False, includeShared=True
    )
    assert [m["content"] for m in shared["memories"] if m["kind"] == "KNOWLEDGE"] == [
        "Beagles usually live twelve to fifteen years."
    ]
    assert "DIARY" not in {m["kind"] for m in shared["memories"]}


def test_a_new_session_has_an_empty_window_and_still_finds_memories(alice_history, gql):
    result = context(gql, userId="alice", sessionId="brand-new", query="What breed is my dog?")
    assert result["window"] == []
    assert "My dog Biscuit is a three-year-old beagle." in result["memories"][0]["text"]


def test_bad_input_is_reported_per_field(gql):
    result = context(gql, userId="alice", sessionId=" ", windowTurns=-1, maxTokens=-5, query="")
    assert result["__typename"] == "OperationInfo"
    assert {m["field"] for m in result["messages"]} == {"sessionId", "windowTurns", "maxTokens", "query"}


ADD_WITH_CONTEXT = """
mutation Turn($userId: String!, $sessionId: String!, $messages: [MessageInput!]!) {
  addMessages(userId: $userId, sessionId: $sessionId, messages: $messages) {
    ... on AddMessagesResult {
      messages { id }
      context(windowTurns: 4) { query prompt window { content } memories { content text } }
    }
  }
}
"""


def test_add_messages_returns_the_context_for_the_message_it_stored(alice_history, gql):
    body = gql(
        ADD_WITH_CONTEXT,
        {
            "userId": "alice",
            "sessionId": "now",
            "messages": [turn("user", "Where do I work?", "2024-04-10T08:03:00Z", "Alice")],
        },
    )
    result = body["data"]["addMessages"]["context"]
    assert result["query"] == "Where do I work?"
    assert result["window"][-1]["content"] == "Where do I work?"
    # A fact raised from the turn stands in for it, and quotes it.
    assert "I work as a nurse at the city hospital." in result["prompt"]


def test_a_failing_context_still_reports_the_stored_messages(alice_history, gql):
    body = gql(
        """mutation { addMessages(userId: "alice", sessionId: "now", messages: [{role: "user", content: "Hi"}]) {
             ... on AddMessagesResult { messages { content } context(maxTokens: -1) { prompt } } } }"""
    )
    assert body["data"]["addMessages"]["messages"] == [{"content": "Hi"}]
    assert body["data"]["addMessages"]["context"] is None
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def test_a_summary_of_turns_all_in_the_window_is_not_a_memory(alice_history, gql):
    body = gql(
        'mutation { createSummaries(userId: "alice", overwrite: true) '
        "{ ... on QueuedSummariesResult { queuedSessionIds } } }"
    )
    assert "errors" not in body, body
    query = "Fine. I am walking my dog Biscuit in the park."
    in_view = context(gql, userId="alice", sessionId="now", query=query, maxTokens=5000)
    assert "now" not in [m["sessionId"] for m in in_view["memories"] if m["kind"] == "SUMMARY"]
    # With a window of one turn, the summary tells more than the window shows: it is a memory.
    older = context(gql, userId="alice", sessionId="now", query=query, windowTurns=1, maxTokens=5000)
    assert "now" in [m["sessionId"] for m in older["memories"] if m["kind"] == "SUMMARY"]
