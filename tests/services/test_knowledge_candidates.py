"""Knowledge that grows from conversations: extraction, approval, de-duplication, superseding."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from memories import tasks
from memories.models import EndUser, Knowledge, KnowledgeStatus, Session
from memories.services.knowledge import knowledge_approve, knowledge_reject

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _approval_first(settings):  # these tests are about candidates awaiting approval
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True


def _session_with(add_messages, session_id: str, *texts: str) -> None:
    add_messages("aiko", session_id, [{"role": "user", "content": t, "metadata": {"speaker": "Aiko"}} for t in texts])


def test_candidates_appear_as_the_turns_are_read_and_are_not_searched_until_approved(add_messages, search):
    _session_with(add_messages, "s1", "I moved to Osaka last spring.", "I'm allergic to peanuts.", "Nice weather.")

    candidates = Knowledge.objects.filter(status=KnowledgeStatus.CANDIDATE).order_by("id")
    assert [k.content for k in candidates] == ["Aiko moved to Osaka last spring.", "Aiko is allergic to peanuts."]
    first = candidates[0]
    assert first.source_session == Session.objects.get(external_id="s1")
    assert list(first.source_messages.values_list("content", flat=True)) == ["I moved to Osaka last spring."]
    assert first.embedding is not None

    query = "Where does Aiko live?"
    assert "KNOWLEDGE" not in {h["kind"] for h in search(userId="aiko", query=query)["hits"]}
    assert knowledge_approve(knowledge_ids=[first.pk]) == 1
    hits = search(userId="aiko", query=query)["hits"]
    assert [h["content"] for h in hits if h["kind"] == "KNOWLEDGE"] == ["Aiko moved to Osaka last spring."]

    assert knowledge_reject(knowledge_ids=[candidates[1].pk]) == 1
    assert Knowledge.objects.get(pk=candidates[1].pk).status == KnowledgeStatus.REJECTED


def test_the_same_fact_is_not_added_twice(add_messages):
    _session_with(add_messages, "s1", "I'm allergic to peanuts.")
    _session_with(add_messages, "s2", "I am allergic to peanuts.")  # summarises s1
    _session_with(add_messages, "s3", "Hi.")  # summarises s2: a near-duplicate
    tasks.summarize_session(Session.objects.get(external_id="s1").pk, True)  # re-summarised: same fact again
    assert Knowledge.objects.count() == 1


def test_a_contradicting_fact_supersedes_the_old_one_which_is_kept(add_messages, search, settings):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    _session_with(add_messages, "s1", "I live in Tokyo with my sister.")
    tokyo = Knowledge.objects.get(content__contains="Tokyo")
    assert tokyo.status == KnowledgeStatus.ACTIVE  # active at once: approval switched off
    _session_with(add_messages, "s2", "I moved to Osaka last month for a new job.")  # read as it arrives
    osaka = Knowledge.objects.get(content__contains="Osaka")
    tokyo.refresh_from_db()
    assert osaka.status == KnowledgeStatus.ACTIVE
    assert (tokyo.status, tokyo.superseded_by) == (KnowledgeStatus.SUPERSEDED, osaka)
    hits = search(userId="aiko", query="Where does Aiko live?")["hits"]
    # Only the current fact is searched (the old one still shows in s1's summary, as history).
    assert [h["content"] for h in hits if h["kind"] == "KNOWLEDGE"] == ["Aiko moved to Osaka last month for a new job."]


def test_staff_approve_candidates_in_bulk_in_the_admin(add_messages, client, django_capture_on_commit_callbacks):
    _session_with(add_messages, "s1", "I'm allergic to peanuts.", "My favourite colour is teal.")
    _session_with(add_messages, "s2", "Hi.")
    client.force_login(User.objects.create_superuser("curator", "c@example.com", "pw"))
    ids = list(Knowledge.objects.values_list("pk", flat=True))
    overview = " ".join(client.get(reverse("admin:memories_knowledge_changelist")).content.decode().split())
    assert "2 facts raised from conversations await review" in overview
    listing = client.get(reverse("admin:memories_knowledge_changelist"), {"status__exact": "candidate"})
    assert listing.status_code == 200
    assert "Aiko&#x27;s favourite colour is teal." in listing.content.decode()
    peanuts = Knowledge.objects.get(content__contains="peanuts")
    page = client.get(reverse("admin:memories_knowledge_change", args=[peanuts.pk])).content.decode()
    # The message it was raised from, with its time, for the reviewer.
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d Aiko: I&#x27;m allergic to peanuts\.", page)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:memories_knowledge_changelist"), {"action": "approve", "_selected_action": ids})
    assert set(Knowledge.objects.values_list("status", flat=True)) == {KnowledgeStatus.ACTIVE}


def test_candidates_listed_over_graphql(add_messages, gql):
    _session_with(add_messages, "s1", "I'm allergic to peanuts.")
    _session_with(add_messages, "s2", "Hi.")
    query = '{ knowledge(userId: "aiko", status: CANDIDATE) { results { content status sourceSessionId } } }'
    assert gql(query)["data"]["knowledge"]["results"] == [
        {"content": "Aiko is allergic to peanuts.", "status": "CANDIDATE", "sourceSessionId": "s1"}
    ]
    assert gql('{ knowledge(userId: "aiko") { results { content } } }')["data"]["knowledge"]["results"] == []


def test_openai_backend_extracts_facts_in_one_structured_call(openai_chat, fake_openai, add_messages):

    def reply(body):
        if (body.get("response_format") or {}).get("type") != "json_schema":
            return "Aiko talked about food."
        # The conversation is sent as "[id] [when UTC] Speaker: text" lines; 999 is an id the model made up.
        conversation = body["messages"][-1]["content"]
        message_id = int(re.search(r"\[(\d+)\] \[[^]]+ UTC\] Aiko: By the way", conversation).group(1))
        return json.dumps({"facts": [{"text": "Aiko is allergic to peanuts.", "message_ids": [message_id, 999]}]})

    fake_openai.chat_reply = reply
    _session_with(add_messages, "s1", "By the way, peanuts make me ill.")
    _session_with(add_messages, "s2", "Hi.")
    knowledge = Knowledge.objects.get()
    assert knowledge.content == "Aiko is allergic to peanuts."
    assert list(knowledge.source_messages.values_list("content", flat=True)) == ["By the way, peanuts make me ill."]
    assert knowledge.user == EndUser.objects.get(external_id="aiko")
