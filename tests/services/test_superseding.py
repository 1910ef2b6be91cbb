"""Superseding that holds: within a slot the fact said last is active, whatever the approval order."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from memories.models import Knowledge, KnowledgeStatus
from memories.services.knowledge import knowledge_approve
from memories.services.messages import MessageIn, messages_add
from tests.worker import raise_facts

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _approval_first(settings):  # these tests are about candidates awaiting approval
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True


MOVES = [
    ("s1", datetime(2024, 1, 5, tzinfo=UTC), "I live in Tokyo."),
    ("s2", datetime(2024, 3, 5, tzinfo=UTC), "I live in Osaka now."),
    ("s3", datetime(2024, 6, 5, tzinfo=UTC), "I moved to Kyoto."),
]


def _extract(session: str, said_at: datetime, *texts: str, user: str = "aiko") -> list[Knowledge]:
    messages = [MessageIn(role="user", content=t, created_at=said_at, metadata={"speaker": "Aiko"}) for t in texts]
    messages_add(user_external_id=user, session_external_id=session, messages=messages)
    return raise_facts(user=user, session=session)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_the_residence_said_last_is_active_whatever_the_approval_order(order):
    facts = [_extract(session, at, text)[0] for session, at, text in MOVES]
    assert [f.slot for f in facts] == ["residence"] * 3
    for index in order:
        assert knowledge_approve(knowledge_ids=[facts[index].pk]) == 1

    kyoto = Knowledge.objects.get(status=KnowledgeStatus.ACTIVE)
    assert kyoto.content == "Aiko moved to Kyoto."
    superseded = Knowledge.objects.filter(status=KnowledgeStatus.SUPERSEDED).order_by("said_at")
    assert [(k.content, k.superseded_by) for k in superseded] == [
        ("Aiko lives in Tokyo.", kyoto),
        ("Aiko lives in Osaka now.", kyoto),
    ]


def test_the_admin_approve_action_settles_the_slot_and_history_keeps_every_state(client):
    facts = [_extract(session, at, text)[0] for session, at, text in MOVES]
    client.force_login(User.objects.create_superuser("curator", "c@example.com", "pw"))
    changelist = reverse("admin:memories_knowledge_changelist")
    for fact in (facts[2], facts[0], facts[1]):  # Kyoto first: the older ones arrive superseded
        client.post(changelist, {"action": "approve", "_selected_action": [fact.pk]})
    assert list(Knowledge.objects.filter(status=KnowledgeStatus.ACTIVE).values_list("content", flat=True)) == [
        "Aiko moved to Kyoto."
    ]
    tokyo_states = list(Knowledge.history.filter(id=facts[0].pk).order_by("history_date").values_list("status"))
    assert tokyo_states == [("candidate",), ("active",), ("superseded",)]
    listing = client.get(changelist, {"slot": "residence"}).content.decode()
    assert "Aiko lives in Osaka now." in listing


def test_approving_several_at_once_keeps_the_newest_and_other_slots_and_users_apart():
    facts = [_extract(session, at, text)[0] for session, at, text in MOVES]
    (job,) = _extract("s4", datetime(2024, 1, 1, tzinfo=UTC), "I work as a nurse.")
    (other,) = _extract("t1", datetime(2023, 1, 1, tzinfo=UTC), "I live in Nagoya.", user="ben")
    assert knowledge_approve(knowledge_ids=[f.pk for f in reversed(facts)] + [job.pk, other.pk]) == 5
    active = set(Knowledge.objects.filter(status=KnowledgeStatus.ACTIVE).values_list("content", flat=True))
    assert active == {"Aiko moved to Kyoto.", "Aiko works as a nurse.", "Aiko lives in Nagoya."}


def test_active_at_once_without_approval_supersedes_by_conversation_time(settings, gql):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    _extract("s3", MOVES[2][1], MOVES[2][2])
    _extract("s1", MOVES[0][1], MOVES[0][2])  # an older session imported late
    query = '{ knowledge(userId: "aiko", status: %s) { results { content } } }'
    assert gql(query % "ACTIVE")["data"]["knowledge"]["results"] == [{"content": "Aiko moved to Kyoto."}]
    assert gql(query % "SUPERSEDED")["data"]["knowledge"]["results"] == [{"content": "Aiko lives in Tokyo."}]


def test_an_unslotted_contradiction_is_flagged_for_review_not_silently_kept(settings, client):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    settings.CHAT_BACKEND = "tests.services.test_superseding.ContradictingChatModel"
    _extract("s0", datetime(2023, 12, 1, tzinfo=UTC), "Aiko has a sister.")
    first = _extract("s1", datetime(2024, 1, 1, tzinfo=UTC), "Aiko loves cats.")
    second = _extract("s2", datetime(2024, 2, 1, tzinfo=UTC), "Aiko is allergic to cats.")
    assert Knowledge.objects.get(pk=second[0].pk).replaces_id == first[0].pk
    assert set(Knowledge.objects.values_list("status", flat=True)) == {KnowledgeStatus.ACTIVE}

    client.force_login(User.objects.create_superuser("curator", "c@example.com", "pw"))
    flagged = client.get(reverse("admin:memories_knowledge_changelist"), {"needs_review__exact": "1"}).content.decode()
    assert "Aiko loves cats." in flagged
    assert "Aiko is allergic to cats." in flagged
    assert "Aiko has a sister." not in flagged


class ContradictingChatModel:
    """A fake LLM: each session's first message becomes a fact contradicting a known fact that ends in the same word."""

    mode = "generated"
    model_name = "contradicting"

    def extract_facts(self, *, messages, known_facts):
        from memories.llm.base import Fact, FactExtraction

        message_id, line = messages[0]
        text = line.partition(": ")[2]
        replaces = next((i for i, known in known_facts if known.split()[-1] == text.split()[-1]), None)
        return FactExtraction(facts=[Fact(text=text, message_ids=[message_id], replaces_id=replaces)], mode="generated")
