"""Re-embedding with another model of another dimension: resumable, never mixing models."""

from __future__ import annotations

from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import override_settings

from memories.management.commands import reembed as reembed_command
from memories.models import Diary, Knowledge, Message, Summary
from memories.services.diaries import diary_upsert
from memories.services.knowledge import knowledge_add
from memories.services.reembed import reembed_column_dimensions, reembed_status

pytestmark = pytest.mark.django_db

QUERY = "Which instrument does Alice play?"


@pytest.fixture
def alice_memory(add_messages, django_capture_on_commit_callbacks):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "I play the cello in a small orchestra."},
            {"role": "user", "content": "My brother lives in Lisbon."},
            {"role": "user", "content": "We went hiking on Sunday."},
        ],
    )
    add_messages("alice", "s2", [{"role": "user", "content": "Good morning."}])  # summarises s1
    with django_capture_on_commit_callbacks(execute=True):
        knowledge_add(user_external_id="alice", content="Alice is a nurse.")
        diary_upsert(user_external_id="alice", diary_date=date(2024, 5, 1), content="Rain all day.")
    assert not any(m.objects.filter(embedding__isnull=True).exists() for m in (Message, Summary, Knowledge, Diary))


@pytest.fixture
def new_model(settings, fake_openai):
    """Settings of the new model: an OpenAI-compatible server giving 64-dimensional vectors."""
    return {
        "EMBEDDING_BACKEND": "openai",
        "OPENAI_API_KEY": "test",
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_MAX_RETRIES": 0,
        "EMBEDDING_MODEL": "fake-embedding-64",
        "EMBEDDING_DIMENSIONS": 64,
        "OPENAI_EMBEDDING_DIMENSIONS": 64,
    }


def _top_message(search) -> str:
    """The turn the best hit stands for: a message's own, or the one a fact was raised from."""
    hits = search(userId="alice", query=QUERY, topK=3)["hits"]
    return next(
        h["content"] if h["kind"] == "MESSAGE" else h["turns"][0]["content"]
        for h in hits
        if h["kind"] == "MESSAGE" or (h["kind"] == "KNOWLEDGE" and h["turns"])
    )


def test_reembed_across_a_dimension_change(alice_memory, new_model, search, gql, monkeypatch):
    before = _top_message(search)
    assert before == "I play the cello in a small orchestra."
    counts = {m: m.objects.count() for m in (Message, Summary, Knowledge, Diary)}

    # An interrupted run (Ctrl-C after two batches) leaves the service on the old vectors.
    real_batch = reembed_command.reembed_batch
    calls = {"n": 0}

    def interrupted(**kwargs):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        return real_batch(**kwargs)

    monkeypatch.setattr(reembed_command, "reembed_batch", interrupted)
    with override_settings(**new_model), pytest.raises(KeyboardInterrupt):
        call_command("reembed", "--batch-size", "1", stdout=StringIO())
    with override_settings(**new_model):
        pending = reembed_status(model_name="fake-embedding-64")
    assert pending["message"] == Message.objects.count() - 2
    assert reembed_column_dimensions(kind="message") == 384
    assert _top_message(search) == before  # during: old vectors, old model, same answer

    # Resuming continues where it stopped, then switches every kind at once.
    monkeypatch.setattr(reembed_command, "reembed_batch", real_batch)
    out = StringIO()
    with override_settings(**new_model):
        call_command("reembed", "--batch-size", "2", stdout=out)
    assert f"message: {Message.objects.count() - 2}" in out.getvalue()
    assert {kind: reembed_column_dimensions(kind=kind) for kind in ("message", "summary", "knowledge", "diary")} == {
        "message": 64,
        "summary": 64,
        "knowledge": 64,
        "diary": 64,
    }
    assert set(Message.objects.values_list("embedding_model", flat=True)) == {"fake-embedding-64"}
    assert {m: m.objects.count() for m in (Message, Summary, Knowledge, Diary)} == counts  # nothing lost

    # The old configuration is told clearly instead of mixing or crashing.
    body = gql(
        "query($i: SearchInput!) { search(input: $i) { __typename } }", {"i": {"userId": "alice", "query": QUERY}}
    )
    assert body["errors"][0]["extensions"]["code"] == "REEMBEDDING_NEEDED"
    assert _database_warnings() == {"memories.W001", "memories.W002"}
    assert _database_warnings(database=None) == set()  # a plain `check` queries nothing

    # After: the new configuration finds the same message with the new vectors.
    with override_settings(**new_model):
        assert _top_message(search) == before
        assert _database_warnings() == set()

    # The indexes the models declare on the vector columns are there again, with their parameters.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes "
            "WHERE indexname LIKE '%%embedding_hnsw' OR indexname = 'message_unembedded'"
        )
        indexes = dict(cursor.fetchall())
    assert set(indexes) == {
        "message_embedding_hnsw",
        "summary_embedding_hnsw",
        "knowledge_embedding_hnsw",
        "diary_embedding_hnsw",
        "message_unembedded",
    }
    assert "vector_cosine_ops" in indexes["message_embedding_hnsw"]
    assert "m='16'" in indexes["message_embedding_hnsw"]
    assert "ef_construction='64'" in indexes["message_embedding_hnsw"]
    assert "WHERE (embedding IS NULL)" in indexes["message_unembedded"]


def _database_warnings(database: str | None = "default") -> set[str]:
    """The ids of the W001/W002 warnings ``manage.py check [--database default]`` prints."""
    out = StringIO()
    call_command("check", *(["--database", database] if database else []), stdout=out, stderr=out)
    return {code for code in ("memories.W001", "memories.W002") if code in out.getvalue()}
