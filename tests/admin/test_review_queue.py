"""The admin's review queue: facts raised from conversations, used at once, checked by staff after the fact."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import User
from django.urls import reverse

from memories.models import Knowledge, KnowledgeStatus, Message
from tests.factories import KnowledgeFactory
from tests.graphql.documents import CREATE_SUMMARIES, msg

pytestmark = pytest.mark.django_db

QUEUE = reverse("admin:memories_facttoreview_changelist")


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("curator", "curator@example.com", "pw"))


@pytest.fixture
def raised(add_messages, gql):
    """Two facts raised from Mei's first session (an allergy) and a later one (her job), used at once."""
    add_messages("mei", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("I work as a nurse at Saint Luke's.", "2024-05-08T10:00:00Z")])
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": "mei"})
    return {k.content: k for k in Knowledge.objects.all()}


def _rows(client) -> list[str]:
    return [row.content for row in client.get(QUEUE).context["cl"].result_list]


def test_the_queue_lists_unreviewed_facts_newest_first_with_the_turn_each_was_raised_from(staff, raised, client):
    assert {k.status for k in raised.values()} == {KnowledgeStatus.ACTIVE}  # used before anyone reviewed them
    assert _rows(client) == ["The user works as a nurse at Saint Luke's.", "The user is allergic to peanuts."]
    page = client.get(QUEUE).content.decode()
    assert "I work as a nurse at Saint Luke&#x27;s." in page  # the source turn, inline


def test_approving_and_rejecting_from_the_list(staff, raised, client, add_messages, gql):
    job, allergy = raised["The user works as a nurse at Saint Luke's."], raised["The user is allergic to peanuts."]
    client.post(QUEUE, {"action": "approve", ACTION_CHECKBOX_NAME: [job.pk]})
    client.post(QUEUE, {"action": "reject", ACTION_CHECKBOX_NAME: [allergy.pk]})
    job.refresh_from_db()
    allergy.refresh_from_db()
    assert (job.status, job.reviewed, allergy.status) == (KnowledgeStatus.ACTIVE, True, KnowledgeStatus.REJECTED)
    assert _rows(client) == []
    # A rejected fact never comes back, even said again in a later session.
    add_messages("mei", "s3", [msg("I'm allergic to peanuts.", "2024-06-01T10:00:00Z")])
    add_messages("mei", "s4", [msg("Good morning.", "2024-06-02T10:00:00Z")])
    assert not Knowledge.objects.filter(status=KnowledgeStatus.ACTIVE, content__icontains="peanuts").exists()


def test_correcting_a_fact_in_the_list_reviews_it_and_keeps_its_history(staff, raised, client):
    job = raised["The user works as a nurse at Saint Luke's."]
    allergy = raised["The user is allergic to peanuts."]
    form = {
        "form-TOTAL_FORMS": "2",
        "form-INITIAL_FORMS": "2",
        "form-0-id": str(job.pk),
        "form-0-content": "The user works as a nurse at St Luke's Hospital.",
        "form-1-id": str(allergy.pk),
        "form-1-content": allergy.content,
        "_save": "Save",
    }
    assert client.post(QUEUE, form).status_code == 302
    job.refresh_from_db()
    assert (job.content, job.reviewed) == ("The user works as a nurse at St Luke's Hospital.", True)
    assert list(job.history.order_by("history_date").values_list("content", flat=True))[-2:] == [
        "The user works as a nurse at Saint Luke's.",
        "The user works as a nurse at St Luke's Hospital.",
    ]
    assert _rows(client) == ["The user is allergic to peanuts."]


KNOWLEDGE = reverse("admin:memories_knowledge_changelist")


def test_each_row_is_one_line_with_its_slot_source_turn_and_a_link_to_the_facts_page(staff, raised, client):
    job = raised["The user works as a nurse at Saint Luke's."]
    page = client.get(QUEUE).content.decode()
    assert f'<input type="text" name="form-0-content" value="{job.content.replace(chr(39), "&#x27;")}"' in page
    assert "<textarea" not in page
    assert f'<a href="/admin/memories/knowledge/{job.pk}/change/">#{job.pk}</a>' in page
    assert f'<td class="field-slot">{job.slot}</td>' in page
    assert "2024-05-08 10:00 · s2</span><br>user: I work as a nurse at Saint Luke&#x27;s." in page
    assert client.get(f"/admin/memories/knowledge/{job.pk}/change/").status_code == 200


def test_the_knowledge_lists_review_column_and_banner_agree(staff, raised, client, gql):
    gql('mutation { addKnowledge(userId: "mei", content: "Mei likes jazz.") { __typename } }')  # added: reviewed
    page = client.get(KNOWLEDGE).content.decode()
    assert "2 facts raised from conversations await review" in " ".join(page.split())
    column = re.findall(r'<td class="field-awaiting_review"><img src="[^"]+" alt="(True|False)">', page)
    assert sorted(column) == ["False", "True", "True"]
    # The session a fact was raised from shows as the chatbot's id.
    assert '<td class="field-said_in_session">s2</td>' in page


def test_a_users_facts_now_and_what_was_true_when(staff, client, add_messages, gql):
    add_messages("kai", "s1", [msg("I live in Tokyo.", "2024-01-10T10:00:00Z")])
    add_messages("kai", "s2", [msg("I moved to Osaka last week.", "2024-06-01T10:00:00Z")])
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": "kai"})
    osaka = Knowledge.objects.get(status=KnowledgeStatus.ACTIVE, content__contains="Osaka")
    tokyo = Knowledge.objects.get(status=KnowledgeStatus.SUPERSEDED, content__contains="Tokyo")
    user = osaka.user

    assert f'href="/admin/memories/enduser/{user.pk}/facts/"' in client.get("/admin/memories/enduser/").content.decode()
    page = client.get(f"/admin/memories/enduser/{user.pk}/facts/").content.decode()
    current = page.split('id="current-facts"')[1].split('id="fact-history"')[0]
    assert osaka.content in current
    assert tokyo.content not in current
    history = page.split('id="fact-history"')[1]
    rows = re.findall(
        r"<td>(?:[a-z]+)?</td>\s*<td><a [^>]+>([^<]+)</a></td>\s*<td>([^<]+)</td>\s*<td>([^<]+)</td>", history
    )
    assert rows == [
        (tokyo.content, "2024-01-10 10:00", "2024-06-01 10:00"),
        (osaka.content, "2024-06-01 10:00", "now"),
    ]


def test_a_fact_a_later_turn_may_have_replaced_is_flagged_with_that_turn(staff, client, add_messages, gql):
    add_messages("ines", "s1", [msg("I work as a nurse at Saint Luke's.", "2024-03-01T10:00:00Z")])
    add_messages("ines", "s2", [msg("I am allergic to peanuts.", "2024-03-02T10:00:00Z")])
    add_messages("ines", "s3", [msg("Work is a long story these days.", "2024-03-04T10:00:00Z")])
    # How loosely a change may be told and still speak of a slot is the reader's (tests/llm); here, the turn did.
    Message.objects.filter(content="Work is a long story these days.").update(slot="job")
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": "ines"})

    rows = {row.content: row for row in client.get(QUEUE).context["cl"].result_list}
    nurse, allergy = rows["The user works as a nurse at Saint Luke's."], rows["The user is allergic to peanuts."]
    assert nurse.later_turn_id is not None
    assert allergy.later_turn_id is None
    page = client.get(QUEUE).content.decode()
    assert "Work is a long story these days." in page  # the later turn, inline


def test_approving_and_rejecting_shared_knowledge_with_a_users_fact(staff, raised, client):
    """Shared knowledge has no owner: approving or rejecting it beside a user's fact takes only that user's locks."""
    shared = KnowledgeFactory(user=None, content="The office closes at 6pm.", status=KnowledgeStatus.CANDIDATE)
    other = KnowledgeFactory(user=None, content="The canteen opens at noon.", status=KnowledgeStatus.CANDIDATE)
    job = Knowledge.objects.filter(user__isnull=False).first()
    client.post(QUEUE, {"action": "approve", ACTION_CHECKBOX_NAME: [shared.pk, job.pk]})
    client.post(QUEUE, {"action": "reject", ACTION_CHECKBOX_NAME: [other.pk]})
    shared.refresh_from_db()
    other.refresh_from_db()
    assert (shared.status, shared.reviewed) == (KnowledgeStatus.ACTIVE, True)
    assert (other.status, other.reviewed) == (KnowledgeStatus.REJECTED, True)
