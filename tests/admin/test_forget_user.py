"""Deleting an end user in the admin does what ``forgetUser`` does."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.urls import reverse

from memories.models import EndUser, Knowledge

pytestmark = pytest.mark.django_db

ADD_KNOWLEDGE = 'mutation { addKnowledge(userId: "mei", content: "Mei is allergic to peanuts.") { __typename } }'


@pytest.fixture
def staff(client):
    user = User.objects.create_superuser("curator", "curator@example.com", "pw")
    client.force_login(user)
    return user


@pytest.mark.parametrize("how", ["delete page", "delete selected action"])
def test_deleting_an_end_user_keeps_no_copy_of_their_facts(how, staff, client, gql, django_capture_on_commit_callbacks):
    gql(ADD_KNOWLEDGE)
    mei = EndUser.objects.get(external_id="mei")
    fact = Knowledge.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        edited = client.post(
            reverse("admin:memories_knowledge_change", args=[fact.pk]),
            {"user": mei.pk, "content": "Mei is allergic to nuts.", "status": "active"},
        )
    assert edited.status_code == 302
    assert LogEntry.objects.filter(content_type__model="knowledge").exists()

    with django_capture_on_commit_callbacks(execute=True):
        if how == "delete page":
            response = client.post(reverse("admin:memories_enduser_delete", args=[mei.pk]), {"post": "yes"})
        else:
            response = client.post(
                reverse("admin:memories_enduser_changelist"),
                {"action": "delete_selected", "_selected_action": [mei.pk], "post": "yes"},
            )

    assert response.status_code == 302
    assert not EndUser.objects.exists()
    assert not Knowledge.history.exists()
    assert not LogEntry.objects.filter(content_type__model="knowledge").exists()
