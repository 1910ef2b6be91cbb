"""upsertDiary, diaries and deleteDiary over HTTP with an all-users key."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Diary
from tests.factories import DiaryFactory, EndUserFactory
from tests.graphql.documents import (
    DELETE_DIARY,
    DIARIES,
    UPSERT_DIARY,
)

pytestmark = pytest.mark.django_db


def test_upsert_diary_creates_then_replaces_the_days_entry(gql_ok):
    variables = {"userId": "alice", "diaryDate": "2024-05-01", "content": "Went to Osaka."}
    created = gql_ok(UPSERT_DIARY, {**variables, "metadata": {"mood": "good"}})["upsertDiary"]
    diary = Diary.objects.get()
    assert created == {
        "__typename": "Diary",
        "id": str(diary.pk),
        "diaryDate": "2024-05-01",
        "content": "Went to Osaka.",
        "metadata": {"mood": "good"},
        "userId": "alice",
    }
    first_vector = list(diary.embedding)

    replaced = gql_ok(UPSERT_DIARY, {**variables, "content": "Went to Kyoto instead."})["upsertDiary"]
    assert replaced == {**created, "content": "Went to Kyoto instead."}  # same row; metadata kept
    diary = Diary.objects.get()
    assert diary.embedding_model == "all-MiniLM-L6-v2"
    assert list(diary.embedding) != first_vector

    invalid = gql_ok(UPSERT_DIARY, {**variables, "content": " "})["upsertDiary"]
    assert invalid == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "content", "message": "content must not be empty."}],
    }
    not_an_object = gql_ok(UPSERT_DIARY, {**variables, "metadata": ["mood", "good"]})["upsertDiary"]
    assert not_an_object == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "metadata", "message": "metadata must be a JSON object."}],
    }
    assert Diary.objects.values_list("content", "metadata").get() == ("Went to Kyoto instead.", {"mood": "good"})


@pytest.fixture
def diaries_of_alice(db):
    alice = EndUserFactory(external_id="alice")
    for day in ("2024-04-30", "2024-05-01", "2024-05-02", "2024-05-03"):
        DiaryFactory(user=alice, diary_date=day, content=f"Alice on {day}.")
    DiaryFactory(user=EndUserFactory(external_id="bob"), diary_date="2024-05-01", content="Bob.")


def test_diaries_by_date_or_inclusive_range(diaries_of_alice, gql_ok):
    def diaries(**variables: Any) -> list[str]:
        page = gql_ok(DIARIES, {"userId": "alice", **variables})["diaries"]
        assert all(d["userId"] == "alice" and d["content"] == f"Alice on {d['diaryDate']}." for d in page["results"])
        return [d["diaryDate"] for d in page["results"]]

    assert diaries() == ["2024-05-03", "2024-05-02", "2024-05-01", "2024-04-30"]  # newest first
    assert diaries(diaryDate="2024-05-01") == ["2024-05-01"]
    assert diaries(diaryDate="2024-06-01") == []
    assert diaries(since="2024-05-01", until="2024-05-02") == ["2024-05-02", "2024-05-01"]  # both ends included
    assert diaries(since="2024-05-02") == ["2024-05-03", "2024-05-02"]
    assert diaries(until="2024-05-01") == ["2024-05-01", "2024-04-30"]
    assert diaries(since="2024-05-02", until="2024-05-02") == ["2024-05-02"]
    page = gql_ok(DIARIES, {"userId": "alice", "limit": 2})["diaries"]
    assert ([d["diaryDate"] for d in page["results"]], page["totalCount"]) == (["2024-05-03", "2024-05-02"], 4)


def test_delete_diary(diaries_of_alice, gql_ok):
    def delete(day: str) -> dict[str, Any]:
        return gql_ok(DELETE_DIARY, {"userId": "alice", "diaryDate": day})["deleteDiary"]

    assert delete("2024-05-01") == {"__typename": "DeleteDiaryResult", "deleted": True}
    assert delete("2024-05-01") == {"__typename": "DeleteDiaryResult", "deleted": False}
    assert delete("2024-06-01") == {"__typename": "DeleteDiaryResult", "deleted": False}
    remaining = Diary.objects.filter(user__external_id="alice").order_by("diary_date")
    assert [d.isoformat() for d in remaining.values_list("diary_date", flat=True)] == [
        "2024-04-30",
        "2024-05-02",
        "2024-05-03",
    ]
    assert Diary.objects.filter(user__external_id="bob", diary_date="2024-05-01").exists()


DIARY_ENTRIES = """
query Diaries($userId: String!) { diaries(userId: $userId) { results { content metadata } } }
"""


def test_upsert_diary_with_an_empty_user_id_is_refused(gql_ok):
    upserted = gql_ok(UPSERT_DIARY, {"userId": " ", "diaryDate": "2024-05-20", "content": "Cooked."})["upsertDiary"]
    assert upserted["__typename"] == "OperationInfo", upserted
    assert [(m["kind"], m["field"]) for m in upserted["messages"]] == [("VALIDATION", "userId")]


def test_upsert_diary_refuses_metadata_over_max_metadata_bytes_and_keeps_the_entry(gql_ok, settings):
    gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-20", "content": "Rain.", "metadata": {"m": 1}})
    big = {"notes": "x" * settings.MAX_METADATA_BYTES}
    upserted = gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-20", "content": "Sun.", "metadata": big})
    assert upserted["upsertDiary"] == {
        "__typename": "OperationInfo",
        "messages": [
            {
                "kind": "VALIDATION",
                "field": "metadata",
                "message": f"metadata is larger than {settings.MAX_METADATA_BYTES} bytes as JSON (MAX_METADATA_BYTES).",
            }
        ],
    }
    entries = gql_ok(DIARY_ENTRIES, {"userId": "alice"})["diaries"]["results"]
    assert [(e["content"], e["metadata"]) for e in entries] == [("Rain.", {"m": 1})]


def test_an_edited_diary_entry_is_found_by_its_new_text_and_not_its_old(gql_ok, search):
    def diary_hits(query: str) -> list[str]:
        hits = search(userId="alice", query=query, sources=["DIARY"], answer=False)["hits"]
        return [h["content"] for h in hits]

    entry = {"userId": "alice", "diaryDate": "2024-05-02"}
    gql_ok(UPSERT_DIARY, {**entry, "content": "We sailed to the lighthouse on the island."})
    assert diary_hits("sailing to the lighthouse") == ["We sailed to the lighthouse on the island."]
    gql_ok(UPSERT_DIARY, {**entry, "content": "Baked sourdough bread all afternoon."})
    assert diary_hits("sailing to the lighthouse") == []
    assert diary_hits("baking bread") == ["Baked sourdough bread all afternoon."]
