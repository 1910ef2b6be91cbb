"""The ``openai`` backend, through the real ``openai`` client against a fake server (no network).

Unit level: batching, ordering, ``dimensions``, usage and error mapping of ``OpenAIEmbedder`` and
``OpenAIChatModel``. End to end: ``addMessages`` and ``search`` over GraphQL with both backends
set to ``openai``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from memories.llm import ModelBackendError, get_chat_model, get_embedder, prompts
from memories.llm.openai_backend import OpenAIChatModel, OpenAIEmbedder
from memories.models import Message, Summary
from tests.conftest import ADD_MESSAGES, SEARCH
from tests.graphql.documents import CREATE_SUMMARIES_UP_TO, MIA_MESSAGES, summary_or_facts

if TYPE_CHECKING:
    from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

HISTORY = "query History($userId: String!) { history(userId: $userId) { results { content } } }"


def _embedder(base_url: str, **kwargs: object) -> OpenAIEmbedder:
    options = {"model_name": "text-embedding-3-small", "dimensions": 384, "api_key": "test", "timeout": 5.0}
    options.update({"max_retries": 0, **kwargs})
    return OpenAIEmbedder(base_url=base_url, **options)  # type: ignore[arg-type]


def _chat(base_url: str, **kwargs: object) -> OpenAIChatModel:
    options = {"model_name": "gpt-4o-mini", "api_key": "test", "timeout": 5.0, "max_retries": 0, **kwargs}
    return OpenAIChatModel(base_url=base_url, **options)  # type: ignore[arg-type]


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# --- the fake itself --------------------------------------------------------------------


def test_fake_embeddings_are_unit_length_and_word_sensitive(fake_openai: FakeOpenAI) -> None:
    sushi, sushi_again, weather = (
        fake_openai.embedding(t) for t in ("I love sushi and ramen", "sushi is what I love", "rain tomorrow in Oslo")
    )
    assert len(sushi) == 384
    assert math.isclose(math.sqrt(sum(v * v for v in sushi)), 1.0)
    assert _cosine(sushi, sushi_again) > _cosine(sushi, weather)


# --- embeddings -------------------------------------------------------------------------


def test_embeddings_are_batched_kept_in_input_order_and_usage_is_summed(
    openai_settings, fake_openai: FakeOpenAI
) -> None:
    openai_settings.EMBEDDING_BATCH_SIZE = 2
    texts = ["alpha apples", "bravo bananas", "charlie cherries and dates", "delta", "echo elderberries"]

    batch = get_embedder().embed(texts)

    requests = fake_openai.requests_to("embeddings")
    assert [r["input"] for r in requests] == [texts[0:2], texts[2:4], texts[4:5]]
    assert all(r["model"] == "text-embedding-3-small" for r in requests)
    assert all(r["encoding_format"] == "float" for r in requests)
    # The fake sends each batch in reversed ``index`` order; the client must undo that.
    assert batch.vectors == [pytest.approx(fake_openai.embedding(t)) for t in texts]
    reported = [r["usage"]["prompt_tokens"] for r in fake_openai.responses_from("embeddings")]
    assert len(reported) == 3
    assert batch.usage.embedding_tokens == sum(reported) == (2 + 2) + (4 + 1) + 2


def test_embedding_of_one_text_matches_fake(fake_openai: FakeOpenAI) -> None:
    batch = _embedder(fake_openai.base_url).embed(["What is my favourite food?"])
    assert batch.vectors == [pytest.approx(fake_openai.embedding("What is my favourite food?"))]
    assert batch.usage.embedding_tokens == 5


@pytest.mark.parametrize("configured", [None, 384])
def test_dimensions_sent_only_when_configured(openai_settings, fake_openai: FakeOpenAI, configured) -> None:
    openai_settings.OPENAI_EMBEDDING_DIMENSIONS = configured

    get_embedder().embed(["hello world"])

    (request,) = fake_openai.requests_to("embeddings")
    if configured is None:
        assert "dimensions" not in request
    else:
        assert request["dimensions"] == configured


def test_vectors_of_requested_dimensions_other_than_columns_are_rejected(
    openai_settings, fake_openai: FakeOpenAI
) -> None:
    # The server honours ``dimensions=256`` but the columns hold 384: refuse, do not store.
    openai_settings.OPENAI_EMBEDDING_DIMENSIONS = 256

    with pytest.raises(ModelBackendError) as excinfo:
        get_embedder().embed(["hello world"])

    assert excinfo.value.code == "MODEL_BACKEND_ERROR"
    assert "256" in str(excinfo.value)


def test_vector_of_wrong_size_raises_backend_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.embedding_size = 1536

    with pytest.raises(ModelBackendError) as excinfo:
        _embedder(fake_openai.base_url).embed(["hello world"])

    assert excinfo.value.code == "MODEL_BACKEND_ERROR"


def test_missing_vectors_raise_backend_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.drop_embeddings = 1

    with pytest.raises(ModelBackendError) as excinfo:
        _embedder(fake_openai.base_url).embed(["one", "two", "three"])

    assert excinfo.value.code == "MODEL_BACKEND_ERROR"


# --- errors ---------------------------------------------------------------------------


def _call(kind: str, base_url: str, **kwargs: object) -> object:
    if kind == "embeddings":
        return _embedder(base_url, **kwargs).embed(["hello"])
    return _chat(base_url, **kwargs).answer(question="Why?", blocks=["[message]\nBecause."])


@pytest.mark.parametrize("kind", ["embeddings", "chat"])
def test_unreachable_server_is_unavailable(unreachable_openai_url: str, kind: str) -> None:
    with pytest.raises(ModelBackendError) as excinfo:
        _call(kind, unreachable_openai_url)
    assert excinfo.value.code == "MODEL_BACKEND_UNAVAILABLE"


@pytest.mark.parametrize("kind", ["embeddings", "chat"])
def test_http_500_is_backend_error(fake_openai: FakeOpenAI, kind: str) -> None:
    fake_openai.fail(kind, 500)

    with pytest.raises(ModelBackendError) as excinfo:
        _call(kind, fake_openai.base_url)

    assert excinfo.value.code == "MODEL_BACKEND_ERROR"
    assert len(fake_openai.requests_to(kind)) == 1  # max_retries=0: asked once


@pytest.mark.parametrize("kind", ["embeddings", "chat"])
def test_hanging_server_times_out(fake_openai: FakeOpenAI, kind: str) -> None:
    fake_openai.hang.add(kind)

    with pytest.raises(ModelBackendError) as excinfo:
        _call(kind, fake_openai.base_url, timeout=0.3)

    assert excinfo.value.code == "MODEL_BACKEND_TIMEOUT"


# --- chat -----------------------------------------------------------------------------


def test_answer_sends_blocks_and_question_and_returns_reply(fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_reply = "  Your favourite food is sushi.\n"
    blocks = [
        "[message | session s1 | 2024-05-01 12:00 UTC | user (user)]\nMy favourite food is sushi.",
        "[summary | session s0]\nThe user lives in Oslo.",
    ]

    answer = _chat(fake_openai.base_url).answer(question="What is my favourite food?", blocks=blocks)

    assert answer.sufficient is True
    assert answer.text == "Your favourite food is sushi."
    assert answer.mode == "generated"
    (request,) = fake_openai.requests_to("chat")
    assert request["model"] == "gpt-4o-mini"
    system, user = request["messages"]
    assert system == {"role": "system", "content": prompts.ANSWER_SYSTEM}
    assert user["role"] == "user"
    for block in blocks:
        assert block in user["content"]
    assert "What is my favourite food?" in user["content"]
    (response,) = fake_openai.responses_from("chat")
    assert answer.usage.prompt_tokens == response["usage"]["prompt_tokens"] > 0
    assert answer.usage.completion_tokens == response["usage"]["completion_tokens"] == 5


def test_answer_insufficient_data(fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_reply = prompts.INSUFFICIENT

    answer = _chat(fake_openai.base_url).answer(question="Where do I work?", blocks=["[message]\nI like tea."])

    assert answer.sufficient is False
    assert answer.text == ""
    assert answer.usage.completion_tokens == 1


def test_summarize_sends_lines_and_limit(openai_settings, fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_reply = "The user loves sushi."
    lines = ["user: I love sushi.", "assistant: Noted!"]

    summary = get_chat_model().summarize(lines=lines, max_sentences=3)

    assert summary.text == "The user loves sushi."
    assert summary.mode == "generated"
    (request,) = fake_openai.requests_to("chat")
    system, user = request["messages"]
    assert system["content"] == prompts.SUMMARY_SYSTEM.format(max_sentences=3)
    assert user["content"] == "user: I love sushi.\nassistant: Noted!"


# --- end to end over GraphQL ----------------------------------------------------------

MESSAGES = [
    {"role": "user", "content": "My favourite food is sushi, especially salmon nigiri."},
    {"role": "assistant", "content": "Sushi is a great choice!"},
    {"role": "user", "content": "I also adopted a cat named Miso last week."},
]


def test_search_generated_answer_end_to_end(openai_settings, fake_openai: FakeOpenAI, add_messages, search) -> None:
    added = add_messages("u1", "s1", MESSAGES)
    assert added["__typename"] == "AddMessagesResult", added
    assert len(added["messages"]) == 3
    # The embedding task ran against the fake (sync tasks) and stored the vectors.
    assert fake_openai.requests_to("embeddings")
    assert not Message.objects.filter(embedding__isnull=True).exists()
    fake_openai.chat_reply = "Your favourite food is sushi."
    search(userId="u1", query="Hello?")  # once per process: the topics' examples are embedded (memories.search.topics)
    seen = len(fake_openai.responses)

    result = search(userId="u1", query="What is my favourite food?", includeRetrievedData=True)

    assert result["__typename"] == "SearchResult", result
    assert result["answerMode"] == "generated"
    assert result["answer"] == "Your favourite food is sushi."
    assert MESSAGES[0]["content"] in result["retrievedData"]
    new = fake_openai.responses[seen:]
    chat = [body for path, body in new if path.endswith("/chat/completions")]
    embeddings = [body for path, body in new if path.endswith("/embeddings")]
    assert chat
    assert embeddings
    usage = result["usage"]
    assert usage["promptTokens"] == sum(r["usage"]["prompt_tokens"] for r in chat) > 0
    assert usage["completionTokens"] == sum(r["usage"]["completion_tokens"] for r in chat) == 5
    assert usage["embeddingTokens"] == sum(r["usage"]["prompt_tokens"] for r in embeddings) > 0
    # The model was given the retrieved messages and the question.
    prompt = fake_openai.requests_to("chat")[-1]["messages"][-1]["content"]
    assert "My favourite food is sushi, especially salmon nigiri." in prompt
    assert "What is my favourite food?" in prompt
    assert all(hit["content"] in prompt for hit in result["hits"])
    # The best hit is the message that shares the most words with the question.
    assert result["hits"][0]["content"] == MESSAGES[0]["content"]


def test_a_generated_answer_cites_the_hits_it_used(openai_settings, fake_openai: FakeOpenAI, add_messages, gql):
    add_messages("u1", "s1", MESSAGES)

    fake_openai.chat_reply = "Sushi, especially salmon nigiri [1]."
    body = gql(
        "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { answer found hits { text cited } } } }",
        {"i": {"userId": "u1", "query": "What is my favourite food?"}},
    )
    result = body["data"]["search"]
    assert result["found"] is True
    assert [h["cited"] for h in result["hits"]] == [True] + [False] * (len(result["hits"]) - 1)
    assert result["answer"] == "Sushi, especially salmon nigiri [1]."
    assert "sushi" in result["hits"][0]["text"]
    assert (
        "Each entry starts with its number in brackets" in fake_openai.requests_to("chat")[-1]["messages"][0]["content"]
    )


def test_embeddings_and_chat_can_use_separate_servers(openai_settings, fake_openai: FakeOpenAI, add_messages, search):
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI() as embeddings_server:
        openai_settings.OPENAI_EMBEDDING_BASE_URL = embeddings_server.base_url
        openai_settings.OPENAI_EMBEDDING_API_KEY = "embeddings-key"
        add_messages("u1", "s1", MESSAGES)
        search(userId="u1", query="What is my favourite food?")
        assert embeddings_server.requests_to("embeddings")
        assert embeddings_server.headers_of("embeddings")[-1]["authorization"] == "Bearer embeddings-key"
        assert not embeddings_server.requests_to("chat")
    assert not fake_openai.requests_to("embeddings")
    assert fake_openai.requests_to("chat")  # the answer, on the shared server


def test_search_chat_failure_is_graphql_error_and_keeps_messages(
    openai_settings, fake_openai: FakeOpenAI, add_messages, gql
) -> None:
    add_messages("u1", "s1", MESSAGES)
    fake_openai.fail("chat", 500)

    body = gql(SEARCH, {"input": {"userId": "u1", "query": "What is my favourite food?"}})

    assert body["data"] is None or body["data"].get("search") is None
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "MODEL_BACKEND_ERROR"
    assert fake_openai.requests_to("chat")  # it did get as far as asking the model
    history = gql(HISTORY, {"userId": "u1"})
    assert "errors" not in history, history
    assert [m["content"] for m in history["data"]["history"]["results"]] == [m["content"] for m in MESSAGES]


CONTEXT = """
query($input: ContextInput!) { context(input: $input) { ... on Context { prompt memories { content } } } }
"""


@pytest.mark.parametrize(
    ("document", "query"),
    [
        (SEARCH, "What is my favourite food?"),
        (CONTEXT, "What is my favourite food?"),
        (CONTEXT, None),  # the session's latest user message is the query
    ],
    ids=["search", "context", "context-default-query"],
)
def test_search_and_context_with_backend_unreachable_are_unavailable(
    openai_settings, unreachable_openai_url: str, add_messages, gql, document: str, query: str | None
) -> None:
    add_messages("u1", "s1", MESSAGES)
    openai_settings.OPENAI_BASE_URL = unreachable_openai_url
    variables = {"userId": "u1", "query": query} if document == SEARCH else {"userId": "u1", "sessionId": "s1"}
    if document == CONTEXT and query:
        variables["query"] = query

    body = gql(document, {"input": variables})

    (error,) = body["errors"]
    assert error["extensions"]["code"] == "MODEL_BACKEND_UNAVAILABLE"
    assert body["data"] is None


@pytest.mark.django_db(transaction=True)  # real commits: on_commit callbacks run inside the request
def test_add_messages_succeeds_while_backend_is_down(openai_settings, unreachable_openai_url: str, gql) -> None:
    openai_settings.OPENAI_BASE_URL = unreachable_openai_url
    variables = {"userId": "u1", "sessionId": "s1", "channel": "web", "messages": MESSAGES}

    body = gql(ADD_MESSAGES, variables)

    # The messages are stored whatever the response says; the embedding task did run and fail,
    # so their vectors are missing (for the sweep to fill later).
    assert [m.content for m in Message.objects.order_by("created_at", "id")] == [m["content"] for m in MESSAGES]
    assert Message.objects.filter(embedding__isnull=True).count() == 3
    # ... and the client is told so, rather than getting an error and retrying.
    assert "errors" not in body, body
    added = body["data"]["addMessages"]
    assert added["__typename"] == "AddMessagesResult", added
    assert [m["content"] for m in added["messages"]] == [m["content"] for m in MESSAGES]


def test_a_generated_summary_is_told_who_said_what_and_when(openai_settings, fake_openai, add_messages, gql):
    fake_openai.chat_reply = summary_or_facts("Mia loves sushi and adopted a cat named Miso in late April 2024.")
    add_messages("mia", "s1", MIA_MESSAGES)

    assert gql(CREATE_SUMMARIES_UP_TO, {"userId": "mia"})["data"]["createSummaries"]["queuedSessionIds"] == ["s1"]

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
    fake_openai.chat_reply = summary_or_facts("Mia loves sushi.")
    add_messages("mia", "s1", MIA_MESSAGES)

    gql(CREATE_SUMMARIES_UP_TO, {"userId": "mia"})

    (request,) = [r for r in fake_openai.requests_to("chat") if "response_format" in r]
    conversation = request["messages"][-1]["content"].split("Conversation:\n")[1].splitlines()
    assert [line.split("] ", 1)[1] for line in conversation] == [
        "[2024-05-01 09:00 UTC] Mia: My favourite food is sushi, especially salmon nigiri.",
        "[2024-05-01 09:00 UTC] Mia: I also adopted a cat named Miso last week.",
    ]


def test_a_summary_whose_embedding_fails_writes_nothing(openai_settings, fake_openai: FakeOpenAI, add_messages, gql):
    fake_openai.chat_reply = summary_or_facts("Mia loves sushi.")
    add_messages("mia", "s1", MIA_MESSAGES)
    fake_openai.fail("embeddings", 500)

    gql(CREATE_SUMMARIES_UP_TO, {"userId": "mia"})

    assert not Summary.objects.exists()
    sessions = gql('{ sessions(userId: "mia") { results { hasSummary summaryIsCurrent } } }')
    assert sessions["data"]["sessions"]["results"] == [{"hasSummary": False, "summaryIsCurrent": False}]
