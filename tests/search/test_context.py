"""``context`` and ``addMessages { context }``: the recent window, relevant memories, one prompt block.

And at their edges: batches, backfilled turns, explicit queries, end users with no rows yet (with the
embedder down too), unicode and equal times.
"""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAI
from tests.graphql.documents import MIA_MESSAGES, NO_FACTS, msg, ok, say

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
    assert any("My dog Biscuit is a three-year-old beagle." in m["text"] for m in result["memories"])


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
    # With a window of one turn, the session tells more than the window shows: that is a memory (its summary,
    # or the fact raised from the turn the summary would tell).
    older = context(gql, userId="alice", sessionId="now", query=query, windowTurns=1, maxTokens=5000)
    assert "now" in [m["sessionId"] for m in older["memories"] if m["kind"] in ("SUMMARY", "KNOWLEDGE")]


ADD_SHARED_KNOWLEDGE = "mutation($c: String!) { addKnowledge(content: $c) { ... on Knowledge { id } } }"


ADD_WITH_CONTEXT_WINDOW = """
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


def add_with_context(gql, session_id, messages, window_turns):
    body = gql(
        ADD_WITH_CONTEXT_WINDOW,
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
    # The earlier turn, as the fact raised from it, which quotes it.
    assert [t["content"] for m in result["memories"] for t in m["turns"]] == ["I moved to Lisbon last year."]
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


CONTEXT_WITH_USAGE = """
query($input: ContextInput!) {
  context(input: $input) {
    ... on Context { query window { content } memories { content } prompt usage { embeddingTokens } }
  }
}
"""


def test_context_for_an_end_user_with_no_rows_needs_no_embedder(openai_settings, fake_openai: FakeOpenAI, gql):
    # The first turn of a new user: there is no memory to search, so the embedder being down changes nothing.
    fake_openai.fail("embeddings", 500)

    body = gql(CONTEXT_WITH_USAGE, {"input": {"userId": "newcomer", "sessionId": "s1", "query": "Where do I live?"}})

    assert ok(body)["context"] == {
        "query": "Where do I live?",
        "window": [],
        "memories": [],
        "prompt": "",
        "usage": {"embeddingTokens": None},
    }


OPENAI_CONTEXT = """
query($input: ContextInput!) { context(input: $input) { ... on Context { query memories { sessionId content } } } }
"""


OPENAI_ADD_WITH_CONTEXT = """
mutation($userId: String!, $sessionId: String!, $messages: [MessageInput!]!) {
  addMessages(userId: $userId, sessionId: $sessionId, messages: $messages) {
    ... on AddMessagesResult { messages { content } context { query memories { sessionId content } } }
  }
}
"""


def test_context_and_add_messages_context_find_other_sessions_with_the_remote_embedder(
    openai_settings, fake_openai: FakeOpenAI, add_messages, gql
):
    fake_openai.chat_reply = NO_FACTS
    add_messages("mia", "s1", MIA_MESSAGES)
    question = [say("Mia", "Which food is my favourite again?", "2024-06-01T09:00:00Z")]

    body = gql(OPENAI_ADD_WITH_CONTEXT, {"userId": "mia", "sessionId": "s2", "messages": question})
    context = gql(OPENAI_CONTEXT, {"input": {"userId": "mia", "sessionId": "s2"}})["data"]["context"]

    assert "errors" not in body, body
    added = body["data"]["addMessages"]["context"]
    for result in (added, context):
        assert result["query"] == "Which food is my favourite again?"
        assert {"sessionId": "s1", "content": MIA_MESSAGES[0]["content"]} in result["memories"]


def test_context_reports_the_embedding_tokens_of_its_query(openai_settings, fake_openai: FakeOpenAI, add_messages, gql):
    fake_openai.chat_reply = NO_FACTS
    add_messages("mia", "s1", MIA_MESSAGES)
    usage = "usage { promptTokens completionTokens embeddingTokens }"
    document = f"query($input: ContextInput!) {{ context(input: $input) {{ ... on Context {{ {usage} }} }} }}"
    seen = len(fake_openai.responses)

    body = gql(document, {"input": {"userId": "mia", "sessionId": "s2", "query": "What is my favourite food?"}})

    embeddings = [sent["usage"] for path, sent in fake_openai.responses[seen:] if path.endswith("/embeddings")]
    assert len(embeddings) == 1
    assert body["data"]["context"]["usage"] == {
        "promptTokens": None,
        "completionTokens": None,
        "embeddingTokens": embeddings[0]["prompt_tokens"],
    }


def test_add_messages_context_with_the_embedder_failing_keeps_the_messages(
    openai_settings, fake_openai: FakeOpenAI, add_messages, gql
):
    fake_openai.fail("embeddings", 500)

    body = gql(OPENAI_ADD_WITH_CONTEXT, {"userId": "mia", "sessionId": "s1", "messages": MIA_MESSAGES})

    assert body["data"]["addMessages"]["context"] is None
    assert [m["content"] for m in body["data"]["addMessages"]["messages"]] == [m["content"] for m in MIA_MESSAGES]
    assert [e["extensions"]["code"] for e in body["errors"]] == ["MODEL_BACKEND_ERROR"]
