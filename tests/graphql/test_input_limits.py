"""Input PostgreSQL would refuse is refused first, naming the field; the search window's far ends;
the kind a stale vector is reported for; two upserts of one new diary day at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, transaction

from memories.models import Diary, EndUser, Knowledge, Message, Session
from memories.search import MAX_QUERY_CHARS
from memories.services import diaries as diaries_module
from tests.conftest import ADD_MESSAGES, SEARCH
from tests.factories import EndUserFactory, KnowledgeFactory, SessionFactory, SummaryFactory

pytestmark = pytest.mark.django_db

NUL = "\u0000"
NO_NUL = "must not contain the NUL character (U+0000)."
USER_ID_MAX = EndUser._meta.get_field("external_id").max_length
SESSION_ID_MAX = Session._meta.get_field("external_id").max_length
CHANNEL_MAX = Session._meta.get_field("channel").max_length
MESSAGE_ID_MAX = Message._meta.get_field("external_id").max_length

KNOWLEDGE_RESULT = """
    __typename
    ... on Knowledge { id content userId }
    ... on OperationInfo { messages { kind field message } }
"""
ADD_KNOWLEDGE = f"""
mutation($userId: String, $content: String!) {{
  addKnowledge(userId: $userId, content: $content) {{ {KNOWLEDGE_RESULT} }}
}}
"""
UPDATE_KNOWLEDGE = f"""
mutation($id: ID!, $userId: String, $content: String!) {{
  updateKnowledge(id: $id, userId: $userId, content: $content) {{ {KNOWLEDGE_RESULT} }}
}}
"""
DELETE_KNOWLEDGE = """
mutation($id: ID!, $userId: String) {
  deleteKnowledge(id: $id, userId: $userId) {
    __typename
    ... on DeleteKnowledgeResult { deletedId }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""
UPSERT_DIARY = """
mutation($userId: String!, $diaryDate: Date!, $content: String!, $metadata: JSON) {
  upsertDiary(userId: $userId, diaryDate: $diaryDate, content: $content, metadata: $metadata) {
    __typename
    ... on Diary { diaryDate content metadata userId }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""
DELETE_DIARY = """
mutation($userId: String!, $diaryDate: Date!) {
  deleteDiary(userId: $userId, diaryDate: $diaryDate) {
    __typename
    ... on DeleteDiaryResult { deleted }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""


def data(body: dict[str, Any], field: str) -> dict[str, Any]:
    assert "errors" not in body, body
    return body["data"][field]


def refused(field: str, message: str) -> dict[str, Any]:
    """The ``OperationInfo`` of one validation error."""
    return {"__typename": "OperationInfo", "messages": [{"kind": "VALIDATION", "field": field, "message": message}]}


def too_long(field: str, max_length: int) -> str:
    return f"{field} must be at most {max_length} characters."


# --- addMessages -------------------------------------------------------------------------

GOOD = {"role": "user", "content": "Hello there."}


def add(gql: Callable[..., dict[str, Any]], **variables: Any) -> dict[str, Any]:
    defaults = {"userId": "alice", "sessionId": "s1", "channel": "web", "messages": [GOOD]}
    return data(gql(ADD_MESSAGES, {**defaults, **variables}), "addMessages")


@pytest.mark.parametrize(
    ("variables", "field", "message"),
    [
        ({"userId": "u" * (USER_ID_MAX + 1)}, "userId", too_long("userId", USER_ID_MAX)),
        ({"userId": f"al{NUL}ice"}, "userId", f"userId {NO_NUL}"),
        ({"sessionId": "s" * (SESSION_ID_MAX + 1)}, "sessionId", too_long("sessionId", SESSION_ID_MAX)),
        ({"sessionId": f"s{NUL}1"}, "sessionId", f"sessionId {NO_NUL}"),
        ({"channel": "c" * (CHANNEL_MAX + 1)}, "channel", too_long("channel", CHANNEL_MAX)),
        ({"channel": f"web{NUL}"}, "channel", f"channel {NO_NUL}"),
        (
            {"messages": [GOOD, {**GOOD, "externalId": "e" * (MESSAGE_ID_MAX + 1)}]},
            "messages.1.externalId",
            too_long("externalId", MESSAGE_ID_MAX),
        ),
        ({"messages": [GOOD, {**GOOD, "externalId": f"m{NUL}"}]}, "messages.1.externalId", f"externalId {NO_NUL}"),
        ({"messages": [GOOD, {**GOOD, "content": f"Hi{NUL}there"}]}, "messages.1.content", f"content {NO_NUL}"),
        (
            {"messages": [GOOD, {**GOOD, "metadata": {"speaker": "Alice", "tags": ["ok", {"deep": f"x{NUL}"}]}}]},
            "messages.1.metadata",
            f"metadata {NO_NUL[:-1]} in any key or string.",
        ),
        (
            {"messages": [GOOD, {**GOOD, "metadata": {f"key{NUL}": 1}}]},
            "messages.1.metadata",
            f"metadata {NO_NUL[:-1]} in any key or string.",
        ),
    ],
)
def test_add_messages_refuses_what_the_columns_cannot_hold_and_stores_nothing(gql, variables, field, message):
    assert add(gql, **variables) == refused(field, message)
    assert not EndUser.objects.exists()
    assert not Session.objects.exists()
    assert not Message.objects.exists()


def test_add_messages_takes_values_as_long_as_the_columns(gql):
    added = add(
        gql,
        userId="u" * USER_ID_MAX,
        sessionId="s" * SESSION_ID_MAX,
        channel="c" * CHANNEL_MAX,
        # The six characters \u0000 (a backslash, not NUL) are fine, in content and metadata.
        messages=[{**GOOD, "externalId": "e" * MESSAGE_ID_MAX, "content": "C:\\u0000", "metadata": {"p": "\\u0000"}}],
    )
    assert added["__typename"] == "AddMessagesResult", added
    assert Message.objects.values_list("content", "metadata").get() == ("C:\\u0000", {"p": "\\u0000"})


# --- knowledge and diaries -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("variables", "field", "message"),
    [
        ({"userId": "alice", "content": f"Likes{NUL}tea."}, "content", f"content {NO_NUL}"),
        ({"userId": None, "content": f"Shared{NUL}fact."}, "content", f"content {NO_NUL}"),
        ({"userId": "u" * (USER_ID_MAX + 1), "content": "Likes tea."}, "userId", too_long("userId", USER_ID_MAX)),
        ({"userId": f"al{NUL}ice", "content": "Likes tea."}, "userId", f"userId {NO_NUL}"),
    ],
)
def test_add_knowledge_refuses_what_the_columns_cannot_hold(gql, variables, field, message):
    assert data(gql(ADD_KNOWLEDGE, variables), "addKnowledge") == refused(field, message)
    assert not Knowledge.objects.exists()
    assert not EndUser.objects.exists()


def test_update_and_delete_knowledge_refuse_nul(gql):
    knowledge = KnowledgeFactory(user=EndUserFactory(external_id="alice"), content="Likes tea.")
    variables = {"id": str(knowledge.pk), "userId": "alice"}
    updated = data(gql(UPDATE_KNOWLEDGE, {**variables, "content": f"Likes{NUL}coffee."}), "updateKnowledge")
    assert updated == refused("content", f"content {NO_NUL}")
    deleted = data(gql(DELETE_KNOWLEDGE, {**variables, "userId": f"al{NUL}ice"}), "deleteKnowledge")
    assert deleted == refused("userId", f"userId {NO_NUL}")
    assert Knowledge.objects.values_list("content", flat=True).get() == "Likes tea."


@pytest.mark.parametrize(
    ("variables", "field", "message"),
    [
        ({"content": f"Went{NUL}out."}, "content", f"content {NO_NUL}"),
        ({"metadata": {"mood": ["good", f"ti{NUL}red"]}}, "metadata", f"metadata {NO_NUL[:-1]} in any key or string."),
        ({"userId": "u" * (USER_ID_MAX + 1)}, "userId", too_long("userId", USER_ID_MAX)),
        ({"userId": f"al{NUL}ice"}, "userId", f"userId {NO_NUL}"),
    ],
)
def test_upsert_diary_refuses_what_the_columns_cannot_hold(gql, variables, field, message):
    defaults = {"userId": "alice", "diaryDate": "2024-05-01", "content": "Went out."}
    assert data(gql(UPSERT_DIARY, {**defaults, **variables}), "upsertDiary") == refused(field, message)
    assert not Diary.objects.exists()
    assert not EndUser.objects.exists()


def test_delete_diary_refuses_nul(gql):
    deleted = data(gql(DELETE_DIARY, {"userId": f"al{NUL}ice", "diaryDate": "2024-05-01"}), "deleteDiary")
    assert deleted == refused("userId", f"userId {NO_NUL}")


# --- search ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("input_fields", "field", "message"),
    [
        ({"query": f"What{NUL}do I like?"}, "query", f"query {NO_NUL}"),
        ({"query": "a" * (MAX_QUERY_CHARS + 1)}, "query", too_long("query", MAX_QUERY_CHARS)),
        ({"userId": f"al{NUL}ice"}, "userIds", f"userId {NO_NUL}"),
        ({"userId": "a" * (USER_ID_MAX + 1)}, "userIds", too_long("userId", USER_ID_MAX)),
        ({"channel": f"web{NUL}"}, "channel", f"channel {NO_NUL}"),
    ],
)
def test_search_refuses_nul_and_an_overlong_query(add_messages, search, input_fields, field, message):
    add_messages("alice", "s1", [{"role": "user", "content": "I like green tea."}])
    result = search(**{"userId": "alice", "query": "What do I like?", **input_fields})
    assert result == refused(field, message)


def test_search_takes_a_query_of_max_query_chars(add_messages, search):
    add_messages("alice", "s1", [{"role": "user", "content": "I like green tea."}])
    query = ("What do I like to drink? " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
    result = search(userId="alice", query=query, answer=False)
    assert [h["content"] for h in result["hits"] if h["kind"] == "MESSAGE"] == ["I like green tea."]


@pytest.mark.parametrize(
    ("since", "until", "utc_offset_hours", "found"),
    [
        ("2024-05-01", "9999-12-31", 0, True),  # until the last day there is: no upper bound
        (None, "9999-12-31", -14, True),
        ("0001-01-01", "9999-12-31", 14, True),
        ("9999-12-31", None, -14, False),
        ("9999-12-31", "9999-12-31", 14, False),
    ],
)
def test_search_window_reaches_the_first_and_last_days(
    gql, add_messages, search, since, until, utc_offset_hours, found
):
    add_messages("alice", "s1", [{"role": "user", "content": "I like green tea.", "createdAt": "2024-05-02T10:00:00Z"}])
    diary = {"userId": "alice", "diaryDate": "2024-05-02", "content": "Drank green tea."}
    assert data(gql(UPSERT_DIARY, diary), "upsertDiary")["__typename"] == "Diary"
    result = search(
        userId="alice",
        query="What do I like to drink?",
        answer=False,
        since=since,
        until=until,
        utcOffsetHours=utc_offset_hours,
    )
    assert result["__typename"] == "SearchResult", result
    kinds = {h["kind"] for h in result["hits"]}
    if found:  # the diary, and the turn or the fact raised from it
        assert "DIARY" in kinds
        assert kinds & {"MESSAGE", "KNOWLEDGE"}
    else:
        assert kinds == set()


# --- stale vectors ---------------------------------------------------------------------------


def test_stale_vector_error_names_the_kind_of_the_stale_row(gql):
    alice = EndUserFactory(external_id="alice")
    session = SessionFactory(user=alice, external_id="s1")
    current = [1.0] + [0.0] * (settings.EMBEDDING_DIMENSIONS - 1)
    at = datetime(2024, 5, 1, tzinfo=UTC)
    SummaryFactory(
        session=session,
        content="Alice likes green tea.",
        covers_from=at,
        covers_until=at,
        embedding=current,
        embedding_model=settings.EMBEDDING_MODEL,
    )
    KnowledgeFactory(user=alice, content="Alice likes tea.", embedding=current, embedding_model="some-older-model")
    body = gql(SEARCH, {"input": {"userId": "alice", "query": "What does Alice like?"}})
    assert body["data"] is None
    [error] = body["errors"]
    assert error["extensions"]["code"] == "REEMBEDDING_NEEDED"
    assert error["message"].startswith("Stored knowledge vectors were made by another embedding model"), error


# --- diaries: two upserts of one new day at once -------------------------------------------


def _upsert_day(gql: Callable[..., dict[str, Any]], content: str) -> dict[str, Any]:
    variables = {"userId": "alice", "diaryDate": "2024-05-01", "content": content}
    return data(gql(UPSERT_DIARY, variables), "upsertDiary")


def _in_other_connection(work: Callable[[], None]) -> Callable[[], None]:
    """Start ``work`` in a thread, i.e. on a database connection (and transaction) of its own.

    Returns ``join``: waits for it and re-raises what it raised.
    """
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # re-raised by join
            failures.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()

    def join() -> None:
        thread.join(10)
        assert not thread.is_alive()
        if failures:
            raise failures[0]

    return join


@pytest.mark.django_db(transaction=True)
def test_upsert_diary_replaces_a_day_a_concurrent_call_inserted_first(gql):
    """The other call's insert is not yet committed when this one looks the day up and checks the
    row: this one's insert waits for it, and hits the unique constraint once it commits."""
    user = EndUserFactory(external_id="alice")
    inserted = threading.Event()

    def other_call() -> None:
        with transaction.atomic():
            Diary.objects.create(user=user, diary_date="2024-05-01", content="Written by the other call.")
            inserted.set()
            # Commit once this backend blocks another (the test's upsert, waiting on this row).
            deadline = time.monotonic() + 10
            with connection.cursor() as cursor:
                while True:
                    cursor.execute(
                        "SELECT EXISTS (SELECT 1 FROM pg_locks"
                        " WHERE NOT granted AND pg_backend_pid() = ANY (pg_blocking_pids(pid)))"
                    )
                    if cursor.fetchone()[0]:
                        break
                    assert time.monotonic() < deadline, "the upsert never waited for this row"
                    time.sleep(0.01)

    join = _in_other_connection(other_call)
    assert inserted.wait(10)
    upserted = _upsert_day(gql, "Written by this call.")
    join()
    assert upserted == {
        "__typename": "Diary",
        "diaryDate": "2024-05-01",
        "content": "Written by this call.",
        "metadata": {},
        "userId": "alice",
    }
    diary = Diary.objects.get()
    assert diary.content == "Written by this call."
    assert diary.embedding_model == settings.EMBEDDING_MODEL  # the new text was embedded


@pytest.mark.django_db(transaction=True)
def test_upsert_diary_replaces_a_day_a_concurrent_call_committed_after_the_lookup(gql, monkeypatch):
    """The other call commits between this one's lookup of the day and its insert."""
    user = EndUserFactory(external_id="alice")
    curated_save = diaries_module.curated_save

    def other_call_commits_first(*, row: Diary) -> Diary:
        if row.pk is None:
            _in_other_connection(
                lambda: Diary.objects.create(user=user, diary_date="2024-05-01", content="Written by the other call.")
            )()
        return curated_save(row=row)

    monkeypatch.setattr(diaries_module, "curated_save", other_call_commits_first)
    upserted = _upsert_day(gql, "Written by this call.")
    assert upserted == {
        "__typename": "Diary",
        "diaryDate": "2024-05-01",
        "content": "Written by this call.",
        "metadata": {},
        "userId": "alice",
    }
    assert Diary.objects.values_list("content", flat=True).get() == "Written by this call."


@pytest.mark.parametrize("text", [f"s{NUL}1", "s\ud8001"], ids=["NUL", "lone surrogate"])
@pytest.mark.parametrize(
    "document",
    [
        'query($t: String!) { history(userId: "alice", sessionId: $t) { totalCount } }',
        'query($t: String!) { history(userId: "alice", channel: $t) { totalCount } }',
        "query($t: String!) { sessions(userId: $t) { totalCount } }",
        'mutation($t: String!) { deleteHistory(userId: "alice", sessionId: $t) { __typename } }',
        'mutation($t: String!) { deleteSummaries(userId: "alice", sessionId: $t) { __typename } }',
    ],
)
def test_text_postgresql_cannot_store_in_any_argument_is_bad_input_not_a_server_error(gql, document, text):
    body = gql(document, {"t": text})
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert "cannot store" in error["message"]


@pytest.mark.parametrize("user_id", [f"al{NUL}ice", "a" * (USER_ID_MAX + 1)], ids=["NUL", "too long"])
@pytest.mark.parametrize("mutation", ["forgetUser", "deleteHistory", "deleteSummaries", "createSummaries"])
def test_user_wide_mutations_refuse_a_user_id_no_row_could_have(gql, mutation, user_id):
    document = f"""mutation($u: String!) {{
      {mutation}(userId: $u) {{ __typename ... on OperationInfo {{ messages {{ field }} }} }}
    }}"""
    assert gql(document, {"u": user_id})["data"][mutation] == {
        "__typename": "OperationInfo",
        "messages": [{"field": "userId"}],
    }
