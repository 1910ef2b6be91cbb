"""The search query's filters (channel, time window, users, sources) and the usage it reports."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memories.llm import Answer, EmbeddingBatch, Usage
from memories.llm.local import LocalEmbedder
from tests.graphql.documents import (
    ADD_KNOWLEDGE,
    UPSERT_DIARY,
    msg,
)

pytestmark = pytest.mark.django_db


def summary_and_diary_hits(result: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The hits other than messages (summaries, knowledge, diaries) as (kind, session id or diary time, or "" for
    a fact of no session), sorted."""
    return sorted(
        (h["kind"], h["sessionId"] or h["conversationTime"] or "") for h in result["hits"] if h["kind"] != "MESSAGE"
    )


@pytest.fixture
def alice_in_two_channels(add_messages, gql_ok, summarize):
    """alice: s1 on slack and s2 on web (both summarised), a diary entry and a fact."""
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")], channel="slack")
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T10:00:00Z")], channel="web")
    summarize("alice")
    gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-02", "content": "Cello lesson in the morning."})
    gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice owns a cat and a cello."})


def test_search_by_channel_leaves_out_other_channels_diaries_and_knowledge(alice_in_two_channels, search):
    query = "What about my cat and my cello?"
    everything = search(userId="alice", query=query, topK=10)
    assert summary_and_diary_hits(everything) == [
        ("DIARY", "2024-05-02T00:00:00+00:00"),
        ("KNOWLEDGE", ""),  # added
        ("KNOWLEDGE", "s1"),  # raised from the turns, which they stand in for
        ("KNOWLEDGE", "s2"),
        ("SUMMARY", "s1"),
        ("SUMMARY", "s2"),
    ]
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="web")) == [("SUMMARY", "s2")]
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="slack")) == [("SUMMARY", "s1")]
    assert search(userId="alice", query=query, topK=10, channel="")["hits"] == everything["hits"]  # "" = no filter


def test_search_by_channel_finds_the_summary_of_a_session_spoken_in_several(add_messages, summarize, search):
    # The session is marked with its first channel (slack); its later messages came from the web.
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")], channel="slack")
    add_messages("alice", "s1", [msg("Miso likes tuna.", "2024-05-01T10:05:00Z")], channel="web")
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T10:00:00Z")], channel="slack")
    summarize("alice")
    query = "What about my cat and my cello?"
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="web")) == [("SUMMARY", "s1")]
    assert summary_and_diary_hits(search(userId="alice", query=query, topK=10, channel="slack")) == [
        ("SUMMARY", "s1"),
        ("SUMMARY", "s2"),
    ]
    assert search(userId="alice", query=query, topK=10, channel="email")["hits"] == []


@pytest.fixture
def alice_around_a_window(add_messages, gql_ok, summarize):
    """One single-message session at each edge of the local (UTC+9) days 2024-05-02..2024-05-03."""
    times = {
        "day-before-23-59": "2024-05-01T23:59:00+09:00",
        "since-00-00": "2024-05-02T00:00:00+09:00",
        "until-23-30": "2024-05-03T23:30:00+09:00",
        "day-after-00-00": "2024-05-04T00:00:00+09:00",
    }
    for session_id, at in times.items():
        add_messages("alice", session_id, [msg(f"Notes of session {session_id} about the garden.", at)])
    summarize("alice")
    for day in ("2024-05-01", "2024-05-02", "2024-05-03", "2024-05-04"):
        gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": day, "content": f"Garden work on {day}."})
    gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice grows tomatoes in her garden."})


def test_search_time_window_runs_from_local_midnight_to_the_midnight_after_until(alice_around_a_window, search):
    def garden(**window: Any) -> list[tuple[str, str | None]]:
        return summary_and_diary_hits(
            search(userId="alice", query="What happened in the garden?", topK=20, utcOffsetHours=9, **window)
        )

    # 23:59 local the day before `since` and 00:00 local the day after `until` are outside; knowledge too.
    assert garden(since="2024-05-02", until="2024-05-03") == [
        ("DIARY", "2024-05-02T00:00:00+00:00"),
        ("DIARY", "2024-05-03T00:00:00+00:00"),
        ("SUMMARY", "since-00-00"),
        ("SUMMARY", "until-23-30"),
    ]
    assert garden(since="2024-05-03") == [
        ("DIARY", "2024-05-03T00:00:00+00:00"),
        ("DIARY", "2024-05-04T00:00:00+00:00"),
        ("SUMMARY", "day-after-00-00"),
        ("SUMMARY", "until-23-30"),
    ]
    assert garden(until="2024-05-01") == [
        ("DIARY", "2024-05-01T00:00:00+00:00"),
        ("SUMMARY", "day-before-23-59"),
    ]


@pytest.mark.parametrize(
    ("day", "utc_offset_hours", "found"),
    [("2024-05-02", 9, True), ("2024-05-02", 0, False), ("2024-05-01", 0, True), ("2024-05-01", 9, False)],
)
def test_search_local_day_depends_on_the_utc_offset(day, utc_offset_hours, found, add_messages, summarize, search):
    # 20:00 UTC on 1 May is 05:00 on 2 May at UTC+9.
    add_messages("alice", "evening", [msg("We watched fireworks by the river.", "2024-05-01T20:00:00Z")])
    summarize("alice")
    result = search(userId="alice", query="What did we watch?", since=day, until=day, utcOffsetHours=utc_offset_hours)
    assert summary_and_diary_hits(result) == ([("SUMMARY", "evening")] if found else [])


def test_search_refuses_a_bad_window(search):
    result = search(userId="alice", query="anything", since="2024-05-02", until="2024-05-01", utcOffsetHours=15)
    assert result == {
        "__typename": "OperationInfo",
        "messages": [
            {"kind": "VALIDATION", "field": "utcOffsetHours", "message": "utcOffsetHours must be between -14 and 14."},
            {"kind": "VALIDATION", "field": "until", "message": "until must not be before since."},
        ],
    }


@pytest.mark.parametrize("window", [{"channel": "web"}, {"since": "2024-05-02"}, {"until": "2024-05-02"}])
def test_search_filters_apply_to_messages_too(window, add_messages, search):
    # One session, no summary yet: the hits are messages, and the filter keeps one of them.
    add_messages("alice", "s1", [msg("My locker code is 4471, in the gym basement.", "2024-05-01T10:00:00Z")], "slack")
    add_messages("alice", "s1", [msg("My bike lock code is 1234.", "2024-05-03T10:00:00Z")], channel="web")
    expected = {"channel": "My bike lock code is 1234.", "since": "My bike lock code is 1234."}
    expected["until"] = "My locker code is 4471, in the gym basement."
    result = search(userId="alice", query="What is my locker code?", **window)
    assert [h["content"] for h in result["hits"]] == [expected[next(iter(window))]]


def test_search_with_include_shared_and_a_filter_leaves_knowledge_out(add_messages, gql_ok, summarize, search):
    add_messages("alice", "s1", [msg("The support desk was closed this morning.", "2024-05-01T10:00:00Z")])
    summarize("alice")
    gql_ok(ADD_KNOWLEDGE, {"content": "The support desk opens at 9am on weekdays."})
    gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice calls the support desk often."})
    query = "When does the support desk open?"
    shared = search(userId="alice", query=query, includeShared=True)
    assert sorted((h["kind"], h["userId"]) for h in shared["hits"]) == [
        ("KNOWLEDGE", ""),
        ("KNOWLEDGE", "alice"),
        ("MESSAGE", "alice"),
        ("SUMMARY", "alice"),
    ]
    filtered = search(userId="alice", query=query, includeShared=True, since="2024-05-01")
    assert sorted((h["kind"], h["userId"]) for h in filtered["hits"]) == [("MESSAGE", "alice"), ("SUMMARY", "alice")]


def test_search_several_users_by_user_id_and_user_ids(add_messages, summarize, search):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    add_messages("bob", "s1", [msg("I adopted a dog named Rex.", "2024-05-01T11:00:00Z")])
    add_messages("carol", "s1", [msg("I adopted a parrot named Kiwi.", "2024-05-01T12:00:00Z")])
    for user_id in ("alice", "bob", "carol"):
        summarize(user_id)
    query = "Which pet did I adopt?"

    both = search(userId="alice", userIds=["bob"], query=query, includeRetrievedData=True)
    # Each turn as the fact raised from it, which stands in for it.
    assert sorted((h["userId"], h["kind"], h["content"]) for h in both["hits"]) == [
        ("alice", "KNOWLEDGE", "The user adopted a cat named Miso."),
        ("alice", "SUMMARY", "user: I adopted a cat named Miso."),
        ("bob", "KNOWLEDGE", "The user adopted a dog named Rex."),
        ("bob", "SUMMARY", "user: I adopted a dog named Rex."),
    ]
    assert "[summary | session s1 | user alice | from 2024-05-01 10:00 UTC]" in both["retrievedData"]
    assert "[knowledge | user bob | said 2024-05-01 | not reviewed]" in both["retrievedData"]
    assert "Kiwi" not in json.dumps(both)

    one = search(userIds=["alice", "alice"], query=query, includeRetrievedData=True)
    assert {h["userId"] for h in one["hits"]} == {"alice"}
    assert len(one["hits"]) == 2
    assert "[summary | session s1 | from 2024-05-01 10:00 UTC]" in one["retrievedData"]
    assert "| user " not in one["retrievedData"]  # one user: not named


class ReportingEmbedder:
    """The local embedder, reporting 7 tokens a text as a hosted backend reports its usage."""

    def __init__(self) -> None:
        self.inner = LocalEmbedder.from_settings()
        self.model_name = self.inner.model_name

    def embed(self, texts: list[str]) -> EmbeddingBatch:
        return EmbeddingBatch(vectors=self.inner.embed(texts).vectors, usage=Usage(embedding_tokens=7 * len(texts)))


class ReportingChatModel:
    """An LLM that cites the first block it is given and reports its token usage."""

    mode = "generated"
    model_name = "reporting"
    sufficient = True

    def answer(self, *, question: str, blocks: list[str], **kwargs: Any) -> Answer:
        usage = Usage(prompt_tokens=100, completion_tokens=10)
        return Answer(text="As [1] says.", mode=self.mode, usage=usage, sufficient=self.sufficient)


class DoubtingChatModel(ReportingChatModel):
    """An LLM that finds the retrieved data never enough."""

    sufficient = False


@pytest.mark.parametrize("has_memory", [True, False])
@pytest.mark.parametrize(
    ("chat", "usage"),
    [
        # Offline, the answer quotes hits: only the query's embedding costs tokens.
        ("local", {"promptTokens": None, "completionTokens": None, "embeddingTokens": 7}),
        # An LLM answers once from all the sources ranked together.
        (
            "tests.graphql.test_search_query.ReportingChatModel",
            {"promptTokens": 100, "completionTokens": 10, "embeddingTokens": 7},
        ),
    ],
)
def test_search_embeds_the_query_once_and_answers_once(
    has_memory, chat, usage, add_messages, summarize, search, settings
):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    if has_memory:
        summarize("alice")
    settings.EMBEDDING_BACKEND = "tests.graphql.test_search_query.ReportingEmbedder"
    settings.CHAT_BACKEND = chat
    result = search(userId="alice", query="Which pet did I adopt?")
    assert result["usage"] == usage
    assert result["found"] is True
    assert "Miso" in result["hits"][0]["content"]
    assert result["hits"][0]["cited"] is True


def test_an_llm_that_finds_the_data_not_enough_answers_not_found(add_messages, search, settings):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    settings.CHAT_BACKEND = "tests.graphql.test_search_query.DoubtingChatModel"
    result = search(userId="alice", query="Which pet did I adopt?")
    assert (result["found"], result["answer"], result["answerMode"]) == (False, "Not found in memory.", "generated")
    assert result["usage"]["completionTokens"] == 10


def test_search_usage_is_null_when_the_backend_reports_none(add_messages, search):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    result = search(userId="alice", query="Which pet did I adopt?")
    assert result["usage"] == {"promptTokens": None, "completionTokens": None, "embeddingTokens": None}


@pytest.mark.parametrize("user_id", ["", "   "])
def test_search_names_an_empty_user_id_as_the_field_given(user_id, search):
    result = search(userId=user_id, query="anything")
    assert result == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "userId", "message": "userId must not be empty."}],
    }
