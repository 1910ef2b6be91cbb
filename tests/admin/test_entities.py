"""Staff curate entities in the admin: merge, rename, delete."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import User
from django.urls import reverse

from memories.models import Entity
from memories.services.messages import MessageIn, messages_add
from tests.worker import raise_facts

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 5, 1, 10, tzinfo=UTC)
CHANGELIST = reverse("admin:memories_entity_changelist")


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("curator", "curator@example.com", "pw"))


@pytest.fixture
def entities(settings) -> dict[str, Entity]:
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    turns = ["My friend Sarah works at Google.", "I have a dog named Rex.", "My friend Sal moved to Paris."]
    messages_add(
        user_external_id="alice",
        session_external_id="s1",
        messages=[MessageIn(role="user", content=t, created_at=T0 + timedelta(days=i)) for i, t in enumerate(turns)],
    )
    raise_facts(user="alice", session="s1")
    return {e.name: e for e in Entity.objects.all()}


def test_pages_load(staff, entities, client):
    assert client.get(CHANGELIST).status_code == 200
    assert client.get(CHANGELIST, {"q": "alice"}).status_code == 200
    assert client.get(reverse("admin:memories_entity_change", args=[entities["Rex"].pk])).status_code == 200


def test_merge_selected_into_the_first_moves_aliases_facts_and_turns(staff, entities, client):
    sarah, sal = entities["Sarah"], entities["Sal"]
    response = client.post(
        CHANGELIST, {"action": "merge", ACTION_CHECKBOX_NAME: [str(sarah.pk), str(sal.pk)]}, follow=True
    )
    assert "Merged 1 other entities into &#x27;Sarah&#x27;" in response.content.decode()
    merged = Entity.objects.get(user__external_id="alice", name="Sarah")
    assert merged.aliases == ["Sal"]
    assert sorted(merged.messages.values_list("content", flat=True)) == [
        "My friend Sal moved to Paris.",
        "My friend Sarah works at Google.",
    ]
    assert (merged.first_mentioned_at, merged.last_mentioned_at) == (T0, T0 + timedelta(days=2))
    assert sorted(Entity.objects.values_list("name", flat=True)) == ["Google", "Paris", "Rex", "Sarah"]


def test_merging_one_entity_is_refused(staff, entities, client):
    response = client.post(CHANGELIST, {"action": "merge", ACTION_CHECKBOX_NAME: [entities["Rex"].pk]}, follow=True)
    assert "Select at least two entities to merge." in response.content.decode()
    assert Entity.objects.filter(name="Rex").exists()


def test_rename_and_delete(staff, entities, client):
    rex = entities["Rex"]
    url = reverse("admin:memories_entity_change", args=[rex.pk])
    data = {
        "name": "Rexy",
        "kind": "pet",
        "aliases": '["Rex"]',
        "knowledge": list(rex.knowledge.values_list("pk", flat=True)),
    }
    response = client.post(url, data, follow=True)
    assert "was changed successfully" in response.content.decode()
    rex.refresh_from_db()
    assert (rex.name, rex.aliases, rex.knowledge.count()) == ("Rexy", ["Rex"], 1)
    clash = client.post(url, {**data, "name": "sarah"})
    assert clash.status_code == 200  # the form again, with the error
    assert "already has an entity named" in clash.content.decode()
    client.post(CHANGELIST, {"action": "delete_selected", ACTION_CHECKBOX_NAME: [rex.pk], "post": "yes"})
    assert not Entity.objects.filter(pk=rex.pk).exists()
