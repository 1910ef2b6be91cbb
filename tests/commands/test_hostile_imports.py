"""``import_user`` and ``import_conversations`` apply the API's rules: a file holding what the API would
refuse (too long, too large, nested too deep, a time out of range) imports nothing, at any depth."""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories.models import EndUser, Message

pytestmark = pytest.mark.django_db


def _import(path) -> None:
    call_command("import_user", str(path), stdout=StringIO(), stderr=StringIO())


def _with(change: Callable[[dict], None]) -> Callable[[dict], dict]:
    def edit(document: dict) -> dict:
        change(document)
        return document

    return edit


CASES = {
    "a message over MAX_MESSAGE_CHARS": (
        _with(lambda d: d["messages"][0].update(content="x" * 101)),
        "messages.0.content: is longer than 100 characters (MAX_MESSAGE_CHARS).",
    ),
    "metadata over MAX_METADATA_BYTES": (
        _with(lambda d: d["messages"][0].update(metadata={"blob": "x" * 200})),
        "messages.0.metadata: is larger than 100 bytes as JSON (MAX_METADATA_BYTES).",
    ),
    "metadata nested past MAX_METADATA_DEPTH": (
        _with(lambda d: d["messages"][0].update(metadata={"a": [[[[[]]]]]})),  # 6 levels
        "messages.0.metadata: is nested deeper than 5 levels (MAX_METADATA_DEPTH).",
    ),
    "a fact over MAX_KNOWLEDGE_CHARS": (
        _with(lambda d: d["knowledge"][0].update(content="f" * 101)),
        "knowledge.0.content: is longer than 100 characters (MAX_KNOWLEDGE_CHARS).",
    ),
    "a diary entry over MAX_DIARY_CHARS": (
        _with(lambda d: d["diaries"][0].update(content="d" * 101)),
        "diaries.0.content: is longer than 100 characters (MAX_DIARY_CHARS).",
    ),
    "a time out of range once in UTC": (
        _with(lambda d: d["messages"][0].update(created_at="0001-01-01T00:00:00+05:00")),
        "messages.0.created_at is out of range once in UTC",
    ),
}


@pytest.mark.parametrize(("edit", "message"), CASES.values(), ids=CASES.keys())
def test_an_import_refuses_what_the_api_refuses_and_stores_nothing(
    edit, message, alice_memory, exported, settings, tmp_path
):
    document = exported()
    document["user"]["id"] = "newcomer"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(edit(document)))
    settings.MAX_MESSAGE_CHARS = settings.MAX_KNOWLEDGE_CHARS = settings.MAX_DIARY_CHARS = 100
    settings.MAX_METADATA_BYTES, settings.MAX_METADATA_DEPTH = 100, 5

    with pytest.raises(CommandError, match="nothing imported") as refused:
        _import(path)
    assert message in str(refused.value)
    assert not EndUser.objects.filter(external_id="newcomer").exists()


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_metadata_of_any_depth_is_refused_without_recursion(depth, alice_memory, exported, tmp_path):
    document = exported()
    document["user"]["id"] = "newcomer"
    text = json.dumps(document).replace(
        '"metadata": {"mood": 1.5}', '"metadata": {"a": ' + "[" * depth + "]" * depth + "}"
    )
    assert text != json.dumps(document)
    path = tmp_path / "deep.json"
    path.write_text(text)

    with pytest.raises(CommandError, match="nested deeper than the export format allows"):
        _import(path)
    assert not EndUser.objects.filter(external_id="newcomer").exists()


def test_a_locomo_file_nested_past_any_limit_is_refused(tmp_path):
    path = tmp_path / "deep.json"
    turn = '{"speaker": "A", "dia_id": "D1:1", "text": "hi", "blip_caption": ' + "[" * 100_000 + "]" * 100_000 + "}"
    conversation = f'{{"speaker_a": "A", "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [{turn}]}}'
    path.write_text(f'[{{"sample_id": "deep", "conversation": {conversation}}}]')

    with pytest.raises(CommandError, match="nested too deeply"):
        call_command("import_conversations", str(path), stdout=StringIO(), stderr=StringIO())
    assert not Message.objects.exists()
