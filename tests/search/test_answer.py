"""The answer of ``search``: offline, the turns it quotes; written by a chat model (the ``openai``
backends on a fake server).

Offline: the reply to a question is quoted, not the question; the user of each quote and the day in
the caller's time zone. Generated: citations, "insufficient" answers, token usage, backend failures
and empty replies, and how a summary hit reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.conftest import SEARCH
from tests.graphql.documents import MIA_MESSAGES, UPSERT_DIARY, msg, say, summary_or_facts

if TYPE_CHECKING:
    from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

CITED = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { answer found hits { content cited } } } }"


# --- the offline answer ---------------------------------------------------------------


def test_the_offline_answer_quotes_the_reply_to_a_question_said_at_the_same_time(add_messages, search):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "Good morning!", "metadata": {"speaker": "Alice"}},
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


def test_an_answer_from_several_users_names_the_user_of_each_quote(add_messages, search):
    add_messages("alice", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    add_messages("bob", "s1", [msg("I adopted a dog named Rex.", "2024-05-01T11:00:00Z")])
    result = search(userIds=["alice", "bob"], query="Who is allergic to peanuts?")
    quote = result["answer"].splitlines()[0].removeprefix("[user alice] ")
    assert quote != result["answer"].splitlines()[0]
    assert "1 May 2024" in quote
    assert "\u201cI am allergic to peanuts.\u201d" in quote
    one = search(userId="alice", query="Who is allergic to peanuts?")
    assert one["answer"].splitlines()[0] == quote


@pytest.mark.parametrize(("utc_offset_hours", "day"), [(-5, "1 May 2024"), (0, "2 May 2024"), (9, "2 May 2024")])
def test_the_answer_names_the_day_in_the_callers_time_zone(utc_offset_hours, day, add_messages, search):
    # 03:30 UTC on 2 May is 22:30 on 1 May at UTC-5.
    add_messages("alice", "s1", [msg("I ran my first marathon in Boston.", "2024-05-02T03:30:00Z")])
    result = search(userId="alice", query="Where did I run my first marathon?", utcOffsetHours=utc_offset_hours)
    assert f"{day}: \u201cI ran my first marathon in Boston.\u201d" in result["answer"]  # a fact, said that day
    assert result["hits"][0]["conversationTime"] == "2024-05-02T03:30:00+00:00"


def test_a_diary_is_answered_with_its_own_date_in_any_time_zone(gql, search):
    gql(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-01", "content": "Ran my first marathon in Boston."})
    result = search(userId="alice", query="Where did I run my first marathon?", utcOffsetHours=-5)
    assert result["answer"] == "Diary, 1 May 2024: Ran my first marathon in Boston."


def test_a_turn_at_the_first_instant_there_is_is_answered_west_of_utc(add_messages, search):
    add_messages("alice", "s1", [msg("I ran my first marathon in Boston.", "0001-01-01T00:00:00Z")])
    result = search(userId="alice", query="Where did I run my first marathon?", utcOffsetHours=-5)
    assert result["found"] is True
    assert "said on 1 January 1:" in result["answer"]  # the UTC day: the day before has no year


# --- the generated answer ---------------------------------------------------------------


@pytest.mark.parametrize("reply", ["Sushi, and a cat [1, 2].", "Sushi, and a cat [1,2].", "Sushi, and a cat [1][2]."])
def test_a_generated_answer_cites_every_number_it_gives_in_any_bracket_style(
    openai_settings, fake_openai: FakeOpenAI, add_messages, gql, reply
):
    add_messages("mia", "s1", MIA_MESSAGES)
    fake_openai.chat_reply = reply

    query = "Is sushi my favourite food, and is Miso my cat?"
    result = gql(CITED, {"i": {"userId": "mia", "query": query, "topK": 3}})["data"]["search"]

    assert result["found"] is True
    assert len(result["hits"]) >= 2
    assert [h["cited"] for h in result["hits"]] == [True, True] + [False] * (len(result["hits"]) - 2)


def test_insufficient_data_is_not_found_and_cites_nothing_but_counts_the_tokens(
    openai_settings, fake_openai: FakeOpenAI, add_messages, search
):
    add_messages("mia", "s1", MIA_MESSAGES)
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
    add_messages("mia", "s1", MIA_MESSAGES)

    result = search(userId="mia", query="What is my favourite food?", answer=False)

    assert result["usage"] == {"promptTokens": None, "completionTokens": None, "embeddingTokens": 5}
    assert not fake_openai.requests_to("chat")


def test_a_chat_timeout_is_model_backend_timeout(openai_settings, fake_openai: FakeOpenAI, add_messages, gql):
    add_messages("mia", "s1", MIA_MESSAGES)
    openai_settings.OPENAI_TIMEOUT_SECONDS = 0.3
    fake_openai.hang.add("chat")

    body = gql(SEARCH, {"input": {"userId": "mia", "query": "What is my favourite food?"}})

    assert [e["extensions"]["code"] for e in body["errors"]] == ["MODEL_BACKEND_TIMEOUT"]


def test_a_summary_hit_shows_its_session_and_time_and_no_speaker(openai_settings, fake_openai, add_messages, search):
    fake_openai.chat_reply = summary_or_facts("Mia loves sushi and has a cat named Miso.")
    add_messages("mia", "s1", MIA_MESSAGES)
    add_messages("mia", "s2", [say("Mia", "Hello again.", "2024-06-01T09:00:00Z")])  # s1 is summarised

    result = search(userId="mia", query="cat named Miso", sources=["SUMMARY"], answer=False)

    (hit,) = result["hits"]
    assert (hit["kind"], hit["sessionId"], hit["speaker"], hit["turns"]) == ("SUMMARY", "s1", None, [])
    assert hit["conversationTime"] == "2024-05-01T09:00:00+00:00"
    assert hit["text"].startswith("[summary | session s1 | from 2024-05-01 09:00 UTC]\n")


def test_an_empty_reply_of_the_chat_model_is_not_an_answer(openai_settings, fake_openai, add_messages, search):
    add_messages("mia", "s1", MIA_MESSAGES)
    fake_openai.chat_reply = ""

    result = search(userId="mia", query="What is my favourite food?")

    assert (result["found"], result["answer"]) == (False, "Not found in memory.")
