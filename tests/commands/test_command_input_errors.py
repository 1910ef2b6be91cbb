"""Bad input to ``import_conversations`` and ``create_api_key``: a clear error, a non-zero exit, nothing stored."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.models import ApiKey, Message

pytestmark = pytest.mark.django_db


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    """A LoCoMo file of one sample, ``conv-1``, with one session of one turn."""
    path = tmp_path / "locomo.json"
    conversation = {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Osaka."}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
    }
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation}]))
    return path


def test_import_of_a_sample_not_in_the_file_fails_naming_it(locomo_file):
    with pytest.raises(CommandError, match="conv-99"):
        call_command("import_conversations", str(locomo_file), samples=["conv-1", "conv-99"], stdout=StringIO())
    assert not Message.objects.exists()


@pytest.mark.parametrize("max_sessions", [0, -3])
def test_import_refuses_max_sessions_under_one(max_sessions, locomo_file):
    with pytest.raises(CommandError, match="--max-sessions"):
        call_command("import_conversations", str(locomo_file), max_sessions=max_sessions, stdout=StringIO())
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["x" * 201, "--all-users"], "at most 200 characters"),
        (["bot", "--user", "a" * 256], "at most 255 characters"),
    ],
)
def test_create_api_key_refuses_what_its_columns_cannot_hold(arguments, error):
    with pytest.raises(CommandError, match=error):
        call_command("create_api_key", *arguments, stdout=StringIO(), stderr=StringIO())
    assert not ApiKey.objects.exists()
