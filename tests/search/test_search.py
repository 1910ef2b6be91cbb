"""``search`` over HTTP with the arguments a frontend sends: one ranking of every source, answers, scoping."""

from __future__ import annotations

import pytest

from memories.models import EndUser, Message
from memories.services.embeddings import embeddings_fill
from tests.conftest import SEARCH
from tests.factories import KnowledgeFactory

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
                "metadata": {"speaker": "Alice"},
            },
            {
                "role": "assistant",
                "content": "Salmon nigiri is a classic choice.",
                "createdAt": "2024-05-01T10:01:00Z",
                "metadata": {"speaker": "Bot"},
            },
            {
                "role": "user",
                "content": "By the way, my sister Jo moved to Lisbon and now works at a bakery there.",
                "createdAt": "2024-05-01T10:02:00Z",
                "metadata": {"speaker": "Alice"},
            },
            *[
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"Small talk about the weather, part {i}: it is sunny and warm today.",
                    "createdAt": f"2024-05-01T10:{10 + i}:00Z",
                }
                for i in range(12)
            ],
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
                "metadata": {"speaker": "Alice"},
            },
        ],
    )


def test_default_search_finds_a_message_no_summary_mentions(alice_two_sessions, search, gql):
    summaries = gql('{ summaries(userId: "alice") { results { sessionId content } } }')["data"]["summaries"]["results"]
    assert [s["sessionId"] for s in summaries] == ["s1"]
    assert "Lisbon" not in summaries[0]["content"]  # the offline summary keeps other sentences

    result = search(userId="alice", query="Where does my sister live now?")

    # The turn, as the fact raised from it, which shows it.
    top = result["hits"][0]
    assert (top["kind"], top["content"], top["sessionId"]) == ("KNOWLEDGE", "Alice's sister Jo moved to Lisbon.", "s1")
    assert [(t["speaker"], "Lisbon" in t["content"]) for t in top["turns"]] == [("Alice", True)]


def test_every_source_is_ranked_together_and_sources_narrow_it(alice_two_sessions, search):
    alice = EndUser.objects.get(external_id="alice")
    KnowledgeFactory(user=alice, content="Alice is allergic to peanuts.")
    embeddings_fill(kind="knowledge")

    hits = search(userId="alice", query="What food does Alice like or avoid?")["hits"]
    assert {"MESSAGE", "KNOWLEDGE"} <= {h["kind"] for h in hits}

    only = search(userId="alice", query="What food does Alice like or avoid?", sources=["KNOWLEDGE"])
    assert [h["kind"] for h in only["hits"]] == ["KNOWLEDGE"]
    assert only["stages"] == ["knowledge"]


def test_hits_are_ordered_by_relevance_and_keep_time_and_session(alice_two_sessions, search):
    hits = search(userId="alice", query="Which instrument am I learning?")["hits"]
    relevances = [h["relevance"] for h in hits]
    assert relevances == sorted(relevances, reverse=True)
    assert hits[0]["foundBy"][0].startswith(("vector #", "words #"))
    top = hits[0]
    assert (top["kind"], top["sessionId"], top["conversationTime"]) == ("MESSAGE", "s2", "2024-06-01T10:00:00+00:00")
    assert top["content"] == "I started learning to play the cello last month."


def test_offline_answer_quotes_the_turn_with_its_speaker_and_date(alice_two_sessions, search):
    result = search(userId="alice", query="Which instrument am I learning?")
    assert result["answerMode"] == "extractive"
    assert result["found"] is True
    first_line = result["answer"].splitlines()[0]
    assert first_line == "On 1 June 2024 Alice said: \u201cI started learning to play the cello last month.\u201d"
    assert "[summary" not in result["answer"]
    assert [h["cited"] for h in result["hits"]].count(True) >= 1


def test_an_unrelated_question_is_not_found_in_memory(alice_two_sessions, search):
    result = search(userId="alice", query="How do quantum computers factor large integers?")
    assert result["found"] is False
    assert result["answer"] == "Not found in memory."


def test_retrieval_only_makes_no_answer(alice_two_sessions, search):
    result = search(userId="alice", query="Which instrument am I learning?", answer=False)
    assert (result["answer"], result["answerMode"], result["found"]) == (None, "none", None)
    assert result["hits"]


def test_another_users_data_is_never_returned(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "My bank PIN is hidden in the blue notebook."}])
    add_messages("bob", "s1", [{"role": "user", "content": "I keep my bank PIN in the red notebook."}])
    result = search(userId="alice", query="Where is my bank PIN?", includeRetrievedData=True)
    assert {h["userId"] for h in result["hits"]} == {"alice"}
    assert "red notebook" not in result["retrievedData"]
    both = search(userIds=["alice", "bob"], query="Where is the bank PIN?", includeRetrievedData=True)
    assert {h["userId"] for h in both["hits"]} == {"alice", "bob"}
    assert "| user bob" in both["retrievedData"]


def test_shared_knowledge_only_when_asked(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "hello"}])
    KnowledgeFactory(user=None, content="The support desk opens at 9am on weekdays.")
    embeddings_fill(kind="knowledge")
    query = "When does the support desk open?"
    assert "KNOWLEDGE" not in {h["kind"] for h in search(userId="alice", query=query)["hits"]}
    shared = search(userId="alice", query=query, includeShared=True)
    assert shared["hits"][0]["kind"] == "KNOWLEDGE"
    assert shared["hits"][0]["userId"] == ""


def test_top_k_hits_are_returned_when_the_user_has_them(add_messages, search, settings):
    add_messages(
        "alice", "s1", [{"role": "user", "content": f"Note {i}: I visited city number {i}."} for i in range(14)]
    )
    add_messages("bob", "s1", [{"role": "user", "content": f"Bob note {i} about cities."} for i in range(40)])
    default = search(userId="alice", query="Which cities did I visit?")
    assert len(default["hits"]) == settings.SEARCH_DEFAULT_TOP_K
    three = search(userId="alice", query="Which cities did I visit?", topK=3)
    assert len(three["hits"]) == 3
    assert len({h["id"] for h in default["hits"]}) == len(default["hits"])
    assert {h["userId"] for h in default["hits"]} == {"alice"}


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
            {"role": "assistant", "content": "Lake Biwa is lovely in May.", "metadata": {"speaker": "Bot"}},
            {"role": "user", "content": "Unrelated: my laptop is broken.", "metadata": {"speaker": "Alice"}},
        ],
    )
    result = search(userId="alice", query="Where did Alice go kayaking?", topK=1, sources=["MESSAGE"])
    (hit,) = result["hits"]
    assert hit["content"] == "I went kayaking on Lake Biwa with my brother."
    assert [(t["speaker"], t["isHit"]) for t in hit["turns"]] == [("Bot", False), ("Alice", True), ("Bot", False)]
    assert (
        "Bot: What did you do on Saturday?\n> Alice: I went kayaking on Lake Biwa with my brother.\n"
        "Bot: Lake Biwa is lovely in May."
    ) in hit["text"]
    assert "laptop" not in hit["text"]


def test_messages_not_yet_embedded_are_found_by_their_words(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "My locker code is 4471, in the gym basement."}])
    Message.objects.update(embedding=None, embedding_model="")  # the embedding task has not run yet
    result = search(userId="alice", query="What is my locker code?")
    assert [(h["content"], h["score"]) for h in result["hits"]] == [
        ("My locker code is 4471, in the gym basement.", None)
    ]


def test_vectors_of_another_model_are_never_ranked_search_says_so(add_messages, gql):
    add_messages("alice", "s1", [{"role": "user", "content": "My favourite colour is teal."}])
    Message.objects.update(embedding_model="some-older-model")
    body = gql(SEARCH, {"input": {"userId": "alice", "query": "Which hue do I like best?"}})
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["code"] == "REEMBEDDING_NEEDED"
    assert "manage.py reembed" in body["errors"][0]["message"]


def test_unknown_user_gets_nothing(search):
    result = search(userId="nobody", query="What is my favorite food?")
    assert result["hits"] == []
    assert result["found"] is False


def test_bad_input_is_reported_per_field(search, settings):
    result = search(userIds=[], query="  ", topK=settings.SEARCH_MAX_TOP_K + 1, sources=[])
    assert result["__typename"] == "OperationInfo"
    assert {m["field"] for m in result["messages"]} == {"userIds", "query", "topK", "sources"}


def test_search_content_is_accepted_and_changes_nothing(alice_two_sessions, search):
    plain = search(userId="alice", query="Which instrument am I learning?")
    deprecated = search(userId="alice", query="Which instrument am I learning?", searchContent=False)
    assert [h["id"] for h in deprecated["hits"]] == [h["id"] for h in plain["hits"]]


class BrokenChatModel:
    """A chat backend whose every call fails as a bug would (chosen by CHAT_BACKEND's dotted path)."""

    mode = "generated"
    model_name = "broken"

    def answer(self, **kwargs):
        raise RuntimeError('relation "secret_table" does not exist: SELECT * FROM secret_table')


def test_unexpected_failures_are_masked(alice_two_sessions, gql, settings):
    settings.CHAT_BACKEND = "tests.search.test_search.BrokenChatModel"
    body = gql(SEARCH, {"input": {"userId": "alice", "query": "Which instrument am I learning?"}})
    assert body["data"] is None
    assert body["errors"][0]["message"] == "Unexpected error."
    assert body["errors"][0]["extensions"] == {"code": "INTERNAL_ERROR"}
    assert "secret_table" not in str(body)


def test_the_offline_answer_quotes_the_reply_to_a_question_said_at_the_same_time(add_messages, search):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "I love hiking in the hills.", "metadata": {"speaker": "Alice"}},
            {"role": "assistant", "content": "Which car do you drive to the hills?", "metadata": {"speaker": "Bot"}},
            {"role": "user", "content": "A small red hatchback.", "metadata": {"speaker": "Alice"}},
        ],
    )  # no createdAt: one batch, one time
    result = search(userId="alice", query="Which car do you drive to the hills?")
    assert "Alice said: \u201cA small red hatchback.\u201d" in result["answer"].splitlines()[0]


def test_the_offline_answer_does_not_quote_a_question_nobody_answered(add_messages, search):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "My favourite food is okonomiyaki.", "createdAt": "2024-05-01T10:00:00Z"},
            {"role": "assistant", "content": "Noted!", "createdAt": "2024-05-01T10:00:05Z"},
        ],
    )
    add_messages(
        "alice",
        "s2",
        [{"role": "user", "content": "What is my favourite food again?", "createdAt": "2024-05-20T10:00:00Z"}],
    )
    result = search(userId="alice", query="What is my favourite food?")
    assert result["found"] is True
    assert "okonomiyaki" in result["answer"]
    assert "again?" not in result["answer"]


def test_an_unanswered_question_alone_is_not_found_in_memory(add_messages, search):
    add_messages(
        "alice",
        "s1",
        [{"role": "user", "content": "What is my favourite food?", "createdAt": "2024-05-20T10:00:00Z"}],
    )
    result = search(userId="alice", query="What is my favourite food?")
    assert result["found"] is False
    assert result["answer"] == "Not found in memory."
