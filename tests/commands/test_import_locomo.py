"""End to end on real conversations: import part of LoCoMo, let the tasks run, search over GraphQL."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.importers import parse_locomo_time
from memories.models import EndUser, Message, Session, Summary
from tests.ops.live import ROOT, database_url, environment

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"
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
    # The command ends with the worker's backlog (its tasks ran only after it, here).
    assert f"Backlog: {len(turns)} messages wait for a vector, {SESSIONS} sessions for a summary" in imported.getvalue()
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


def _one_sample(tmp_path: Path, conversation: dict) -> Path:
    path = tmp_path / "one.json"
    path.write_text(
        json.dumps([{"sample_id": "odd", "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", **conversation}}])
    )
    return path


def test_import_takes_a_photo_without_words_and_skips_empty_turns_and_sessions(
    tmp_path, django_capture_on_commit_callbacks
):
    path = _one_sample(
        tmp_path,
        {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "blip_caption": "a dog on a beach", "img_url": ["u"]},
                {"speaker": "Bo", "dia_id": "D1:2", "text": ""},
                {"speaker": "Bo", "dia_id": "D1:3", "text": "What a lovely dog!"},
            ],
            "session_2": [],
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_conversations", str(path), stdout=StringIO())
    photo = Message.objects.get(external_id="D1:1")
    assert photo.content == "(shared a photo)"
    assert "a dog on a beach" in photo.embedding_text
    assert list(Message.objects.order_by("external_id").values_list("external_id", flat=True)) == ["D1:1", "D1:3"]
    assert list(Session.objects.values_list("external_id", flat=True)) == ["session_1"]


def test_import_names_a_session_without_its_date_and_time(tmp_path):
    path = _one_sample(tmp_path, {"session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi."}]})
    with pytest.raises(CommandError, match="odd, session_1: no session_1_date_time"):
        call_command("import_conversations", str(path))


def test_search_retrieves_the_evidence_of_single_hop_questions(sample, imported, search):
    texts = {t["dia_id"]: t["text"] for t in _turns(sample)}
    questions = [
        q for q in sample["qa"] if q["category"] == 4 and q["evidence"] and all(e in texts for e in q["evidence"])
    ]
    assert len(questions) >= 10
    found = 0
    for question in questions:
        result = search(userId=SAMPLE, query=question["question"], topK=5, includeRetrievedData=True)
        found += any(texts[e] in result["retrievedData"] for e in question["evidence"])
    # Most single-hop questions find their evidence turn in the top 5 hits (bench/retrieval.py scores it all).
    assert found / len(questions) >= 0.6, f"{found}/{len(questions)}"


@pytest.mark.django_db(transaction=True)
def test_the_progress_bar_is_not_drowned_by_a_line_per_queued_task(sample):
    """Run as an operator runs it: tasks queued for a worker (not run in-process), at LOG_LEVEL=INFO."""
    env = environment(DATABASE_URL=database_url(), LOG_LEVEL="INFO")
    done = subprocess.run(
        [sys.executable, "manage.py", "import_conversations", str(LOCOMO), "--samples", SAMPLE, "--max-sessions", "3"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "3 sessions imported" in done.stdout
    assert "sessions: 100%" in done.stderr
    assert all(line.startswith("sessions:") for line in done.stderr.split("\n") if line), done.stderr[-3000:]
