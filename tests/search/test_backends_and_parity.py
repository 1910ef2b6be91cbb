"""``search``, ``context`` and summaries with the ``openai`` backends (a fake server), and chatmemory parity edges.

The generated answer's citations, "insufficient" answers, token usage, backend failures with
nothing half-written, summaries written by a chat model; ``history``/``sessions`` recency,
``createSummaries(maxCount)``, per-user deletes, ``sources`` with ``includeShared`` and
knowledge statuses in search.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from memories.llm import get_embedder
from memories.llm.extractive import ExtractiveChatModel
from memories.models import Summary
from memories.services.api_keys import api_key_create
from memories.services.messages import MessageIn, messages_add
from memories.tasks import sweep
from tests.conftest import SEARCH

if TYPE_CHECKING:
    from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

NO_FACTS = json.dumps({"facts": []})


def say(speaker: str, content: str, at: str, role: str | None = None) -> dict:
    role = role or ("assistant" if speaker == "Bot" else "user")
    return {"role": role, "content": content, "createdAt": at, "metadata": {"speaker": speaker}}


MESSAGES = [
    say("Mia", "My favourite food is sushi, especially salmon nigiri.", "2024-05-01T09:00:00Z"),
    say("Bot", "Sushi is a great choice!", "2024-05-01T09:00:10Z"),
    say("Mia", "I also adopted a cat named Miso last week.", "2024-05-01T09:00:20Z"),
]

CITED = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { answer found hits { content cited } } } }"


# --- the generated answer ---------------------------------------------------------------


@pytest.mark.parametrize("reply", ["Sushi, and a cat [1, 2].", "Sushi, and a cat [1,2].", "Sushi, and a cat [1][2]."])
def test_a_generated_answer_cites_every_number_it_gives_in_any_bracket_style(
    openai_settings, fake_openai: FakeOpenAI, add_messages, gql, reply
):
    add_messages("mia", "s1", MESSAGES)
    fake_openai.chat_reply = reply

    query = "Is sushi my favourite food, and is Miso my cat?"
    result = gql(CITED, {"i": {"userId": "mia", "query": query, "topK": 3}})["data"]["search"]

    assert result["found"] is True
    assert len(result["hits"]) >= 2
    assert [h["cited"] for h in result["hits"]] == [True, True] + [False] * (len(result["hits"]) - 2)


def test_insufficient_data_is_not_found_and_cites_nothing_but_counts_the_tokens(
    openai_settings, fake_openai: FakeOpenAI, add_messages, search
):
    add_messages("mia", "s1", MESSAGES)
    fake_openai.chat_reply = "INSUFFICIENT_DATA"
    seen = len(fake_openai.responses)

    result = search(userId="mia", query="What is my favourite food?")

    assert (result["found"], result["answer"], result["answerMode"]) == (False, "Not found in memory.", "generated")
    assert not any(h["cited"] for h in result["hits"])
    new = fake_openai.responses[seen:]
    chat = [body["usage"] for path, body in new if path.endswith("/chat/completions")]
    embeddings = [body["usage"] for path, body in new if path.endswith("/embeddings")]
    assert result["usage"] == {
        "promptTokens": sum(u["prompt_tokens"] for u in chat),
        "completionTokens": 1,
        "embeddingTokens": sum(u["prompt_tokens"] for u in embeddings),
    }


def test_retrieval_only_reports_the_embedding_tokens_alone(openai_settings, fake_openai, add_messages, search):
    add_messages("mia", "s1", MESSAGES)

    result = search(userId="mia", query="What is my favourite food?", answer=False)

    assert result["usage"] == {"promptTokens": None, "completionTokens": None, "embeddingTokens": 5}
    assert not fake_openai.requests_to("chat")


def test_a_chat_timeout_is_model_backend_timeout(openai_settings, fake_openai: FakeOpenAI, add_messages, gql):
    add_messages("mia", "s1", MESSAGES)
    openai_settings.OPENAI_TIMEOUT_SECONDS = 0.3
    fake_openai.hang.add("chat")

    body = gql(SEARCH, {"input": {"userId": "mia", "query": "What is my favourite food?"}})

    assert [e["extensions"]["code"] for e in body["errors"]] == ["MODEL_BACKEND_TIMEOUT"]


# --- context with the remote embedder ---------------------------------------------------

CONTEXT = """
query($input: ContextInput!) { context(input: $input) { ... on Context { query memories { sessionId content } } } }
"""

ADD_WITH_CONTEXT = """
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
    add_messages("mia", "s1", MESSAGES)
    question = [say("Mia", "Which food is my favourite again?", "2024-06-01T09:00:00Z")]

    body = gql(ADD_WITH_CONTEXT, {"userId": "mia", "sessionId": "s2", "messages": question})
    context = gql(CONTEXT, {"input": {"userId": "mia", "sessionId": "s2"}})["data"]["context"]

    assert "errors" not in body, body
    added = body["data"]["addMessages"]["context"]
    for result in (added, context):
        assert result["query"] == "Which food is my favourite again?"
        assert {"sessionId": "s1", "content": MESSAGES[0]["content"]} in result["memories"]


def test_context_reports_the_embedding_tokens_of_its_query(openai_settings, fake_openai: FakeOpenAI, add_messages, gql):
    fake_openai.chat_reply = NO_FACTS
    add_messages("mia", "s1", MESSAGES)
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

    body = gql(ADD_WITH_CONTEXT, {"userId": "mia", "sessionId": "s1", "messages": MESSAGES})

    assert body["data"]["addMessages"]["context"] is None
    assert [m["content"] for m in body["data"]["addMessages"]["messages"]] == [m["content"] for m in MESSAGES]
    assert [e["extensions"]["code"] for e in body["errors"]] == ["MODEL_BACKEND_ERROR"]


# --- summaries by a chat model ----------------------------------------------------------

CREATE_SUMMARIES = """
mutation($userId: String!, $maxCount: Int, $overwrite: Boolean! = false) {
  createSummaries(userId: $userId, maxCount: $maxCount, overwrite: $overwrite) {
    ... on QueuedSummariesResult { queuedSessionIds }
    ... on OperationInfo { messages { field message } }
  }
}
"""


def _summary_or_facts(summary: str):
    """A chat reply: ``summary`` to a summary request, no facts to a fact extraction."""
    return lambda body: NO_FACTS if "response_format" in body else summary


def test_a_generated_summary_is_told_who_said_what_and_when(openai_settings, fake_openai, add_messages, gql):
    fake_openai.chat_reply = _summary_or_facts("Mia loves sushi and adopted a cat named Miso in late April 2024.")
    add_messages("mia", "s1", MESSAGES)

    assert gql(CREATE_SUMMARIES, {"userId": "mia"})["data"]["createSummaries"]["queuedSessionIds"] == ["s1"]

    (request,) = [r for r in fake_openai.requests_to("chat") if "response_format" not in r]
    conversation = request["messages"][-1]["content"]
    # Who said it, and when: "last week" can only be resolved against the day it was said.
    assert conversation.splitlines() == [
        "[2024-05-01 09:00 UTC] Mia: My favourite food is sushi, especially salmon nigiri.",
        "[2024-05-01 09:00 UTC] Bot: Sushi is a great choice!",
        "[2024-05-01 09:00 UTC] Mia: I also adopted a cat named Miso last week.",
    ]
    assert Summary.objects.get().mode == "generated"


def test_fact_extraction_is_told_when_each_user_message_was_said(openai_settings, fake_openai, add_messages, gql):
    fake_openai.chat_reply = _summary_or_facts("Mia loves sushi.")
    add_messages("mia", "s1", MESSAGES)

    gql(CREATE_SUMMARIES, {"userId": "mia"})

    (request,) = [r for r in fake_openai.requests_to("chat") if "response_format" in r]
    conversation = request["messages"][-1]["content"].split("Conversation:\n")[1].splitlines()
    assert [line.split("] ", 1)[1] for line in conversation] == [
        "[2024-05-01 09:00 UTC] Mia: My favourite food is sushi, especially salmon nigiri.",
        "[2024-05-01 09:00 UTC] Mia: I also adopted a cat named Miso last week.",
    ]


def test_a_summary_whose_embedding_fails_writes_nothing(openai_settings, fake_openai: FakeOpenAI, add_messages, gql):
    fake_openai.chat_reply = _summary_or_facts("Mia loves sushi.")
    add_messages("mia", "s1", MESSAGES)
    fake_openai.fail("embeddings", 500)

    gql(CREATE_SUMMARIES, {"userId": "mia"})

    assert not Summary.objects.exists()
    sessions = gql('{ sessions(userId: "mia") { results { hasSummary summaryIsCurrent } } }')
    assert sessions["data"]["sessions"]["results"] == [{"hasSummary": False, "summaryIsCurrent": False}]


def test_a_summary_hit_shows_its_session_and_time_and_no_speaker(openai_settings, fake_openai, add_messages, search):
    fake_openai.chat_reply = _summary_or_facts("Mia loves sushi and has a cat named Miso.")
    add_messages("mia", "s1", MESSAGES)
    add_messages("mia", "s2", [say("Mia", "Hello again.", "2024-06-01T09:00:00Z")])  # s1 is summarised

    result = search(userId="mia", query="cat named Miso", sources=["SUMMARY"], answer=False)

    (hit,) = result["hits"]
    assert (hit["kind"], hit["sessionId"], hit["speaker"], hit["turns"]) == ("SUMMARY", "s1", None, [])
    assert hit["conversationTime"] == "2024-05-01T09:00:00+00:00"
    assert hit["text"].startswith("[summary | session s1 | from 2024-05-01 09:00 UTC]\n")


# --- chatmemory parity: lists, recency, per-user deletes ----------------------------------


def test_create_summaries_max_count_without_overwrite_takes_the_most_recent_pending(add_messages, gql):
    for day, session in ((1, "a"), (2, "b"), (3, "c")):
        add_messages("mia", session, [say("Mia", f"I planted tulips on day {day}.", f"2024-05-0{day}T09:00:00Z")])

    body = gql(CREATE_SUMMARIES, {"userId": "mia", "maxCount": 1})

    assert "errors" not in body, body
    # "a" and "b" were summarised when the next session started: only "c" is pending.
    assert body["data"]["createSummaries"]["queuedSessionIds"] == ["c"]
    body = gql(CREATE_SUMMARIES, {"userId": "mia", "maxCount": 2, "overwrite": True})
    assert body["data"]["createSummaries"]["queuedSessionIds"] == ["b", "c"]


def test_history_and_sessions_recency_and_last_n(add_messages, gql):
    add_messages("mia", "old", [say("Mia", "An old message.", "2020-01-01T09:00:00Z")])
    add_messages("mia", "new", [say("Mia", "First new.", None), say("Bot", "Second new.", None)])
    add_messages("other", "new", [say("Other", "Not Mia's.", None)])

    body = gql(
        '{ history(userId: "mia", withinSeconds: 600, order: NEWEST_FIRST, pagination: {limit: 1}) '
        "{ results { content } totalCount } "
        'sessions(userId: "mia", withinSeconds: 600, order: NEWEST_FIRST) { results { sessionId } totalCount } '
        'all: sessions(userId: "mia", order: NEWEST_FIRST) { results { sessionId } totalCount } }'
    )

    assert "errors" not in body, body
    data = body["data"]
    assert data["history"] == {"results": [{"content": "Second new."}], "totalCount": 2}
    assert data["sessions"] == {"results": [{"sessionId": "new"}], "totalCount": 1}
    assert data["all"] == {"results": [{"sessionId": "new"}, {"sessionId": "old"}], "totalCount": 2}


def test_negative_within_seconds_is_refused_as_bad_input(gql):
    body = gql('{ history(userId: "mia", withinSeconds: -1) { results { content } } }')
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "withinSeconds" in body["errors"][0]["message"]


def test_pagination_past_the_end_is_empty_with_the_total(add_messages, gql):
    add_messages("mia", "s1", MESSAGES)
    body = gql('{ history(userId: "mia", pagination: {limit: 2, offset: 3}) { results { content } totalCount } }')
    assert body["data"]["history"] == {"results": [], "totalCount": 3}


DELETE_ALL = """
mutation($userId: String!) {
  deleteAllKnowledge(userId: $userId) { ... on DeleteAllResult { deleted } }
  deleteAllDiaries(userId: $userId) { ... on DeleteAllResult { deleted } }
}
"""
ADD_KNOWLEDGE = """
mutation($c: String!, $u: String) { addKnowledge(content: $c, userId: $u) { ... on Knowledge { id } } }
"""
UPSERT_DIARY = """
mutation($u: String!, $d: Date!, $c: String!) {
  upsertDiary(userId: $u, diaryDate: $d, content: $c) { ... on Diary { id } }
}
"""


def test_delete_all_knowledge_and_diaries_touch_only_that_user(gql):
    for user in ("mia", "leo"):
        gql(ADD_KNOWLEDGE, {"c": f"{user} likes tea.", "u": user})
        gql(UPSERT_DIARY, {"u": user, "d": "2024-05-01", "c": f"{user} drank tea."})
    gql(ADD_KNOWLEDGE, {"c": "The desk opens at nine."})

    body = gql(DELETE_ALL, {"userId": "mia"})

    assert body["data"] == {"deleteAllKnowledge": {"deleted": 1}, "deleteAllDiaries": {"deleted": 1}}
    left = gql(
        '{ knowledge(userId: "leo", shared: true) { results { content } } '
        'mia: knowledge(userId: "mia", shared: true) { results { content } } '
        'diaries(userId: "leo") { results { content } } }'
    )["data"]
    assert {k["content"] for k in left["knowledge"]["results"]} == {"leo likes tea.", "The desk opens at nine."}
    assert [k["content"] for k in left["mia"]["results"]] == ["The desk opens at nine."]
    assert left["diaries"]["results"] == [{"content": "leo drank tea."}]


# --- sources, shared knowledge, diaries by date, statuses -------------------------------


def test_sources_knowledge_with_include_shared_for_several_users(hashing_embedder, gql, search):
    gql(ADD_KNOWLEDGE, {"c": "Mia drinks green tea every morning.", "u": "mia"})
    gql(ADD_KNOWLEDGE, {"c": "Leo drinks black tea every morning.", "u": "leo"})
    gql(ADD_KNOWLEDGE, {"c": "Tea is served in the lobby every morning."})
    gql(UPSERT_DIARY, {"u": "mia", "d": "2024-05-01", "c": "Tea every morning in the garden."})

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
    gql(ADD_KNOWLEDGE, {"c": "The support desk opens at nine."})
    result = search(userId="newcomer", query="When does the support desk open?", includeShared=True, answer=False)
    assert [h["content"] for h in result["hits"]] == ["The support desk opens at nine."]


def test_diaries_are_found_by_their_date_in_the_callers_window(hashing_embedder, gql, search):
    gql(UPSERT_DIARY, {"u": "mia", "d": "2024-05-01", "c": "Baked bread with my sister."})
    gql(UPSERT_DIARY, {"u": "mia", "d": "2024-05-03", "c": "Baked bread alone."})

    result = search(userId="mia", query="baked bread", since="2024-05-02", until="2024-05-03", answer=False)

    assert [(h["kind"], h["content"]) for h in result["hits"]] == [("DIARY", "Baked bread alone.")]
    assert result["hits"][0]["text"].startswith("[diary | 2024-05-03]")
    assert result["hits"][0]["conversationTime"].startswith("2024-05-03")


def test_only_active_facts_are_searched(hashing_embedder, gql, add_messages, search, settings):
    settings.SUMMARY_EVERY_MESSAGES = 0
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True
    add_messages("mia", "s1", [say("Mia", "I live in Osaka.", "2024-01-01T09:00:00Z")])
    add_messages("mia", "s2", [say("Mia", "I live in Kyoto now.", "2024-03-01T09:00:00Z")])
    gql(CREATE_SUMMARIES, {"userId": "mia"})
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


# --- a rolling summary while the conversation goes on ----------------------------------


class ChatInterruptedByANewMessage(ExtractiveChatModel):
    """The offline chat model, during whose first summary the user sends one more message
    (``CHAT_BACKEND`` is this class's dotted path)."""

    interrupted: list[str] = []

    def __init__(self) -> None:
        super().__init__(embedder=get_embedder())

    def summarize(self, *, lines, max_sentences):
        if not self.interrupted:
            self.interrupted.append("once")
            messages_add(
                user_external_id="mia",
                session_external_id="long",
                messages=[MessageIn(role="user", content="And my tomatoes are ripe now.")],
            )
        return super().summarize(lines=lines, max_sentences=max_sentences)


def test_a_rolling_summary_is_kept_when_a_message_arrives_while_it_is_written(hashing_embedder, settings, add_messages):
    settings.SUMMARY_EVERY_MESSAGES = 4
    settings.CHAT_BACKEND = f"{__name__}.ChatInterruptedByANewMessage"
    ChatInterruptedByANewMessage.interrupted.clear()
    turns = [say("Mia", f"My garden has {n} apple trees.", f"2024-05-01T09:0{n}:00Z") for n in range(4)]

    add_messages("mia", "long", turns)

    # The summary covers the four messages it read; the one said meanwhile waits for the next.
    assert ChatInterruptedByANewMessage.interrupted == ["once"]
    summary = Summary.objects.get(session__external_id="long")
    assert summary.message_count == 4
    assert "apple trees" in summary.content


def test_the_idle_sweep_summarises_only_idle_sessions_behind_their_summary(hashing_embedder, settings, add_messages):
    settings.SUMMARY_EVERY_MESSAGES = 0
    add_messages("mia", "s1", MESSAGES)
    add_messages("leo", "s1", [say("Leo", "I keep bees on my roof in Lyon.", "2024-05-02T09:00:00Z")])

    settings.SUMMARY_IDLE_MINUTES = 60
    assert sweep()["summaries"] == 0  # both sessions just received messages
    settings.SUMMARY_IDLE_MINUTES = 0
    assert sweep()["summaries"] == 2
    assert sweep()["summaries"] == 0  # both are current now

    summaries = {s.user.external_id: s for s in Summary.objects.select_related("user")}
    assert summaries["mia"].message_count == 3
    assert "Leo: I keep bees on my roof in Lyon." in summaries["leo"].content


def test_an_empty_reply_of_the_chat_model_is_not_an_answer(openai_settings, fake_openai, add_messages, search):
    add_messages("mia", "s1", MESSAGES)
    fake_openai.chat_reply = ""

    result = search(userId="mia", query="What is my favourite food?")

    assert (result["found"], result["answer"]) == (False, "Not found in memory.")
