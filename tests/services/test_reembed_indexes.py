"""``manage.py reembed`` replaces the vector columns: every index of the table is there afterwards, and
only the indexes that use a replaced column (``embedding``, ``embedding_model``) are rebuilt."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import override_settings

pytestmark = pytest.mark.django_db


def _indexes(table: str) -> dict[str, tuple[int, str]]:
    """The table's indexes: name -> (oid, definition)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.oid, pg_get_indexdef(c.oid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = %s::regclass",
            [table],
        )
        return {name: (oid, definition) for name, oid, definition in cursor.fetchall()}


def test_reembed_keeps_every_index_and_rebuilds_only_those_on_replaced_columns(add_messages, fake_openai):
    add_messages("alice", "s1", [{"role": "user", "content": "I play the cello."}])
    with connection.cursor() as cursor:
        # The test's transaction still holds the insert's deferred foreign-key checks, which block DDL.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # An operator's own indexes: one on a replaced column, one on a column whose name merely contains "embedding".
        cursor.execute("CREATE INDEX ops_by_model ON memories_message (id) WHERE embedding_model <> ''")
        cursor.execute("ALTER TABLE memories_message ADD COLUMN embedding_note text")
        cursor.execute("CREATE INDEX ops_noted ON memories_message (id) WHERE embedding_note IS NOT NULL")
    before = _indexes("memories_message")

    new_model = {
        "EMBEDDING_BACKEND": "openai",
        "OPENAI_API_KEY": "test",
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_MAX_RETRIES": 0,
        "EMBEDDING_MODEL": "fake-embedding-64",
        "EMBEDDING_DIMENSIONS": 64,
        "OPENAI_EMBEDDING_DIMENSIONS": 64,
    }
    with override_settings(**new_model):
        call_command("reembed", stdout=StringIO())
    after = _indexes("memories_message")

    assert {name: definition for name, (_, definition) in after.items()} == {
        name: definition for name, (_, definition) in before.items()
    }
    rebuilt = {name for name in before if after[name][0] != before[name][0]}
    assert rebuilt == {"message_embedding_hnsw", "message_unembedded", "ops_by_model"}
