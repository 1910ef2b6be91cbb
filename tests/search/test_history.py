"""chatmemory-style reads and deletes: last N messages, recent sessions, delete-all, summarise now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import MessageFactory, SessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("hashing_embedder")]


def at(minutes_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()


def ago(minutes: int) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=minutes)


def test_history_newest_first_gives_the_last_n_and_within_seconds_the_recent(gql):
    session = SessionFactory(user__external_id="alice")
    for i in range(30):
        MessageFactory(session=session, content=f"m{i}", created_at=ago(30 - i))
    last = gql('{ history(userId: "alice", order: NEWEST_FIRST, pagination: {limit: 3}) { results { content } } }')
    assert [m["content"] for m in last["data"]["history"]["results"]] == ["m29", "m28", "m27"]
    first = gql('{ history(userId: "alice", pagination: {limit: 2}) { results { content } } }')
    assert [m["content"] for m in first["data"]["history"]["results"]] == ["m0", "m1"]
    recent = gql('{ history(userId: "alice", withinSeconds: 330) { results { content } } }')
    assert [m["content"] for m in recent["data"]["history"]["results"]] == ["m25", "m26", "m27", "m28", "m29"]


def test_sessions_newest_first_and_recent_only(gql):
    SessionFactory(user__external_id="alice", external_id="old", first_message_at=ago(600), last_message_at=ago(600))
    SessionFactory(user__external_id="alice", external_id="new", first_message_at=ago(5), last_message_at=ago(5))
    ordered = gql('{ sessions(userId: "alice", order: NEWEST_FIRST) { results { sessionId } } }')
    assert [s["sessionId"] for s in ordered["data"]["sessions"]["results"]] == ["new", "old"]
    recent = gql('{ sessions(userId: "alice", withinSeconds: 3600) { results { sessionId } } }')
    assert [s["sessionId"] for s in recent["data"]["sessions"]["results"]] == ["new"]


def test_negative_within_seconds_is_refused(gql):
    body = gql('{ history(userId: "alice", withinSeconds: -1) { results { id } } }')
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def test_delete_all_knowledge_and_diaries_of_a_user(add_messages, gql):
    for text in ("Alice likes tea.", "Alice lives in Porto."):
        gql(
            'mutation($c: String!) { addKnowledge(userId: "alice", content: $c) { ... on Knowledge { id } } }',
            {"c": text},
        )
    gql('mutation { addKnowledge(userId: "bob", content: "Bob likes coffee.") { ... on Knowledge { id } } }')
    for day in ("2024-01-01", "2024-01-02"):
        gql(
            'mutation($d: Date!) { upsertDiary(userId: "alice", diaryDate: $d, content: "A day.") { __typename } }',
            {"d": day},
        )
    deleted = gql('mutation { deleteAllKnowledge(userId: "alice") { ... on DeleteAllResult { deleted } } }')
    assert deleted["data"]["deleteAllKnowledge"]["deleted"] == 2
    diaries = gql('mutation { deleteAllDiaries(userId: "alice") { ... on DeleteAllResult { deleted } } }')
    assert diaries["data"]["deleteAllDiaries"]["deleted"] == 2
    left = gql('{ knowledge(userId: "bob") { results { content } } }')
    assert [k["content"] for k in left["data"]["knowledge"]["results"]] == ["Bob likes coffee."]
    assert gql('{ knowledge(userId: "alice") { totalCount } }')["data"]["knowledge"]["totalCount"] == 0


def test_create_summaries_max_count_takes_the_most_recent_sessions(add_messages, gql):
    for i, minutes in enumerate((300, 200, 100)):
        add_messages("alice", f"s{i}", [{"role": "user", "content": f"Session {i} talk.", "createdAt": at(minutes)}])
    gql('mutation { deleteSummaries(userId: "alice") { deletedSummaries } }')
    body = gql(
        'mutation { createSummaries(userId: "alice", maxCount: 2, overwrite: true) '
        "{ ... on QueuedSummariesResult { queuedSessionIds } } }"
    )
    assert body["data"]["createSummaries"]["queuedSessionIds"] == ["s1", "s2"]
