"""history's rows, deleteHistory (and the summaries and facts it touches), and forgetUser."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from django_q.models import Task

from memories.models import Diary, EndUser, Knowledge, Message, Session, Summary
from tests.factories import KnowledgeFactory, MessageFactory, SessionFactory
from tests.graphql.documents import (
    ADD_KNOWLEDGE,
    DELETE_HISTORY,
    FORGET_USER,
    HISTORY_ITEMS,
    SESSIONS,
    SUMMARIES,
    UPSERT_DIARY,
    msg,
    say,
    totals,
)

pytestmark = pytest.mark.django_db


def test_history_items_carry_every_field(add_messages, gql_ok):
    added = add_messages(
        "alice",
        "s1",
        [msg("I moved to Osaka.", "2024-05-01T09:00:00+09:00", metadata={"speaker": "Alice"}, externalId="m-1")],
        channel="slack",
    )
    assert gql_ok(HISTORY_ITEMS, {"userId": "alice"})["history"]["results"] == [
        {
            "id": added["messages"][0]["id"],
            "role": "user",
            "content": "I moved to Osaka.",
            "channel": "slack",
            "metadata": {"speaker": "Alice"},
            "createdAt": "2024-05-01T00:00:00+00:00",
            "sessionId": "s1",
            "externalId": "m-1",
        }
    ]


@pytest.fixture
def alice_and_bob(add_messages, summarize):
    """alice: s1 (web, 2 messages) and s2 (slack, 1 message), both summarised; bob: s1."""
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
        channel="web",
    )
    add_messages("alice", "s2", [msg("My locker code is 4471, in the gym basement.", "2024-05-02T08:00:00Z")], "slack")
    add_messages("bob", "s1", [msg("Bob adopted a dog named Rex.", "2024-05-01T10:00:00Z")])
    summarize("alice")
    summarize("bob")


def test_delete_all_history(alice_and_bob, gql_ok, search):
    result = gql_ok(DELETE_HISTORY, {"userId": "alice"})["deleteHistory"]
    assert result == {
        "__typename": "DeleteHistoryResult",
        "deletedMessages": 3,
        "deletedSessions": 2,
        "deletedSummaries": 2,
        "resummarizedSessionIds": [],
    }
    assert totals(gql_ok, "alice") == {"history": 0, "sessions": 0, "summaries": 0, "knowledge": 0, "diaries": 0}
    # Bob's turn was read as it arrived: his fact stays.
    assert totals(gql_ok, "bob") == {"history": 1, "sessions": 1, "summaries": 1, "knowledge": 1, "diaries": 0}
    found = search(userId="alice", query="What is my locker code?")
    assert (found["found"], found["answer"], found["hits"]) == (False, "Not found in memory.", [])


def test_delete_one_sessions_history(alice_and_bob, gql_ok, search):
    result = gql_ok(DELETE_HISTORY, {"userId": "alice", "sessionId": "s2"})["deleteHistory"]
    assert result == {
        "__typename": "DeleteHistoryResult",
        "deletedMessages": 1,
        "deletedSessions": 1,
        "deletedSummaries": 1,
        "resummarizedSessionIds": [],
    }
    assert [s["sessionId"] for s in gql_ok(SESSIONS, {"userId": "alice"})["sessions"]["results"]] == ["s1"]
    assert [s["sessionId"] for s in gql_ok(SUMMARIES, {"userId": "alice"})["summaries"]["results"]] == ["s1"]
    found = search(userId="alice", query="What is my locker code?", includeRetrievedData=True)
    assert "4471" not in json.dumps(found)
    assert totals(gql_ok, "bob") == {"history": 1, "sessions": 1, "summaries": 1, "knowledge": 1, "diaries": 0}


def test_delete_one_channels_history_resummarizes_the_sessions_that_keep_messages(add_messages, gql_ok, search):
    # One session spoken in two channels: the slack message goes, the web messages stay.
    add_messages(
        "alice",
        "s1",
        [
            msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
            msg("What a lovely name for a cat.", "2024-05-01T10:05:00Z", role="assistant"),
        ],
        channel="web",
    )
    add_messages("alice", "s1", [msg("My locker code is 4471, in the gym basement.", "2024-05-01T10:10:00Z")], "slack")
    add_messages("alice", "s2", [msg("I started learning the cello.", "2024-05-02T08:00:00Z")], channel="web")
    [before] = gql_ok(SUMMARIES, {"userId": "alice", "sessionId": "s1"})["summaries"]["results"]
    assert "4471" in before["content"]

    result = gql_ok(DELETE_HISTORY, {"userId": "alice", "channel": "slack"})["deleteHistory"]
    assert result == {
        "__typename": "DeleteHistoryResult",
        "deletedMessages": 1,
        "deletedSessions": 0,
        "deletedSummaries": 1,
        "resummarizedSessionIds": ["s1"],
    }
    assert gql_ok(SUMMARIES, {"userId": "alice", "sessionId": "s1"})["summaries"]["results"] == [
        {
            "sessionId": "s1",
            "content": "user: I adopted a cat named Miso.",  # the assistant's reaction is no summary
            "mode": "extractive",
            "coversFrom": "2024-05-01T10:00:00+00:00",
            "coversUntil": "2024-05-01T10:05:00+00:00",
            "messageCount": 2,
        }
    ]
    [session, _] = gql_ok(SESSIONS, {"userId": "alice"})["sessions"]["results"]
    assert (session["lastMessageAt"], session["hasSummary"], session["summaryIsCurrent"]) == (
        "2024-05-01T10:05:00+00:00",
        True,
        True,
    )
    found = search(userId="alice", query="What is my locker code?", includeRetrievedData=True)
    assert "4471" not in json.dumps(found)
    assert "locker" not in json.dumps(found)


def test_delete_history_with_an_empty_session_id_deletes_nothing(add_messages, gql):
    add_messages("alice", "s1", [msg("I adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
    gql(DELETE_HISTORY, {"userId": "alice", "sessionId": ""})
    assert Message.objects.filter(user__external_id="alice").count() == 1


def test_deleting_history_deletes_the_facts_raised_from_it_audit_trail_and_all(add_messages, gql_ok):
    add_messages("alice", "s1", [msg("My locker code is 4471.", "2024-05-01T10:00:00Z")])
    add_messages("alice", "s2", [msg("I play the cello.", "2024-05-02T10:00:00Z")])
    user = EndUser.objects.get(external_id="alice")
    s1, s2 = Session.objects.get(external_id="s1"), Session.objects.get(external_id="s2")
    cited = KnowledgeFactory(user=user, content="Locker code 4471 (cited).", source_session=s1)
    cited.source_messages.set(s1.messages.all())
    # A chat model may cite no message: such a fact may come from any of its session's.
    uncited = KnowledgeFactory(user=user, content="Locker code 4471 (uncited).", source_session=s1)
    other_session = KnowledgeFactory(user=user, content="Plays the cello.", source_session=s2)
    added = KnowledgeFactory(user=user, content="Allergic to peanuts.")

    gql_ok(DELETE_HISTORY, {"userId": "alice", "sessionId": "s1"})

    remaining = set(Knowledge.objects.filter(user=user).values_list("pk", flat=True))
    assert {other_session.pk, added.pk} <= remaining
    assert not Knowledge.objects.filter(user=user, source_session=s1).exists()
    assert not Knowledge.history.filter(id__in=[cited.pk, uncited.pk]).exists()
    assert Knowledge.history.filter(id=added.pk).exists()


def test_forget_user_removes_everything_of_that_user_only(add_messages, gql_ok, summarize, search):
    for user_id in ("alice", "bob"):
        add_messages(user_id, "s1", [msg(f"{user_id} adopted a cat named Miso.", "2024-05-01T10:00:00Z")])
        add_messages(user_id, "s2", [msg(f"{user_id} plays the cello.", "2024-05-02T10:00:00Z")])
        gql_ok(ADD_KNOWLEDGE, {"userId": user_id, "content": f"{user_id} is allergic to peanuts."})
        gql_ok(UPSERT_DIARY, {"userId": user_id, "diaryDate": "2024-05-01", "content": f"{user_id} went to Osaka."})
    summarize("bob")
    alice = totals(gql_ok, "alice")
    assert {k: v for k, v in alice.items() if k != "knowledge"} == {
        "history": 2,
        "sessions": 2,
        "summaries": 1,
        "diaries": 1,
    }
    assert alice["knowledge"] >= 1  # the fact added, and any the reader raised from the turns
    bob_before = totals(gql_ok, "bob")
    # Facts raised from summarised sessions (candidates awaiting review) are the user's too.
    knowledge_rows = Knowledge.objects.filter(user__external_id="alice").count()
    alice_pk = EndUser.objects.get(external_id="alice").pk

    assert gql_ok(FORGET_USER, {"userId": "alice"})["forgetUser"] == {
        "__typename": "ForgetUserResult",
        "messages": 2,
        "sessions": 2,
        "summaries": 1,
        "knowledge": knowledge_rows,
        "diaries": 1,
    }
    assert totals(gql_ok, "alice") == {"history": 0, "sessions": 0, "summaries": 0, "knowledge": 0, "diaries": 0}
    found = search(userId="alice", query="What does alice play? Where did alice go?")
    assert (found["found"], found["hits"]) == (False, [])
    for model in (Message, Session, Summary, Knowledge, Diary):
        assert not model.objects.filter(user__external_id="alice").exists(), model
    # Nor in the knowledge's audit trail, which records each deleted row with its text.
    assert not Knowledge.history.filter(user_id=alice_pk).exists()
    assert Knowledge.history.filter(content__contains="bob").exists()

    assert bob_before == {**alice, "knowledge": bob_before["knowledge"], "summaries": 2}
    assert totals(gql_ok, "bob") == bob_before
    bob = search(userId="bob", query="Which instrument does bob play?")
    assert {h["userId"] for h in bob["hits"]} == {"bob"}
    assert gql_ok(FORGET_USER, {"userId": "alice"})["forgetUser"] == {
        "__typename": "ForgetUserResult",
        "messages": 0,
        "sessions": 0,
        "summaries": 0,
        "knowledge": 0,
        "diaries": 0,
    }


def _failed_task(func: str, *args: object) -> str:
    """A task django-q2 recorded as failed, its error quoting the user's words (as a constraint's DETAIL does)."""
    now = timezone.now()
    task = Task.objects.create(
        id=uuid.uuid4().hex,
        name=f"task-{uuid.uuid4().hex[:8]}",
        func=func,
        args=args,
        kwargs={},
        result="IntegrityError: duplicate key value\nDETAIL:  Key (user_id, lower(name::text))=(1, my locker code)",
        started=now,
        stopped=now,
        success=False,
    )
    return task.pk


def test_deleting_history_deletes_the_records_of_tasks_that_failed_on_it(alice_and_bob, gql_ok):
    s1, s2 = (Session.objects.get(user__external_id="alice", external_id=s).pk for s in ("s1", "s2"))
    bob_s1 = Session.objects.get(user__external_id="bob").pk
    s2_message = Message.objects.get(session_id=s2).pk
    gone = [
        _failed_task("memories.tasks.extract_knowledge", s2),
        _failed_task("memories.tasks.summarize_session", s2),
        _failed_task("memories.tasks.embed_rows", "message", [s2_message, 10**9]),
    ]
    kept = [
        _failed_task("memories.tasks.extract_knowledge", s1),
        _failed_task("memories.tasks.extract_knowledge", bob_s1),
        _failed_task("memories.tasks.embed_rows", "summary", [s2_message]),  # another kind's row of that id
    ]

    gql_ok(DELETE_HISTORY, {"userId": "alice", "sessionId": "s2"})

    assert set(Task.objects.values_list("id", flat=True)) == set(kept)
    assert not set(gone) & set(Task.objects.values_list("id", flat=True))


def test_forgetting_a_user_deletes_the_records_of_tasks_that_failed_on_their_rows(alice_and_bob, gql_ok):
    alice_sessions = list(Session.objects.filter(user__external_id="alice").values_list("pk", flat=True))
    alice_message = Message.objects.filter(user__external_id="alice").values_list("pk", flat=True).first()
    gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-03", "content": "Gym at 7."})
    diary = Diary.objects.get(user__external_id="alice").pk
    bob_s1 = Session.objects.get(user__external_id="bob").pk
    for session in alice_sessions:
        _failed_task("memories.tasks.summarize_session", session)
    _failed_task("memories.tasks.embed_rows", "message", [alice_message])
    _failed_task("memories.tasks.embed_rows", "diary", [diary])
    kept = _failed_task("memories.tasks.summarize_session", bob_s1)

    gql_ok(FORGET_USER, {"userId": "alice"})

    assert list(Task.objects.values_list("id", flat=True)) == [kept]


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


def ago(minutes: int) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=minutes)


@pytest.mark.usefixtures("hashing_embedder")
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


@pytest.mark.usefixtures("hashing_embedder")
def test_negative_within_seconds_is_refused(gql):
    body = gql('{ history(userId: "alice", withinSeconds: -1) { results { id } } }')
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
