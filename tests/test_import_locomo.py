"""End to end on real conversations: import part of LoCoMo, let the tasks run, search over GraphQL."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.importers import parse_locomo_time
from memories.models import EndUser, Message, Session, Summary

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
SAMPLE = "conv-26"
SESSIONS = 4


@pytest.fixture
def sample() -> dict:
    if not LOCOMO.exists():
        pytest.fail(f"{LOCOMO} is missing: the shared data folder must sit beside the repository.")
    return next(s for s in json.loads(LOCOMO.read_text()) if s["sample_id"] == SAMPLE)


@pytest.fixture
def imported(sample, django_capture_on_commit_callbacks) -> StringIO:
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_conversations", str(LOCOMO), samples=[SAMPLE], max_sessions=SESSIONS, stdout=out)
    return out


def _turns(sample: dict) -> list[dict]:
    conversation = sample["conversation"]
    return [t for n in range(1, SESSIONS + 1) for t in conversation[f"session_{n}"]]


def test_import_maps_samples_sessions_and_turns(sample, imported):
    conversation = sample["conversation"]
    user = EndUser.objects.get(external_id=SAMPLE)
    assert list(user.sessions.order_by("first_message_at").values_list("external_id", flat=True)) == [
        f"session_{n}" for n in range(1, SESSIONS + 1)
    ]
    turns = _turns(sample)
    assert Message.objects.filter(user=user).count() == len(turns)
    first = Message.objects.get(user=user, external_id="D1:1")
    assert first.created_at == parse_locomo_time(conversation["session_1_date_time"])
    assert first.role == "user"
    assert first.metadata["speaker"] == conversation["speaker_a"]
    reply = Message.objects.get(user=user, external_id="D1:2")
    assert reply.role == "assistant"
    assert reply.metadata["speaker"] == conversation["speaker_b"]
    photo_turn = next(t for t in turns if t.get("blip_caption"))
    with_photo = Message.objects.get(user=user, external_id=photo_turn["dia_id"])
    assert with_photo.metadata["image_caption"] == photo_turn["blip_caption"]
    assert photo_turn["blip_caption"] in with_photo.embedding_text
    # Every turn embedded; every session but the last summarised (the last one waits to be idle).
    assert not Message.objects.filter(user=user, embedding__isnull=True).exists()
    assert Summary.objects.filter(user=user).count() == SESSIONS - 1


def test_import_twice_stores_nothing_twice(sample, imported, django_capture_on_commit_callbacks):
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_conversations", str(LOCOMO), samples=[SAMPLE], max_sessions=SESSIONS, stdout=out)
    assert f"0 messages stored, {len(_turns(sample))} already there" in out.getvalue()
    assert Session.objects.count() == SESSIONS
    assert Message.objects.count() == len(_turns(sample))


def test_import_rejects_a_file_that_is_not_locomo(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(CommandError, match="JSON list of samples"):
        call_command("import_conversations", str(bad))


def test_search_retrieves_the_evidence_of_single_hop_questions(sample, imported, search):
    texts = {t["dia_id"]: t["text"] for t in _turns(sample)}
    questions = [
        q for q in sample["qa"] if q["category"] == 4 and q["evidence"] and all(e in texts for e in q["evidence"])
    ]
    assert len(questions) >= 10
    found = 0
    for question in questions:
        result = search(
            userId=SAMPLE, query=question["question"], searchContent=True, topK=5, includeRetrievedData=True
        )
        found += any(texts[e] in result["retrievedData"] for e in question["evidence"])
    # Measured 0.70 on all single-hop questions of the dev file (evidence in retrievedData, top 5).
    assert found / len(questions) >= 0.6, f"{found}/{len(questions)}"
