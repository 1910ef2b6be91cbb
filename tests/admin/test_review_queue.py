"""The admin's review queue: facts raised from conversations, used at once, checked by staff after the fact."""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import User
from django.urls import reverse

from memories.models import Knowledge, KnowledgeStatus
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
