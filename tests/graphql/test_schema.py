"""The schema as clients see it (an SDL snapshot) and the queries each list costs.

After a deliberate schema change, rewrite the snapshot and review its diff:

    UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/graphql/test_schema.py
"""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from memories.graphql.schema import schema
from tests.factories import (
    DiaryFactory,
    EndUserFactory,
    KnowledgeFactory,
    MessageFactory,
    SessionFactory,
    SummaryFactory,
)

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "schema.graphql"


def test_schema_matches_the_snapshot():
    sdl = schema.as_str().rstrip("\n") + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(sdl)
    assert SNAPSHOT.exists(), f"No snapshot: run with UPDATE_SNAPSHOTS=1 to write {SNAPSHOT}."
    assert sdl == SNAPSHOT.read_text(), (
        "The GraphQL schema changed. If that is deliberate, run with UPDATE_SNAPSHOTS=1 and review the diff."
    )


def test_raw_vectors_never_appear_in_the_schema():
    sdl = schema.as_str()
    assert "embedding:" not in sdl
    assert "embeddingModel" not in sdl
    assert "searchVector" not in sdl
    assert "keyHash" not in sdl


# --- query counts ----------------------------------------------------------------------

# Every field of each list's results, so a field that loads a relation per row shows up here.
LISTS = {
    "history": 'history(userId: "alice") { results { id role content channel metadata createdAt sessionId externalId }',
    "sessions": 'sessions(userId: "alice") { results { id sessionId userId channel firstMessageAt lastMessageAt '
    "hasSummary summaryIsCurrent }",
    "summaries": 'summaries(userId: "alice") { results { id sessionId content mode coversFrom coversUntil '
    "messageCount updatedAt }",
    "knowledge": 'knowledge(userId: "alice", shared: true) { results { id content userId embeddingIsCurrent '
    "createdAt updatedAt }",
    "diaries": 'diaries(userId: "alice") { results { id diaryDate content metadata userId createdAt updatedAt }',
}


def make_rows(count: int) -> None:
    """``count`` rows of every kind for alice (and as many shared facts), straight in the database."""
    alice = EndUserFactory(external_id="alice")
    now = timezone.now()
    for i in range(count):
        at = now + timedelta(minutes=i)
        session = SessionFactory(
            user=alice, external_id=f"s{i}", channel="web", first_message_at=at, last_message_at=at
        )
        message = MessageFactory(session=session, role="user", content=f"m{i}", created_at=at)
        SummaryFactory(
            session=session,
            content=f"summary {i}",
            covers_from=at,
            covers_until=at,
            last_message=message,
            message_count=1,
        )
        KnowledgeFactory(user=alice, content=f"fact {i}")
        KnowledgeFactory(user=None, content=f"shared fact {i}")
        DiaryFactory(user=alice, diary_date=date(2024, 1, 1) + timedelta(days=i), content=f"diary {i}")


@pytest.fixture
def warm_gql(gql, make_api_key):
    """``gql`` with a key that is already used once (the first use also writes its ``last_used_at``)."""
    key = make_api_key(all_users=True)
    assert "errors" not in gql("{ __typename }", key=key)

    def run(query: str) -> dict:
        body = gql(query, key=key)
        assert "errors" not in body, body
        return body["data"]

    return run


@pytest.mark.parametrize("rows", [3, 30])
@pytest.mark.parametrize(
    ("field", "extra", "queries"),
    [
        pytest.param(field, extra, queries, id=f"{field}-{name}")
        for field in LISTS
        # Two hold maintenance off while the request runs, one authenticates the key, one loads the page;
        # `totalCount` adds a count.
        for name, extra, queries in (
            ("page", "pageInfo { limit }", 4),
            ("page+count", "pageInfo { limit } totalCount", 5),
        )
    ],
)
def test_a_list_costs_the_same_queries_for_3_or_30_rows(
    field, extra, queries, rows, warm_gql, django_assert_num_queries
):
    make_rows(rows)
    with django_assert_num_queries(queries):
        page = warm_gql(f"{{ {LISTS[field]} {extra} }} }}")[field]
    assert len(page["results"]) == (2 * rows if field == "knowledge" else rows)
    assert page["pageInfo"] == {"limit": 100}
