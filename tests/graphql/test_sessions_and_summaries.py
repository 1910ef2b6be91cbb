"""sessions, summaries, createSummaries and deleteSummaries over HTTP with an all-users key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memories.models import Summary
from tests.factories import SessionFactory
from tests.graphql.documents import (
    CREATE_SUMMARIES,
    CREATE_SUMMARIES_UP_TO,
    DELETE_SUMMARIES,
    SESSIONS,
    SUMMARIES,
    msg,
    say,
    totals,
)

pytestmark = pytest.mark.django_db


def test_sessions_report_channel_times_and_summary_state(add_messages, gql_ok):
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
        channel="web",
    )
    # The first messages of s2 queue the summary of s1.
    add_messages("alice", "s2", [msg("Good morning to you.", "2024-05-02T08:00:00Z")], channel="slack")
    add_messages("bob", "s1", [msg("Bob was here.", "2024-05-01T09:00:00Z")])

    s1 = {
        "sessionId": "s1",
        "userId": "alice",
        "channel": "web",
        "firstMessageAt": "2024-05-01T10:00:00+00:00",
        "lastMessageAt": "2024-05-01T10:05:00+00:00",
        "hasSummary": True,
        "summaryIsCurrent": True,
    }
    s2 = {
        "sessionId": "s2",
        "userId": "alice",
        "channel": "slack",
        "firstMessageAt": "2024-05-02T08:00:00+00:00",
        "lastMessageAt": "2024-05-02T08:00:00+00:00",
        "hasSummary": False,
        "summaryIsCurrent": False,
    }
    assert gql_ok(SESSIONS, {"userId": "alice"})["sessions"] == {"results": [s1, s2], "totalCount": 2}

    # s1 is resumed: its summary is now behind its newest message.
    add_messages("alice", "s1", [msg("Miso caught a mouse today.", "2024-05-03T10:00:00Z")], channel="web")
    resumed = {**s1, "lastMessageAt": "2024-05-03T10:00:00+00:00", "summaryIsCurrent": False}
    assert gql_ok(SESSIONS, {"userId": "alice"})["sessions"] == {"results": [resumed, s2], "totalCount": 2}


def test_summaries_list_filter_and_page(add_messages, gql_ok, summarize):
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
    )
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")])
    assert summarize("alice") == ["s2"]  # s1 was summarised when s2 began

    s1 = {
        "sessionId": "s1",
        "content": "user: I adopted a cat named Miso.",  # the assistant's reaction is no summary
        "mode": "extractive",
        "coversFrom": "2024-05-01T10:00:00+00:00",
        "coversUntil": "2024-05-01T10:05:00+00:00",
        "messageCount": 2,
    }
    s2 = {
        "sessionId": "s2",
        "content": "user: I started learning the cello.",
        "mode": "extractive",
        "coversFrom": "2024-05-02T08:00:00+00:00",
        "coversUntil": "2024-05-02T08:00:00+00:00",
        "messageCount": 1,
    }
    assert gql_ok(SUMMARIES, {"userId": "alice"})["summaries"] == {"results": [s1, s2], "totalCount": 2}
    assert gql_ok(SUMMARIES, {"userId": "alice", "sessionId": "s2"})["summaries"] == {"results": [s2], "totalCount": 1}
    assert gql_ok(SUMMARIES, {"userId": "alice", "limit": 1})["summaries"] == {"results": [s1], "totalCount": 2}
    assert gql_ok(SUMMARIES, {"userId": "bob"})["summaries"] == {"results": [], "totalCount": 0}


def test_create_summaries_queues_missing_or_stale_ones_and_all_with_overwrite(add_messages, gql_ok):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")])
    add_messages("alice", "s3", [msg("Nothing much happened today.", "2024-05-03T08:00:00Z")])
    # s1 and s2 were summarised when the next session began; s3 has no summary yet.
    summaries = Summary.objects.filter(user__external_id="alice")
    assert sorted(summaries.values_list("session__external_id", flat=True)) == ["s1", "s2"]
    first_written = dict(summaries.values_list("session__external_id", "updated_at"))

    def create(**variables: Any) -> list[str]:
        return gql_ok(CREATE_SUMMARIES, {"userId": "alice", **variables})["createSummaries"]["queuedSessionIds"]

    assert create() == ["s3"]  # current ones are skipped
    assert create() == []
    # A resumed session's summary is behind: queued again.
    add_messages("alice", "s1", [msg("Miso caught a mouse today.", "2024-05-04T10:00:00Z")])
    assert create(sessionId="s2") == []
    assert create() == ["s1"]
    assert Summary.objects.get(session__external_id="s1").message_count == 2

    rewritten = dict(summaries.values_list("session__external_id", "updated_at"))
    assert create(overwrite=True) == ["s1", "s2", "s3"]  # in conversation order
    after = dict(summaries.values_list("session__external_id", "updated_at"))
    assert all(after[s] > rewritten[s] for s in ("s1", "s2", "s3"))
    assert after["s2"] > first_written["s2"]
    assert create(overwrite=True, sessionId="s2") == ["s2"]
    assert create(userId="nobody") == []


def test_delete_summaries_all_or_one_session(add_messages, gql_ok, summarize):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")])
    add_messages("bob", "s1", [msg("Bob adopted a dog.", "2024-05-01T10:00:00Z")])
    summarize("alice")
    summarize("bob")

    def delete(**variables: Any) -> dict[str, Any]:
        return gql_ok(DELETE_SUMMARIES, {"userId": "alice", **variables})["deleteSummaries"]

    assert delete(sessionId="s1") == {"__typename": "DeleteSummariesResult", "deletedSummaries": 1}
    remaining = gql_ok(SUMMARIES, {"userId": "alice"})["summaries"]["results"]
    assert [s["sessionId"] for s in remaining] == ["s2"]
    assert delete(sessionId="s1") == {"__typename": "DeleteSummariesResult", "deletedSummaries": 0}
    assert delete() == {"__typename": "DeleteSummariesResult", "deletedSummaries": 1}
    # The facts raised from the sessions stay: they are not summaries.
    assert totals(gql_ok, "alice") == {"history": 2, "sessions": 2, "summaries": 0, "knowledge": 2, "diaries": 0}
    sessions = gql_ok(SESSIONS, {"userId": "alice"})["sessions"]["results"]
    assert [(s["hasSummary"], s["summaryIsCurrent"]) for s in sessions] == [(False, False), (False, False)]
    assert totals(gql_ok, "bob")["summaries"] == 1


def test_create_summaries_max_count_without_overwrite_takes_the_most_recent_pending(add_messages, gql):
    for day, session in ((1, "a"), (2, "b"), (3, "c")):
        add_messages("mia", session, [say("Mia", f"I planted tulips on day {day}.", f"2024-05-0{day}T09:00:00Z")])

    body = gql(CREATE_SUMMARIES_UP_TO, {"userId": "mia", "maxCount": 1})

    assert "errors" not in body, body
    # "a" and "b" were summarised when the next session started: only "c" is pending.
    assert body["data"]["createSummaries"]["queuedSessionIds"] == ["c"]
    body = gql(CREATE_SUMMARIES_UP_TO, {"userId": "mia", "maxCount": 2, "overwrite": True})
    assert body["data"]["createSummaries"]["queuedSessionIds"] == ["b", "c"]


def at(minutes_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()


def ago(minutes: int) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=minutes)


@pytest.mark.usefixtures("hashing_embedder")
def test_sessions_newest_first_and_recent_only(gql):
    SessionFactory(user__external_id="alice", external_id="old", first_message_at=ago(600), last_message_at=ago(600))
    SessionFactory(user__external_id="alice", external_id="new", first_message_at=ago(5), last_message_at=ago(5))
    ordered = gql('{ sessions(userId: "alice", order: NEWEST_FIRST) { results { sessionId } } }')
    assert [s["sessionId"] for s in ordered["data"]["sessions"]["results"]] == ["new", "old"]
    recent = gql('{ sessions(userId: "alice", withinSeconds: 3600) { results { sessionId } } }')
    assert [s["sessionId"] for s in recent["data"]["sessions"]["results"]] == ["new"]


@pytest.mark.usefixtures("hashing_embedder")
def test_create_summaries_max_count_takes_the_most_recent_sessions(add_messages, gql):
    for i, minutes in enumerate((300, 200, 100)):
        add_messages("alice", f"s{i}", [{"role": "user", "content": f"Session {i} talk.", "createdAt": at(minutes)}])
    gql('mutation { deleteSummaries(userId: "alice") { deletedSummaries } }')
    body = gql(
        'mutation { createSummaries(userId: "alice", maxCount: 2, overwrite: true) '
        "{ ... on QueuedSummariesResult { queuedSessionIds } } }"
    )
    assert body["data"]["createSummaries"]["queuedSessionIds"] == ["s1", "s2"]
