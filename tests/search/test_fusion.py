"""Fusion's session smoothing: the last place of a result shows another conversation than the others."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def _say(add_messages, session: str, day: str, contents: list[str]) -> None:
    add_messages(
        "alice",
        session,
        [
            {"role": "user", "content": c, "createdAt": f"{day}T10:{i:02d}:00Z", "metadata": {"speaker": "Alice"}}
            for i, c in enumerate(contents)
        ],
    )


def test_the_last_hit_comes_from_a_session_the_others_do_not_show(add_messages, search):
    _say(
        add_messages,
        "garden",
        "2024-04-01",
        [f"My tomato plants in the garden grew {n} new tomatoes this week." for n in range(2, 8)],
    )
    _say(add_messages, "market", "2024-05-01", ["I sold tomatoes at the market."])

    hits = search(userId="alice", query="How many tomatoes did my garden plants grow?", sources=["MESSAGE"], topK=3)[
        "hits"
    ]

    assert [h["sessionId"] for h in hits] == ["garden", "garden", "market"]


def test_a_result_from_one_session_only_stays_whole(add_messages, search):
    _say(add_messages, "garden", "2024-04-01", [f"My tomato plants grew {n} new tomatoes." for n in range(2, 8)])

    hits = search(userId="alice", query="How many tomatoes did my plants grow?", sources=["MESSAGE"], topK=3)["hits"]

    assert [h["sessionId"] for h in hits] == ["garden", "garden", "garden"]
