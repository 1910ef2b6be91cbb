"""The admin, as staff use it: pages load, curated edits re-embed and are audited."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.urls import reverse

from memories.models import ApiKey, Diary, EndUser, Knowledge, KnowledgeStatus, Message, Session, Summary
from tests.factories import ApiKeyFactory, DiaryFactory, EndUserFactory, KnowledgeFactory
from tests.graphql.documents import CREATE_SUMMARIES, msg, ok

pytestmark = pytest.mark.django_db

MODELS = [EndUser, Session, Message, Summary, Knowledge, Diary, ApiKey]


@pytest.fixture
def staff(client):
    user = User.objects.create_superuser("curator", "curator@example.com", "pw")
    client.force_login(user)
    return user


@pytest.fixture
def memory(add_messages):
    add_messages("alice", "s1", [{"role": "user", "content": "I am allergic to peanuts."}], channel="web")
    add_messages("alice", "s2", [{"role": "user", "content": "Good morning!"}], channel="web")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_changelist_and_change_pages_load(model, staff, memory, client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        KnowledgeFactory(user=EndUser.objects.get(external_id="alice"), content="Likes jazz.")
        DiaryFactory(user=EndUser.objects.get(external_id="alice"), diary_date="2024-05-01", content="Rain.")
        ApiKeyFactory(name="bot", prefix="mem_x", key_hash="h")
    opts = model._meta
    changelist = client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    assert changelist.status_code == 200
    row = model.objects.first()
    change = client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[row.pk]))
    assert change.status_code == 200
    search = client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"), {"q": "alice"})
    assert search.status_code == 200


def test_raw_history_is_read_only(staff, memory, client):
    message = Message.objects.first()
    url = reverse("admin:memories_message_change", args=[message.pk])
    response = client.post(url, {"content": "rewritten"})
    assert response.status_code == 403
    message.refresh_from_db()
    assert message.content == "I am allergic to peanuts."
    assert client.get(reverse("admin:memories_message_add")).status_code == 403


def test_editing_knowledge_re_embeds_it_and_keeps_an_audit_trail(
    staff, client, django_capture_on_commit_callbacks, search
):
    alice = EndUserFactory(external_id="alice")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:memories_knowledge_add"),
            {"user": alice.pk, "content": "Alice plays the violin.", "status": "active"},
        )
    assert response.status_code == 302
    knowledge = Knowledge.objects.get()
    old_vector = list(knowledge.embedding)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:memories_knowledge_change", args=[knowledge.pk]),
            {"user": alice.pk, "content": "Alice plays the cello.", "status": "active"},
        )
    assert response.status_code == 302
    knowledge.refresh_from_db()
    assert knowledge.content == "Alice plays the cello."
    assert knowledge.embedding is not None
    assert list(knowledge.embedding) != old_vector

    history = list(knowledge.history.order_by("history_date"))
    assert [h.content for h in history] == ["Alice plays the violin.", "Alice plays the cello."]
    assert history[-1].history_user == staff
    assert client.get(reverse("admin:memories_knowledge_history", args=[knowledge.pk])).status_code == 200

    result = search(userId="alice", query="Which instrument does Alice play?")
    assert result["hits"][0]["content"] == "Alice plays the cello."


def test_shared_knowledge_is_created_without_a_user(staff, client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:memories_knowledge_add"), {"content": "The desk opens at 9.", "status": "active"})
    knowledge = Knowledge.objects.get()
    assert knowledge.user is None
    assert knowledge.embedding is not None


def test_regenerate_summaries_action(staff, memory, client, django_capture_on_commit_callbacks):
    summary = Summary.objects.get()
    Summary.objects.filter(pk=summary.pk).update(content="stale text")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:memories_summary_changelist"),
            {"action": "regenerate", "_selected_action": [summary.pk]},
        )
    assert response.status_code == 302
    summary.refresh_from_db()
    assert "peanuts" in summary.content


def test_editing_a_diary_re_embeds_it(staff, client, django_capture_on_commit_callbacks):
    alice = EndUserFactory(external_id="alice")
    diary = DiaryFactory(user=alice, diary_date="2024-05-01", content="Rainy day at home.")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("admin:memories_diary_change", args=[diary.pk]),
            {"user": alice.pk, "diary_date": "2024-05-01", "content": "Hiked Mount Rokko.", "metadata": "{}"},
        )
    diary.refresh_from_db()
    assert diary.content == "Hiked Mount Rokko."
    assert diary.embedding is not None


def test_change_forms_save_for_every_editable_model(staff, memory, client, django_capture_on_commit_callbacks):
    alice = EndUser.objects.get(external_id="alice")
    with django_capture_on_commit_callbacks(execute=True):
        knowledge = KnowledgeFactory(user=alice, content="Likes jazz.")
        diary = DiaryFactory(user=alice, diary_date="2024-05-01", content="Rain.")
    forms = {
        reverse("admin:memories_enduser_change", args=[alice.pk]): {"external_id": "alice"},
        reverse("admin:memories_knowledge_change", args=[knowledge.pk]): {
            "user": alice.pk,
            "content": "Likes jazz and blues.",
            "status": "active",
        },
        reverse("admin:memories_diary_change", args=[diary.pk]): {
            "user": alice.pk,
            "diary_date": "2024-05-01",
            "content": "Rain, then sun.",
            "metadata": "{}",
        },
        reverse("admin:memories_apikey_add"): {"name": "slack-bot", "user_external_ids": "alice,bob"},
    }
    for url, data in forms.items():
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(url, data, follow=True)
        assert response.status_code == 200
        assert "was added successfully" in response.content.decode() or "was changed successfully" in (
            response.content.decode()
        ), url
    key = ApiKey.objects.get(name="slack-bot")
    assert key.user_external_ids == ["alice", "bob"]
    assert "New API key (shown only now" in response.content.decode()
    assert Knowledge.objects.get(pk=knowledge.pk).content == "Likes jazz and blues."
    assert Diary.objects.get(pk=diary.pk).content == "Rain, then sun."


@pytest.mark.parametrize("how", ["delete page", "delete selected action"])
def test_deleting_a_fact_brings_back_the_one_it_superseded_and_keeps_no_copy_of_its_text(
    how, staff, client, add_messages, gql, settings, django_capture_on_commit_callbacks
):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    add_messages("mei", "s1", [msg("I live in Tokyo.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("I live in Osaka now.", "2024-06-01T10:00:00Z")])
    ok(gql(CREATE_SUMMARIES, {"userId": "mei"}))
    osaka = Knowledge.objects.get(status=KnowledgeStatus.ACTIVE)
    assert osaka.content == "The user lives in Osaka now."

    with django_capture_on_commit_callbacks(execute=True):
        if how == "delete page":
            response = client.post(reverse("admin:memories_knowledge_delete", args=[osaka.pk]), {"post": "yes"})
        else:
            response = client.post(
                reverse("admin:memories_knowledge_changelist"),
                {"action": "delete_selected", "_selected_action": [osaka.pk], "post": "yes"},
            )

    assert response.status_code == 302
    assert [k.content for k in Knowledge.objects.filter(status=KnowledgeStatus.ACTIVE)] == ["The user lives in Tokyo."]
    assert not Knowledge.history.filter(id=osaka.pk).exists()
    assert not LogEntry.objects.filter(object_id=str(osaka.pk), content_type__model="knowledge").exists()
