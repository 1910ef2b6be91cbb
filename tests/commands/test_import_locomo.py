"""End to end on real conversations: import part of LoCoMo, let the tasks run, search over GraphQL."""

from __future__ import annotations

import io
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


# --- importing real, imperfect files ---------------------------------------------------------

PHOTO = "data:image/jpeg;base64," + "A" * 16_000


def _locomo(tmp_path, samples: list) -> str:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(samples))
    return str(path)


def _sample(sample_id: str, **sessions: object) -> dict:
    return {"sample_id": sample_id, "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", **sessions}}


def _import(path: str, django_capture_on_commit_callbacks) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_conversations", path, stdout=out, stderr=err, verbosity=0)
    return out.getvalue(), err.getvalue()


def test_an_inline_photo_and_bad_turns_and_sessions_never_abort_an_import(tmp_path, django_capture_on_commit_callbacks):
    date = "1:56 pm on 8 May, 2023"
    path = _locomo(
        tmp_path,
        [
            _sample(
                "conv-1",
                session_1_date_time=date,
                session_1=[
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "Look!", "img_url": [PHOTO], "blip_caption": "a dog"},
                    {"speaker": "Bo", "dia_id": "D1:2", "text": "Cute."},
                ],
                session_2_date_time=date,
                session_2=[
                    {"speaker": "Ann", "dia_id": "D2:1", "text": "Long caption.", "blip_caption": "x" * 20_000},
                    {"speaker": "Ann", "text": "No dia_id."},
                    "not a turn",
                    {"speaker": "Bo", "dia_id": "D2:4", "text": "Nul \u0000 inside."},
                ],
                session_3=[{"speaker": "Ann", "dia_id": "D3:1", "text": "No date."}],
                session_4_date_time=date,
                session_4=[{"speaker": "Ann", "dia_id": "D4:1", "text": "Fine."}],
            ),
            {"sample_id": "conv-2"},
            _sample(
                "conv-3", session_1_date_time=date, session_1=[{"speaker": "Bo", "dia_id": "x" * 300, "text": "Hi"}]
            ),
        ],
    )
    out, err = _import(path, django_capture_on_commit_callbacks)

    photo = Message.objects.get(external_id="D1:1")
    assert photo.metadata == {"speaker": "Ann", "dia_id": "D1:1", "image_caption": "a dog"}
    assert "a dog" in photo.embedding_text
    long_caption = Message.objects.get(external_id="D2:1")
    assert len(json.dumps(long_caption.metadata)) <= 16384
    assert Message.objects.get(external_id="D2:4").content == "Nul  inside."
    assert sorted(Message.objects.values_list("external_id", flat=True)) == ["D1:1", "D1:2", "D2:1", "D2:4", "D4:1"]
    assert "warning: conv-1, session_1, turn 1: img_url: an inline data: URL" in err
    assert "warning: conv-1, session_2, turn 1: blip_caption cut" in err
    assert "warning: conv-1, session_2, turn 2: dropped" in err
    assert "warning: conv-1, session_2, turn 3: dropped" in err
    assert "warning: conv-1, session_2, turn 4: text: characters PostgreSQL cannot store" in err
    assert "skipped: conv-1, session_3: no session_3_date_time" in err
    assert "skipped: sample #2: no 'conversation'" in err
    assert "skipped: conv-3, session_1: external_id must be at most 255 characters." in err
    assert "Traceback" not in out + err
    assert "1 users, 3 sessions imported: 5 messages stored, 0 already there; 3 skipped, 5 warnings." in out


def test_an_import_fails_only_when_nothing_could_be_read(tmp_path, django_capture_on_commit_callbacks):
    path = _locomo(tmp_path, [_sample("conv-1", session_1=[{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi."}])])
    with pytest.raises(CommandError, match="Nothing could be imported.*conv-1, session_1: no session_1_date_time"):
        _import(path, django_capture_on_commit_callbacks)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'[{"sample_id": "conv-1"', "Expecting"),
        (b"\xff\xfe[]", "utf-8"),
        (b'{"not": "a list"}', "JSON list of samples"),
    ],
    ids=["truncated-json", "not-utf-8", "not-a-list"],
)
def test_an_unreadable_file_is_a_command_error_not_a_traceback(tmp_path, content, says):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(CommandError, match=says):
        call_command("import_conversations", str(path))


@pytest.mark.parametrize("where", ["missing", "directory"])
def test_a_path_that_is_not_a_file_is_a_command_error(tmp_path, where):
    path = tmp_path / "nothing.json" if where == "missing" else tmp_path
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_conversations", str(path))


@pytest.mark.django_db(transaction=True)
def test_import_with_wait_follows_the_worker_until_every_message_is_embedded(monkeypatch, hashing_embedder):
    """``--wait``: the import then shows the worker's progress over what it stored (messages/s, time left) and
    ends once the worker has embedded and read every message."""
    import threading

    from django.db import connection
    from django_q.conf import Conf

    from memories.services.reading import messages_embed_claimed

    monkeypatch.setattr(Conf, "SYNC", False)  # the tasks wait in the queue for the worker below

    def worker() -> None:
        try:
            while not Message.objects.exists():
                threading.Event().wait(0.1)
            threading.Event().wait(1.5)  # the import has finished and is waiting
            messages_embed_claimed(ids=list(Message.objects.values_list("pk", flat=True)))
        finally:
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    out = StringIO()
    call_command("import_conversations", str(LOCOMO), samples=[SAMPLE], max_sessions=1, wait=True, stdout=out)
    thread.join(60)
    count = Message.objects.count()
    assert f"The worker has embedded and read all {count} messages." in out.getvalue()
    assert not Message.objects.filter(embedding__isnull=True).exists()
