"""Fusion's smoothing: the last place of a result shows another conversation than the others, and a
turn gains from the turn it replies to, not from the reply after it."""

from __future__ import annotations

import pytest

from memories.kinds import MemoryKind
from memories.search.candidates import Candidate
from memories.search.fusion import exchanges_by_their_nearer_turn, fuse

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


def test_a_turn_gains_from_the_turn_before_it_not_from_the_one_after():
    # Turns 1, 2, 3 of one session; turn 2 matches best, turns 1 and 3 match equally (turn 1 found first).
    neighbours = {1: (None, 2), 2: (1, 3), 3: (2, None)}
    sessions = {("message", pk): 7 for pk in neighbours}
    ranked = fuse(
        rankings=[[("message", 2)], [("message", 2)], [("message", 1)], [("message", 3)]],
        sessions=sessions,
        neighbours=neighbours,
    )
    assert [pk for (_, pk), _ in ranked] == [2, 3, 1]


def test_an_exchange_handed_down_a_chain_of_replies_keeps_its_best_score():
    """Turn 3 replies to 2, 2 to 1, each earlier turn nearer the query: turn 1 takes turn 3's place
    and score, above a fact that scored less than turn 3."""
    message = lambda pk: Candidate(MemoryKind.MESSAGE, pk)  # noqa: E731
    ranked = [(message(3), 0.9), (Candidate(MemoryKind.KNOWLEDGE, 99), 0.7), (message(2), 0.5), (message(1), 0.3)]
    result = exchanges_by_their_nearer_turn(ranked, before={3: 2, 2: 1}, similarity={1: 0.8, 2: 0.6, 3: 0.4})
    fact = Candidate(MemoryKind.KNOWLEDGE, 99)
    assert [(r.candidate, r.relevance) for r in result] == [(message(1), 0.9), (fact, 0.7)]
