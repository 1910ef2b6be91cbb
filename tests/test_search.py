"""The search pipeline over HTTP: stages, scoping, validation, errors."""

from __future__ import annotations

import pytest

from memories.models import EndUser, Knowledge, Message
from memories.services.embeddings import embeddings_fill
from tests.conftest import SEARCH

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_two_sessions(add_messages):
    add_messages(
        "alice",
        "s1",
        [
            {
                "role": "user",
                "content": "My favourite food is sushi, especially salmon nigiri.",
                "createdAt": "2024-05-01T10:00:00Z",
            },
            {"role": "assistant", "content": "Salmon nigiri is a classic choice.", "createdAt": "2024-05-01T10:01:00Z"},
        ],
    )
    add_messages(
        "alice",
        "s2",
        [
            {
                "role": "user",
                "content": "I started learning to play the cello last month.",
                "createdAt": "2024-06-01T10:00:00Z",
            },
        ],
    )


def test_stage_one_answers_from_summaries(alice_two_sessions, search):
    result = search(userId="alice", query="What is my favorite food?", includeRetrievedData=True)
    assert result["stages"] == ["memory"]
    assert result["answerMode"] == "extractive"
    assert "sushi" in result["answer"]
    top = result["hits"][0]
    assert (top["kind"], top["sessionId"], top["userId"]) == ("SUMMARY", "s1", "alice")
    assert top["conversationTime"] == "2024-05-01T10:00:00+00:00"
    assert "[summary | session s1 | 2024-05-01 10:00 UTC to 2024-05-01 10:01 UTC]" in result["retrievedData"]


def test_current_session_without_summary_is_found_through_messages(alice_two_sessions, search):
    # s2 is the current session: no summary yet, stage 1 cannot see it.
    result = search(userId="alice", query="Which instrument am I learning?", searchContent=True, topK=3)
    assert result["stages"] == ["memory", "messages"]
    message_hits = [h for h in result["hits"] if h["kind"] == "MESSAGE"]
    assert message_hits[0]["content"] == "I started learning to play the cello last month."
    assert message_hits[0]["sessionId"] == "s2"
    assert "cello" in result["answer"]


def test_messages_are_searched_only_when_asked_or_when_memory_is_empty(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "I started learning to play the cello."}])
    EndUser.objects.get(external_id="alice")
    Knowledge.objects.create(user=EndUser.objects.get(external_id="alice"), content="Alice likes jazz music.")
    embeddings_fill(kind="knowledge")
    without = search(userId="alice", query="Which instrument am I learning?")
    assert without["stages"] == ["memory"]
    assert {h["kind"] for h in without["hits"]} == {"KNOWLEDGE"}
    with_content = search(userId="alice", query="Which instrument am I learning?", searchContent=True)
    assert with_content["stages"] == ["memory", "messages"]
    assert "cello" in with_content["answer"]
    # With nothing in stage 1, messages are searched even without searchContent.
    Knowledge.objects.all().delete()
    assert search(userId="alice", query="Which instrument am I learning?")["stages"] == ["memory", "messages"]


def test_another_users_data_is_never_returned(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "My bank PIN is hidden in the blue notebook."}])
    add_messages("bob", "s1", [{"role": "user", "content": "I keep my bank PIN in the red notebook."}])
    result = search(userId="alice", query="Where is my bank PIN?", searchContent=True, includeRetrievedData=True)
    assert {h["userId"] for h in result["hits"]} == {"alice"}
    assert "red notebook" not in result["retrievedData"]
    both = search(
        userIds=["alice", "bob"], query="Where is the bank PIN?", searchContent=True, includeRetrievedData=True
    )
    assert {h["userId"] for h in both["hits"]} == {"alice", "bob"}
    assert "| user bob |" in both["retrievedData"]


def test_shared_knowledge_only_when_asked(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "hello"}])
    Knowledge.objects.create(user=None, content="The support desk opens at 9am on weekdays.")
    embeddings_fill(kind="knowledge")
    query = "When does the support desk open?"
    assert "KNOWLEDGE" not in {h["kind"] for h in search(userId="alice", query=query)["hits"]}
    shared = search(userId="alice", query=query, includeShared=True)
    assert shared["hits"][0]["kind"] == "KNOWLEDGE"
    assert shared["hits"][0]["userId"] == ""


def test_top_k_rows_are_returned_when_the_user_has_them(add_messages, search):
    add_messages(
        "alice", "s1", [{"role": "user", "content": f"Note {i}: I visited city number {i}."} for i in range(12)]
    )
    add_messages("bob", "s1", [{"role": "user", "content": f"Bob note {i} about cities."} for i in range(40)])
    result = search(userId="alice", query="Which cities did I visit?", topK=10)
    assert result["stages"] == ["memory", "messages"]
    assert len(result["hits"]) == 10
    assert len({h["id"] for h in result["hits"]}) == 10
    assert {h["userId"] for h in result["hits"]} == {"alice"}


def test_message_hits_show_the_turns_around_them(add_messages, search):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "assistant", "content": "What did you do on Saturday?", "metadata": {"speaker": "Bot"}},
            {
                "role": "user",
                "content": "I went kayaking on Lake Biwa with my brother.",
                "metadata": {"speaker": "Alice"},
            },
            {"role": "assistant", "content": "That sounds fun!", "metadata": {"speaker": "Bot"}},
            {"role": "user", "content": "Unrelated: my laptop is broken.", "metadata": {"speaker": "Alice"}},
        ],
    )
    result = search(
        userId="alice", query="Where did Alice go kayaking?", searchContent=True, topK=1, includeRetrievedData=True
    )
    message_hits = [h for h in result["hits"] if h["kind"] == "MESSAGE"]
    assert [h["content"] for h in message_hits] == ["I went kayaking on Lake Biwa with my brother."]
    assert (
        "Bot: What did you do on Saturday?\n> Alice: I went kayaking on Lake Biwa with my brother.\n"
        "Bot: That sounds fun!"
    ) in result["retrievedData"]
    assert "laptop" not in result["retrievedData"]


def test_messages_not_yet_embedded_are_found_by_their_words(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "My locker code is 4471, in the gym basement."}])
    Message.objects.update(embedding=None, embedding_model="")  # the embedding task has not run yet
    result = search(userId="alice", query="What is my locker code?", searchContent=True)
    assert [(h["content"], h["score"]) for h in result["hits"]] == [
        ("My locker code is 4471, in the gym basement.", None)
    ]


def test_vectors_of_another_model_are_never_ranked_search_says_so(add_messages, gql):
    add_messages("alice", "s1", [{"role": "user", "content": "My favourite colour is teal."}])
    Message.objects.update(embedding_model="some-older-model")
    body = gql(SEARCH, {"input": {"userId": "alice", "query": "Which hue do I like best?", "searchContent": True}})
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["code"] == "REEMBEDDING_NEEDED"
    assert "manage.py reembed" in body["errors"][0]["message"]


def test_unknown_user_gets_no_answer(search):
    result = search(userId="nobody", query="What is my favorite food?")
    assert result["answer"] is None
    assert result["hits"] == []


def test_bad_input_is_reported_per_field(search, settings):
    result = search(userIds=[], query="  ", topK=settings.SEARCH_MAX_TOP_K + 1)
    assert result["__typename"] == "OperationInfo"
    assert {m["field"] for m in result["messages"]} == {"userIds", "query", "topK"}


def test_unexpected_failures_are_masked(gql, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError('relation "secret_table" does not exist: SELECT * FROM secret_table')

    monkeypatch.setattr("memories.graphql.schema.search_memories", broken)
    body = gql(SEARCH, {"input": {"userId": "alice", "query": "anything"}})
    assert body["data"] is None
    assert body["errors"][0]["message"] == "Unexpected error."
    assert body["errors"][0]["extensions"] == {"code": "INTERNAL_ERROR"}
    assert "secret_table" not in str(body)


def test_a_search_that_fails_before_it_needs_the_vector_gives_the_embedding_up(monkeypatch):
    """The local model's pipe (EMBEDDING_PROCESS) goes back at once, not when the garbage collector runs."""
    from concurrent.futures import Future

    from memories import search as search_module

    started: list[Future] = []

    class Embedder:
        def embed_later(self, texts):  # noqa: ANN001, ANN202
            started.append(Future())
            return started[-1]

    def failing_ranking(**kwargs):  # noqa: ANN003, ANN202
        raise RuntimeError("database gone")

    monkeypatch.setattr(search_module, "get_embedder", Embedder)
    monkeypatch.setattr(search_module, "rank_messages_by_text", failing_ranking)
    with pytest.raises(RuntimeError, match="database gone"):
        search_module.search_memories(
            user_external_ids=["alice"], query="favourite food?", search_content=True, answer=False
        )
    assert len(started) == 1
    assert started[0].cancelled()
