"""``search`` over HTTP with the arguments a frontend sends: one ranking of every source, answers, scoping.

And at its edges: a small ``topK``, an exchange shown from the statement it holds;
``sources`` with ``includeShared``, diaries by date, and only active facts searched.
"""

from __future__ import annotations

import pytest

from memories.models import EndUser, Message
from memories.services.api_keys import api_key_create
from memories.services.embeddings import embeddings_fill
from tests.conftest import SEARCH
from tests.factories import KnowledgeFactory
from tests.graphql.documents import CREATE_SUMMARIES_UP_TO, msg, say

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
    assert (top["kind"], top["sessionId"]) == ("KNOWLEDGE", "s1")
    assert top["content"].startswith("Alice's sister Jo moved to Lisbon")
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
    top = hits[0]  # the turn, as the fact raised from it
    assert (top["kind"], top["sessionId"], top["conversationTime"]) == ("KNOWLEDGE", "s2", "2024-06-01T10:00:00+00:00")
    assert top["turns"][0]["content"] == "I started learning to play the cello last month."


def test_offline_answer_quotes_the_fact_with_the_turn_and_its_date(alice_two_sessions, search):
    result = search(userId="alice", query="Which instrument am I learning?")
    assert result["answerMode"] == "extractive"
    assert result["found"] is True
    first_line = result["answer"].splitlines()[0]
    assert first_line == (
        "Known: Alice started learning to play the cello last month. "
        "(said on 1 June 2024: \u201cI started learning to play the cello last month.\u201d)"
    )
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
    result = search(userId="alice", query="What is my locker code?", sources=["MESSAGE"])
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


def test_the_place_kept_for_another_session_never_goes_to_an_irrelevant_turn(add_messages, search):
    add_messages(
        "alice",
        "a",
        [
            msg("My dog is called Rex.", "2024-05-01T10:00:00Z"),
            msg("Nice name!", "2024-05-01T10:01:00Z", role="assistant"),
            msg("Rex is a black labrador dog.", "2024-05-01T10:02:00Z"),
        ],
    )
    # Shares only the word "called" with the question.
    add_messages("alice", "b", [msg("The tax office called about my called-off appointment.", "2024-06-01T10:00:00Z")])
    result = search(userId="alice", query="What is my dog called?", topK=2, sources=["MESSAGE"])
    assert [h["content"] for h in result["hits"]] == ["My dog is called Rex.", "Rex is a black labrador dog."]
    assert len(result["answer"].splitlines()) == 2


@pytest.mark.parametrize(
    ("own", "found"),
    [
        ({}, True),
        ({"since": "2023-01-01", "until": "2023-12-31"}, True),
        ({"channel": "web"}, True),
        ({"until": "2023-06-03", "utcOffsetHours": -12}, True),
        ({"since": "2023-06-04"}, False),  # the named day is outside the caller's window
        ({"channel": "slack"}, False),
    ],
)
def test_a_day_the_question_names_is_searched_within_the_callers_own_window_and_channel(
    own, found, add_messages, search
):
    add_messages("alice", "march", [msg("I went to a concert with my friends.", "2023-03-01T10:00:00Z")])
    add_messages("alice", "june", [msg("We had a picnic by the lake.", "2023-06-03T10:00:00Z")])  # channel web
    add_messages("alice", "sept", [msg("I went to a concert on my own.", "2023-09-01T10:00:00Z")])
    result = search(userId="alice", query="What did I do on 3 June 2023?", topK=1, sources=["MESSAGE"], **own)
    hits = [(h["content"], h["foundBy"]) for h in result["hits"]]
    assert hits == ([("We had a picnic by the lake.", ["time #1"])] if found else [])


@pytest.mark.parametrize(
    ("input_fields", "field"),
    [({"query": "Where \ud800 do I work?"}, "query"), ({"channel": "web\udc00"}, "channel")],
    ids=["query", "channel"],
)
def test_a_lone_surrogate_is_refused_naming_its_field(input_fields, field, search):
    result = search(**{"userId": "alice", "query": "Where do I work?", **input_fields})
    message = f"{field} must not contain a lone surrogate (U+D800-U+DFFF)."
    assert result == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": field, "message": message}],
    }


ADD_KNOWLEDGE_FOR = """
mutation($c: String!, $u: String) { addKnowledge(content: $c, userId: $u) { ... on Knowledge { id } } }
"""


UPSERT_DIARY_DAY = """
mutation($u: String!, $d: Date!, $c: String!) {
  upsertDiary(userId: $u, diaryDate: $d, content: $c) { ... on Diary { id } }
}
"""


def test_sources_knowledge_with_include_shared_for_several_users(hashing_embedder, gql, search):
    gql(ADD_KNOWLEDGE_FOR, {"c": "Mia drinks green tea every morning.", "u": "mia"})
    gql(ADD_KNOWLEDGE_FOR, {"c": "Leo drinks black tea every morning.", "u": "leo"})
    gql(ADD_KNOWLEDGE_FOR, {"c": "Tea is served in the lobby every morning."})
    gql(UPSERT_DIARY_DAY, {"u": "mia", "d": "2024-05-01", "c": "Tea every morning in the garden."})

    result = search(
        userIds=["mia", "leo"], query="tea every morning", sources=["KNOWLEDGE"], includeShared=True, answer=False
    )
    unshared = search(userIds=["mia", "leo"], query="tea every morning", sources=["KNOWLEDGE"], answer=False)

    assert {h["kind"] for h in result["hits"]} == {"KNOWLEDGE"}
    assert {h["content"] for h in result["hits"]} == {
        "Mia drinks green tea every morning.",
        "Leo drinks black tea every morning.",
        "Tea is served in the lobby every morning.",
    }
    assert {h["content"] for h in unshared["hits"]} == {
        "Mia drinks green tea every morning.",
        "Leo drinks black tea every morning.",
    }
    shared = next(h for h in result["hits"] if h["content"].startswith("Tea is served"))
    assert shared["text"].startswith("[knowledge | shared]")


def test_shared_knowledge_is_searched_for_a_user_with_no_rows(hashing_embedder, gql, search):
    gql(ADD_KNOWLEDGE_FOR, {"c": "The support desk opens at nine."})
    result = search(userId="newcomer", query="When does the support desk open?", includeShared=True, answer=False)
    assert [h["content"] for h in result["hits"]] == ["The support desk opens at nine."]


def test_diaries_are_found_by_their_date_in_the_callers_window(hashing_embedder, gql, search):
    gql(UPSERT_DIARY_DAY, {"u": "mia", "d": "2024-05-01", "c": "Baked bread with my sister."})
    gql(UPSERT_DIARY_DAY, {"u": "mia", "d": "2024-05-03", "c": "Baked bread alone."})

    result = search(userId="mia", query="baked bread", since="2024-05-02", until="2024-05-03", answer=False)

    assert [(h["kind"], h["content"]) for h in result["hits"]] == [("DIARY", "Baked bread alone.")]
    assert result["hits"][0]["text"].startswith("[diary | 2024-05-03]")
    assert result["hits"][0]["conversationTime"].startswith("2024-05-03")


def test_only_active_facts_are_searched(hashing_embedder, gql, add_messages, search, settings):
    settings.SUMMARY_EVERY_MESSAGES = 0
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True
    add_messages("mia", "s1", [say("Mia", "I live in Osaka.", "2024-01-01T09:00:00Z")])
    add_messages("mia", "s2", [say("Mia", "I live in Kyoto now.", "2024-03-01T09:00:00Z")])
    gql(CREATE_SUMMARIES_UP_TO, {"userId": "mia"})
    candidates = gql('{ knowledge(userId: "mia", status: CANDIDATE) { results { id content } } }')
    facts = {k["content"]: k["id"] for k in candidates["data"]["knowledge"]["results"]}
    assert len(facts) == 2, facts

    before = search(userId="mia", query="Where do I live now?", sources=["KNOWLEDGE"], answer=False)
    assert before["hits"] == []  # candidates are not searched
    _, curator = api_key_create(name="curator", all_users=True, may_curate=True)
    for fact_id in facts.values():
        approve = f'mutation {{ approveKnowledge(id: "{fact_id}", userId: "mia") {{ ... on Knowledge {{ id }} }} }}'
        approved = gql(approve, key=curator)
        assert "errors" not in approved, approved
    after = search(userId="mia", query="Where do I live now?", sources=["KNOWLEDGE"], answer=False)

    # Osaka is superseded in the residence slot by what was said later.
    assert [h["content"] for h in after["hits"]] == [next(c for c in facts if "Kyoto" in c)]


def test_an_exchange_is_shown_from_the_users_statement_when_it_is_nearer_the_query(add_messages, search):
    """A long reply repeating the question's words outranks, by words, the user's turn that holds the
    fact; the exchange is then shown from the user's turn, the reply after it."""
    reply = (
        "Congratulations on all that writing! Poems are a wonderful habit. To keep writing poems, try a "
        "daily prompt, read poems by poets you admire, keep a notebook of images for future poems, and "
        "share a few poems with a writing group. Writing poems in a series can also help you finish more poems."
    )
    add_messages(
        "alice",
        "s1",
        [
            {
                "role": "user",
                "content": "I have written seventeen poems in the past two weeks.",
                "createdAt": "2024-05-01T10:00:00Z",
            },
            {"role": "assistant", "content": reply, "createdAt": "2024-05-01T10:01:00Z"},
            {"role": "user", "content": "My cat knocked a plant off the shelf.", "createdAt": "2024-05-01T10:02:00Z"},
        ],
    )
    result = search(userId="alice", query="How many poems have I written?", sources=["MESSAGE"])
    first = result["hits"][0]
    assert first["content"] == "I have written seventeen poems in the past two weeks."
    assert [(t["role"], t["isHit"]) for t in first["turns"]][:2] == [("user", True), ("assistant", False)]
    assert all(h["content"] != reply for h in result["hits"])  # shown once, after the statement
