"""A query that names a day or a month finds what was said then."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def _said(add_messages, session: str, when: str, content: str) -> None:
    add_messages(
        "alice", session, [{"role": "user", "content": content, "createdAt": when, "metadata": {"speaker": "Alice"}}]
    )


@pytest.mark.parametrize(
    "query",
    ["What did I buy on 3 June, 2023?", "What did I buy on June 3, 2023?", "What did I buy in June 2023?"],
)
def test_a_named_day_or_month_ranks_what_was_said_then_first(add_messages, search, query):
    # The January turn says more of the question's words; only the date points at June.
    _said(add_messages, "january", "2023-01-10T10:00:00Z", "What should I buy? I will buy a red bike to buy groceries.")
    _said(add_messages, "june", "2023-06-04T18:00:00Z", "I will buy a blue kayak.")

    hits = search(userId="alice", query=query, sources=["MESSAGE"])["hits"]

    assert hits[0]["content"] == "I will buy a blue kayak."
    assert "time #1" in hits[0]["foundBy"]
    assert not any(f.startswith("time") for h in hits[1:] for f in h["foundBy"])


def test_a_date_the_conversation_never_reached_changes_nothing(add_messages, search):
    _said(add_messages, "january", "2023-01-10T10:00:00Z", "I will buy a red bike.")

    hits = search(userId="alice", query="What did I buy on 3 June, 2031?", sources=["MESSAGE"])["hits"]

    assert [h["content"] for h in hits] == ["I will buy a red bike."]
    assert not any(f.startswith("time") for f in hits[0]["foundBy"])


def test_a_window_the_caller_sets_wins_over_a_date_in_the_query(add_messages, search):
    _said(add_messages, "january", "2023-01-10T10:00:00Z", "I will buy a red bike.")
    _said(add_messages, "june", "2023-06-04T18:00:00Z", "I will buy a blue kayak.")

    hits = search(
        userId="alice",
        query="What did I buy on 3 June, 2023?",
        sources=["MESSAGE"],
        since="2023-01-01",
        until="2023-01-31",
    )["hits"]

    assert [h["content"] for h in hits] == ["I will buy a red bike."]
