"""The admin's playground, through Django's test client: staff see the context a bot would get
for a message (window, memories with scores, prompt, token counts) and may store the turn."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.urls import reverse

from memories.models import Message
from memories.services.knowledge import knowledge_add

pytestmark = pytest.mark.django_db

URL = "/admin/memories/enduser/playground/"


@pytest.fixture
def staff(client):
    user = User.objects.create_superuser("curator", "curator@example.com", "pw")
    client.force_login(user)
    return user


@pytest.fixture
def alice(add_messages, django_capture_on_commit_callbacks) -> None:
    add_messages("alice", "s1", [{"role": "user", "content": "Good morning!"}, {"role": "assistant", "content": "Hi!"}])
    with django_capture_on_commit_callbacks(execute=True):
        knowledge_add(user_external_id="alice", content="Alice has a guinea pig named Oscar.")


def test_the_index_links_to_the_playground(staff, client):
    assert reverse("admin:memories_playground") == URL
    assert URL in client.get(reverse("admin:index")).content.decode()


def test_the_playground_is_for_staff_only(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
    User.objects.create_user("someone", password="pw")
    client.login(request=HttpRequest(), username="someone", password="pw")  # django-axes needs the request
    assert client.get(URL).status_code == 302


def test_staff_see_the_context_for_a_message_without_storing_it(staff, alice, client):
    response = client.post(URL, {"user": "alice", "message": "What is my pet called?"})
    assert response.status_code == 200
    context = response.context["result"]
    assert response.context["session"] == "s1"  # the user's latest session
    assert [t.content for t in context.window] == ["Good morning!", "Hi!"]
    knowledge = [hit for hit in context.memories if hit.kind == "knowledge"]
    assert knowledge[0].content == "Alice has a guinea pig named Oscar."
    assert knowledge[0].found_by[0].startswith("vector #")  # why it was chosen
    page = response.content.decode()
    assert ", ".join(knowledge[0].found_by) in page
    for shown in ("Alice has a guinea pig named Oscar.", "Good morning!", f"{knowledge[0].score:.3f}", "knowledge"):
        assert shown in page
    assert context.prompt
    assert context.prompt in html.unescape(page)
    assert f"<td>{context.tokens['prompt']}</td>" in page
    assert Message.objects.filter(content="What is my pet called?").count() == 0


def test_storing_the_turn_adds_it_to_the_session(staff, alice, client):
    response = client.post(URL, {"user": "alice", "session": "s2", "message": "I moved to Kyoto.", "store": "on"})
    assert response.status_code == 200
    stored = Message.objects.get(content="I moved to Kyoto.")
    assert (stored.user.external_id, stored.session.external_id, stored.role) == ("alice", "s2", "user")
    assert f"Stored as message #{stored.pk} in session s2." in response.content.decode()


def test_an_unknown_user_or_an_empty_message_is_refused_on_the_form(staff, alice, client):
    response = client.post(URL, {"user": "nobody", "message": ""})
    assert response.status_code == 200
    assert set(response.context["form"].errors) == {"user", "message"}
    assert response.context["result"] is None
