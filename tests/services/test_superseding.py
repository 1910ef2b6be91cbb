"""Superseding that holds: within a slot the fact said last is active, whatever the approval order.

Deleting the newer fact (or its session) makes the older one active again; a rejected or superseded
fact is not raised again when its session is summarised again.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from memories.models import Knowledge, KnowledgeStatus, Session
from memories.services.api_keys import api_key_create
from memories.services.knowledge import knowledge_approve, knowledge_extract
from memories.services.messages import MessageIn, messages_add
from tests.graphql.documents import (
    DELETE_HISTORY,
    DELETE_KNOWLEDGE,
    msg,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _approval_first(settings):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True


MOVES = [
    ("s1", datetime(2024, 1, 5, tzinfo=UTC), "I live in Tokyo."),
    ("s2", datetime(2024, 3, 5, tzinfo=UTC), "I live in Osaka now."),
    ("s3", datetime(2024, 6, 5, tzinfo=UTC), "I moved to Kyoto."),
]


def _extract(session: str, said_at: datetime, *texts: str, user: str = "aiko") -> list[Knowledge]:
    messages = [MessageIn(role="user", content=t, created_at=said_at, metadata={"speaker": "Aiko"}) for t in texts]
    messages_add(user_external_id=user, session_external_id=session, messages=messages)
    return knowledge_extract(session_id=Session.objects.get(user__external_id=user, external_id=session).pk)


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


FACTS = """
query Facts($userId: String!) {
  active: knowledge(userId: $userId, status: ACTIVE) { results { content } }
  superseded: knowledge(userId: $userId, status: SUPERSEDED) { results { content } }
}
"""


def test_moving_back_said_later_in_the_first_session_is_the_active_fact(add_messages, summarize, gql_ok, settings):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    add_messages("mei", "s1", [msg("I live in Tokyo.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("I live in Osaka.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    # Back in the first conversation a month later, Mei has moved back.
    add_messages("mei", "s1", [msg("I live in Tokyo.", "2024-07-01T10:00:00Z")])
    summarize("mei")

    found = gql_ok(FACTS, {"userId": "mei"})
    assert found["active"]["results"] == [{"content": "The user lives in Tokyo."}]
    assert sorted(f["content"] for f in found["superseded"]["results"]) == [
        "The user lives in Osaka.",
        "The user lives in Tokyo.",  # as said in May, before the move to Osaka
    ]


ACTIVE_FACTS = """
query Facts($userId: String!) { knowledge(userId: $userId) { results { id content } } }
"""


@pytest.fixture
def moved(add_messages, summarize, gql_ok, settings) -> str:
    """Mei said she lives in Tokyo (session s1), then in Osaka (s2): the Osaka fact is active; returns its id."""
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    add_messages("mei", "s1", [msg("I live in Tokyo.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("I live in Osaka now.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    [fact] = gql_ok(ACTIVE_FACTS, {"userId": "mei"})["knowledge"]["results"]
    assert fact["content"] == "The user lives in Osaka now."
    return fact["id"]


def test_deleting_the_fact_that_superseded_another_makes_that_one_active_again(moved, gql_ok, search):
    gql_ok(DELETE_KNOWLEDGE, {"id": moved, "userId": "mei"})
    facts = gql_ok(ACTIVE_FACTS, {"userId": "mei"})["knowledge"]["results"]
    assert [f["content"] for f in facts] == ["The user lives in Tokyo."]
    hits = search(userId="mei", query="Where does the user live?", sources=["KNOWLEDGE"], answer=False)["hits"]
    assert [h["content"] for h in hits] == ["The user lives in Tokyo."]


def test_deleting_the_session_of_the_newer_fact_makes_the_older_one_active_again(moved, gql_ok):
    gql_ok(DELETE_HISTORY, {"userId": "mei", "sessionId": "s2"})
    facts = gql_ok(ACTIVE_FACTS, {"userId": "mei"})["knowledge"]["results"]
    assert [f["content"] for f in facts] == ["The user lives in Tokyo."]


def test_a_rejected_candidate_is_not_raised_again_when_its_session_is_summarised_again(
    add_messages, summarize, gql, gql_ok, settings
):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True
    _, curator = api_key_create(name="curator", all_users=True, may_curate=True)
    add_messages("mei", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    summarize("mei")
    candidates = """query { knowledge(userId: "mei", status: CANDIDATE) { results { id content } } }"""
    [candidate] = gql_ok(candidates)["knowledge"]["results"]
    reject = 'mutation R($id: ID!) { rejectKnowledge(id: $id, userId: "mei") { __typename } }'
    assert gql(reject, {"id": candidate["id"]}, key=curator) == {
        "data": {"rejectKnowledge": {"__typename": "Knowledge"}}
    }
    gql_ok('mutation { createSummaries(userId: "mei", overwrite: true) { __typename } }')
    assert gql_ok(candidates)["knowledge"]["results"] == []


def test_a_superseded_fact_is_not_raised_again_when_its_session_is_summarised_again(moved, gql_ok):
    gql_ok('mutation { createSummaries(userId: "mei", overwrite: true) { __typename } }')
    everything = """query { a: knowledge(userId: "mei", status: ACTIVE) { results { content } }
      s: knowledge(userId: "mei", status: SUPERSEDED) { results { content } } }"""
    assert gql_ok(everything) == {
        "a": {"results": [{"content": "The user lives in Osaka now."}]},
        "s": {"results": [{"content": "The user lives in Tokyo."}]},
    }


def test_a_rejected_fact_never_comes_back_even_said_again_in_a_later_session(add_messages, summarize, gql, gql_ok):
    _, curator = api_key_create(name="curator", all_users=True, may_curate=True)
    facts = """query { knowledge(userId: "mei", status: ACTIVE) { results { id content } } }"""
    add_messages("mei", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    summarize("mei")
    [fact] = gql_ok(facts)["knowledge"]["results"]  # used at once, not reviewed
    gql(f'mutation {{ rejectKnowledge(id: "{fact["id"]}", userId: "mei") {{ __typename }} }}', key=curator)
    add_messages("mei", "s2", [msg("I'm allergic to peanuts.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    assert gql_ok(facts)["knowledge"]["results"] == []
    rejected = gql_ok('query { knowledge(userId: "mei", status: REJECTED) { results { content } } }')
    assert rejected["knowledge"]["results"] == [{"content": "The user is allergic to peanuts."}]
