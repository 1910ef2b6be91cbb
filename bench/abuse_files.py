"""Hostile import files for the abuse benchmark (``bench.abuse``), and the stored rows over an API limit.

Each export document (``docs/export.md``) holds one user with one session and one message, plus
whatever is hostile in it; the LoCoMo file (``import_conversations``) holds one sample whose turn
is nested past any recursion limit.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["HOSTILE_EXPORTS", "deep_locomo", "over_limit_rows", "write_export"]

_TIME = "2024-05-01T09:00:00+00:00"


def _deep(depth: int) -> str:
    """A JSON value nested ``depth`` lists deep, as text (never built as a Python object)."""
    return "[" * depth + "]" * depth


def _message(content: str = "hello", metadata: str = "{}") -> str:
    fields = {
        "session": "s1",
        "external_id": "m1",
        "role": "user",
        "content": content,
        "channel": "",
        "created_at": _TIME,
        "received_at": _TIME,
        "dialogue_act": "statement",
    }
    return json.dumps(fields)[:-1] + f', "metadata": {metadata}}}'


def _document(user: str, *, message: str, knowledge: str = "", diaries: str = "") -> str:
    head = {"format": "memory-export", "version": 1, "exported_at": _TIME, "user": {"id": user, "created_at": _TIME}}
    session = {
        "id": "s1",
        "channel": "",
        "first_message_at": _TIME,
        "last_message_at": _TIME,
        "created_at": _TIME,
        "updated_at": _TIME,
    }
    return (
        json.dumps(head)[:-1]
        + f', "sessions": [{json.dumps(session)}], "messages": [{message}], "summaries": [],'
        + f' "knowledge": [{knowledge}], "diaries": [{diaries}], "entities": []}}'
    )


def _fact(content: str) -> str:
    return json.dumps(
        {
            "content": content,
            "status": "active",
            "slot": "",
            "confidence": None,
            "said_at": None,
            "needs_review": False,
            "reviewed": True,
            "replaces": None,
            "superseded_by": None,
            "source_session": None,
            "created_at": _TIME,
            "updated_at": _TIME,
            "source_messages": [],
            "history": [],
        }
    )


def _diary(content: str) -> str:
    return json.dumps(
        {"date": "2024-05-01", "content": content, "metadata": {}, "created_at": _TIME, "updated_at": _TIME}
    )


# name -> (what it holds, the document's text given the user id)
HOSTILE_EXPORTS = {
    "long message": (
        "a message of 1,000,000 characters (limit 32,000)",
        lambda user: _document(user, message=_message(content="spam " * 200_000)),
    ),
    "large metadata": (
        "1 MB of metadata (limit 16 KiB)",
        lambda user: _document(user, message=_message(metadata=json.dumps({"blob": "x" * 1_000_000}))),
    ),
    "long fact and diary": (
        "a fact of 10,000 and a diary entry of 100,000 characters (limits 4,000 and 32,000)",
        lambda user: _document(user, message=_message(), knowledge=_fact("f" * 10_000), diaries=_diary("d" * 100_000)),
    ),
    "metadata 1,000 deep": (
        "metadata nested 1,000 levels",
        lambda user: _document(user, message=_message(metadata='{"a": ' + _deep(1_000) + "}")),
    ),
    "metadata 100,000 deep": (
        "metadata nested 100,000 levels",
        lambda user: _document(user, message=_message(metadata='{"a": ' + _deep(100_000) + "}")),
    ),
}


def write_export(path: Path, name: str, user: str) -> Path:
    """Write the hostile export ``name`` (a key of ``HOSTILE_EXPORTS``) for ``user`` to ``path``."""
    path.write_text(HOSTILE_EXPORTS[name][1](user))
    return path


def deep_locomo(path: Path, depth: int = 100_000) -> Path:
    """A LoCoMo file of one sample whose one turn carries a caption nested ``depth`` levels."""
    turn = '{"speaker": "A", "dia_id": "D1:1", "text": "hi", "blip_caption": ' + _deep(depth) + "}"
    conversation = (
        '{"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023", '
        f'"session_1": [{turn}]}}'
    )
    path.write_text(f'[{{"sample_id": "deep", "conversation": {conversation}}}]')
    return path


def over_limit_rows() -> int:
    """Stored rows over a limit the API applies: text longer than its ``MAX_*_CHARS``, metadata over
    ``MAX_METADATA_BYTES`` (counted on the database Django is connected to)."""
    from django.conf import settings
    from django.db import connection

    checks = [
        ("memories_message", "char_length(content) > %s", settings.MAX_MESSAGE_CHARS),
        ("memories_message", "octet_length(metadata::text) > %s", settings.MAX_METADATA_BYTES),
        ("memories_knowledge", "char_length(content) > %s", settings.MAX_KNOWLEDGE_CHARS),
        ("memories_diary", "char_length(content) > %s", settings.MAX_DIARY_CHARS),
        ("memories_diary", "octet_length(metadata::text) > %s", settings.MAX_METADATA_BYTES),
    ]
    total = 0
    with connection.cursor() as cursor:
        for table, condition, limit in checks:
            cursor.execute(f"SELECT count(*) FROM {table} WHERE {condition}", [limit])
            total += cursor.fetchone()[0]
    return total
