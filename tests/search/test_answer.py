"""The answer of ``search`` written by a chat model (the ``openai`` backends on a fake server).

The generated answer's citations, "insufficient" answers, token usage, backend failures and empty
replies, and how a summary hit reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.conftest import SEARCH
from tests.graphql.documents import MIA_MESSAGES, say, summary_or_facts

if TYPE_CHECKING:
    from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

CITED = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { answer found hits { content cited } } } }"


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
