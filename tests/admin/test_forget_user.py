"""Deleting an end user in the admin does what ``forgetUser`` does."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import reverse

from memories.models import EndUser, Knowledge, Message
from tests.conftest import ADD_MESSAGES
from tests.factories import KnowledgeFactory

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


# --- forgetting forgets ----------------------------------------------------------------------

SECRET = "The safe's code is 4711."


def _fact_edited_in_the_admin(gql) -> int:
    """A fact of user "u" added over the API, then edited by staff in the admin (logged there)."""
    added = gql(
        'mutation($c: String!) { addKnowledge(userId: "u", content: $c) { ... on Knowledge { id } } }', {"c": SECRET}
    )
    knowledge_id = int(added["data"]["addKnowledge"]["id"])
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    admin = Client()
    admin.force_login(staff)
    response = admin.post(
        f"/admin/memories/knowledge/{knowledge_id}/change/",
        {"user": EndUser.objects.get(external_id="u").pk, "content": SECRET + " Changed.", "status": "active"},
    )
    assert response.status_code == 302, response.content
    assert LogEntry.objects.filter(action_flag=CHANGE, object_repr__contains="4711").exists()
    assert Knowledge.history.filter(content__contains="4711").exists()
    return knowledge_id


def _traces_of_the_secret() -> list[str]:
    traces = [f"history: {h.content}" for h in Knowledge.history.filter(content__contains="4711")]
    traces += [
        f"admin log: {e.object_repr} {e.change_message}"
        for e in LogEntry.objects.filter(content_type=ContentType.objects.get_for_model(Knowledge))
        if "4711" in e.object_repr or "4711" in e.change_message
    ]
    return traces


def test_delete_knowledge_removes_the_text_from_audit_history_and_admin_log(gql):
    knowledge_id = _fact_edited_in_the_admin(gql)
    answer = gql('mutation($id: ID!) { deleteKnowledge(id: $id, userId: "u") { __typename } }', {"id": knowledge_id})
    assert answer["data"]["deleteKnowledge"]["__typename"] == "DeleteKnowledgeResult"
    assert _traces_of_the_secret() == []


def test_forget_user_removes_an_edited_facts_text_from_the_admin_log(gql):
    _fact_edited_in_the_admin(gql)
    gql(ADD_MESSAGES, {"userId": "u", "sessionId": "s", "channel": "", "messages": [{"role": "user", "content": "hi"}]})
    answer = gql('mutation { forgetUser(userId: "u") { ... on ForgetUserResult { knowledge messages } } }')
    assert answer["data"]["forgetUser"] == {"knowledge": 1, "messages": 1}
    assert _traces_of_the_secret() == []
    assert not LogEntry.objects.filter(object_repr__contains="4711").exists()


def test_delete_history_removes_a_raised_facts_text_from_the_admin_log(gql):
    gql(
        ADD_MESSAGES,
        {"userId": "u", "sessionId": "s", "channel": "", "messages": [{"role": "user", "content": SECRET}]},
    )
    message = Message.objects.get()
    fact = KnowledgeFactory(user=message.user, content=SECRET, source_session=message.session)
    fact.source_messages.set([message])
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    LogEntry.objects.log_actions(user_id=staff.pk, queryset=[fact], action_flag=CHANGE, change_message="edited")
    answer = gql('mutation { deleteHistory(userId: "u") { ... on DeleteHistoryResult { deletedMessages } } }')
    assert answer["data"]["deleteHistory"] == {"deletedMessages": 1}
    assert _traces_of_the_secret() == []
