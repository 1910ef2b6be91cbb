"""Offline summaries keep a session's facts under the right speaker; long sessions are summarised as they go."""

from __future__ import annotations

import pytest

from memories.models import Summary

pytestmark = pytest.mark.django_db


def say(speaker: str, content: str, minute: int) -> dict:
    role = "user" if speaker == "Mia" else "assistant"
    return {
        "role": role,
        "content": content,
        "createdAt": f"2024-02-03T10:{minute:02d}:00Z",
        "metadata": {"speaker": speaker},
    }


CHATTER = [
    "Hey, how are you doing today?",
    "That sounds really nice, tell me more about it.",
    "Haha, yes, I know exactly what you mean.",
    "Oh wow, that is so cool to hear!",
]


def test_an_offline_summary_keeps_facts_with_their_speaker(add_messages, settings):
    settings.SUMMARY_MAX_SENTENCES = 3
    turns = []
    for i, text in enumerate(CHATTER * 3):
        turns.append(say("Mia" if i % 2 else "Bot", text, i))
    turns.append(say("Mia", "I adopted a grey cat named Pixel on 12 January in Porto.", 40))
    add_messages("mia", "s1", turns)
    add_messages("mia", "s2", [say("Mia", "Hello again.", 50)])  # a new session: s1 is summarised

    summary = Summary.objects.get(session__external_id="s1")
    assert "Mia: I adopted a grey cat named Pixel on 12 January in Porto." in summary.content
    assert "Bot: I adopted" not in summary.content


def test_a_long_session_is_summarised_as_it_goes(add_messages, settings):
    settings.SUMMARY_EVERY_MESSAGES = 10
    add_messages("mia", "long", [say("Mia", f"Message number {i} about my garden.", i) for i in range(9)])
    assert not Summary.objects.filter(session__external_id="long").exists()
    add_messages("mia", "long", [say("Mia", "My tomatoes finally turned red this week.", 20)])
    first = Summary.objects.get(session__external_id="long")
    assert first.message_count == 10
    add_messages("mia", "long", [say("Mia", f"More garden news {i}.", 30 + i) for i in range(5)])
    assert Summary.objects.get(session__external_id="long").message_count == 10  # not yet 10 more
    add_messages("mia", "long", [say("Mia", f"Even more garden news {i}.", 40 + i) for i in range(5)])
    assert Summary.objects.get(session__external_id="long").message_count == 20
